#[derive(mrtr::Form, serde::Deserialize)]
struct Signup {
    #[form(format = "email")]
    age: u8,
}

fn main() {}
