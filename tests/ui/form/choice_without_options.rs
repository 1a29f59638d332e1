#[derive(mrtr::FormChoice, serde::Deserialize)]
enum Never {}

fn main() {}
