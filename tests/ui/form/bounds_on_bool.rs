#[derive(mrtr::Form, serde::Deserialize)]
struct Confirm {
    #[form(minimum = 0, max_items = 1)]
    apply: bool,
}

fn main() {}
