#[derive(mrtr::Form, serde::Deserialize)]
enum Env {
    Staging,
    Prod,
}

fn main() {}
