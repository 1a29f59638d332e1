#[derive(mrtr::FormChoice, serde::Deserialize)]
struct Env {
    name: String,
}

fn main() {}
