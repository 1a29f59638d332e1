#[derive(mrtr::Form, serde::Deserialize)]
struct Pick<T> {
    value: T,
}

fn main() {}
