#[derive(mrtr::Form, serde::Deserialize)]
struct Confirm(bool, String);

fn main() {}
