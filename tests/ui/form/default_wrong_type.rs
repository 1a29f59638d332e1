#[derive(mrtr::Form, serde::Deserialize)]
struct Confirm {
    #[form(default = "yes")]
    apply: bool,
    #[form(default = 3)]
    reason: String,
    #[form(default = 2.5)]
    count: u8,
}

fn main() {}
