#[derive(mrtr::FormChoice, serde::Deserialize)]
enum Env {
    Staging,
    Custom(String),
    Named { name: String },
}

fn main() {}
