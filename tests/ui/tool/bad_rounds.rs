// An unknown round policy names the ones there are; a repeated one is refused.
#[mrtr::tool(rounds = "exactly_once")]
async fn order() -> String {
    String::new()
}

#[mrtr::tool(rounds = "at_most_once", rounds = "unprotected")]
async fn pay() -> String {
    String::new()
}

fn main() {}
