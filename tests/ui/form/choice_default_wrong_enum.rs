#[derive(mrtr::FormChoice, serde::Deserialize)]
enum Env {
    Staging,
    Prod,
}

#[derive(mrtr::FormChoice, serde::Deserialize)]
enum Region {
    Eu,
}

#[derive(mrtr::Form, serde::Deserialize)]
struct Deploy {
    #[form(default = Region::Eu)]
    env: Env,
}

fn main() {}
