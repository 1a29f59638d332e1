#[derive(serde::Deserialize)]
struct Address {
    street: String,
}

#[derive(mrtr::Form, serde::Deserialize)]
struct Order {
    #[serde(flatten)]
    address: Address,
}

fn main() {}
