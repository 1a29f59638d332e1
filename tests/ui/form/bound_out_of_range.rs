#[derive(mrtr::Form, serde::Deserialize)]
struct Rating {
    #[form(maximum = 300)]
    stars: u8,
    #[form(minimum = -1)]
    count: u32,
    #[form(max_length = -5)]
    note: String,
}

fn main() {}
