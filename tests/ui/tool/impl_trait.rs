#[mrtr::tool]
async fn tag(labels: impl IntoIterator<Item = String>) -> String {
    let _ = ask!(confirm("Tag?"));
    labels.into_iter().collect()
}

#[mrtr::tool]
async fn describe(service: String) -> impl std::fmt::Display {
    let _ = ask!(confirm("Describe?"));
    service
}

fn main() {}
