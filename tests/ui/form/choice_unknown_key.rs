#[derive(mrtr::FormChoice, serde::Deserialize)]
enum Env {
    #[form(description = "The staging cluster")]
    Staging,
    Prod,
}

fn main() {}
