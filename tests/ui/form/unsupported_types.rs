use std::collections::HashMap;

#[derive(mrtr::Form, serde::Deserialize)]
struct Settings {
    name: String,
    tags: Vec<String>,
    labels: HashMap<String, String>,
    size: (u32, u32),
    extra: serde_json::Value,
    maybe: Option<Option<bool>>,
}

fn main() {
    // The form still implements `Form`: no follow-on error here.
    let _ = <Settings as mrtr::form::Form>::requested_schema;
}
