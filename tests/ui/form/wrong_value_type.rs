#[derive(mrtr::Form, serde::Deserialize)]
struct Confirm {
    #[form(max_length = "200", title = Some("Reason"))]
    reason: String,
}

fn main() {}
