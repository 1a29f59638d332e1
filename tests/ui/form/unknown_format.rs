#[derive(mrtr::Form, serde::Deserialize)]
struct Contact {
    #[form(format = "phone")]
    phone: String,
}

fn main() {}
