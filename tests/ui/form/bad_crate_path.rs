// A form's container takes only `crate = "..."`, and its value must be a path string.
#[derive(serde::Deserialize, mrtr::Form)]
#[form(crate = "1 + 1")]
struct Size {
    replicas: u8,
}

#[derive(serde::Deserialize, mrtr::FormChoice)]
#[form(crate = 3, title = "Zone")]
enum Zone {
    North,
}

fn main() {}
