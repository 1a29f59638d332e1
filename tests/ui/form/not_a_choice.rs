#[derive(serde::Deserialize)]
struct Address {
    street: String,
}

#[derive(serde::Deserialize)]
enum Color {
    Red,
    Blue,
}

#[derive(mrtr::Form, serde::Deserialize)]
struct Order {
    shipping: Address,
    colors: Vec<Color>,
}

fn main() {}
