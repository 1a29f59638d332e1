#[derive(mrtr::Form, serde::Deserialize)]
struct Confirm;

fn main() {}
