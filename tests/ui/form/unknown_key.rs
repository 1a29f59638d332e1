#[derive(mrtr::Form, serde::Deserialize)]
struct Confirm {
    #[form(placeholder = "Why?")]
    reason: String,
}

fn main() {}
