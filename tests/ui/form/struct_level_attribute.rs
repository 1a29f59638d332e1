#[derive(mrtr::Form, serde::Deserialize)]
#[form(title = "Confirm")]
struct Confirm {
    apply: bool,
}

fn main() {}
