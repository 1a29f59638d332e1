// An unknown round policy names the ones there are; a repeated one is refused.
#[mrtr::tool(replay = "exactly_once")]
async fn order() -> String {
    String::new()
}

#[mrtr::tool(replay = "at_most_once", replay = "unprotected")]
async fn pay() -> String {
    String::new()
}

fn main() {}
