#[derive(mrtr::Form, serde::Deserialize)]
struct Rating {
    #[form(minimum = 1, maximum = 5, default = 9)]
    stars: u8,
    #[form(max_length = 3, default = "too long")]
    note: String,
}

fn main() {}
