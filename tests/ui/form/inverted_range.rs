#[derive(mrtr::Form, serde::Deserialize)]
struct Rating {
    #[form(minimum = 5, maximum = 1)]
    stars: u8,
    #[form(min_length = 10, max_length = 2)]
    note: String,
}

fn main() {}
