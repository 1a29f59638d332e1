#[derive(mrtr::FormChoice, serde::Deserialize)]
#[serde(tag = "kind")]
enum Env {
    Staging,
    Prod,
}

fn main() {}
