#[derive(mrtr::FormChoice, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum Env {
    Staging,
    Prod,
}

#[derive(mrtr::Form, serde::Deserialize)]
struct Deploy {
    #[form(default = "prod")]
    env: Env,
}

fn main() {}
