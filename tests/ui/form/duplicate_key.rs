#[derive(mrtr::Form, serde::Deserialize)]
struct Confirm {
    #[form(title = "Apply")]
    #[form(title = "Apply now")]
    apply: bool,
}

fn main() {}
