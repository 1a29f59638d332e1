#[mrtr::tool]
async fn tag(tags: Option<Vec<String>>) -> String {
    let mut tags = tags;
    let list = tags.get_or_insert_with(Vec::new);
    let extra = ask!(text("Another tag?")).ok().unwrap_or_default();
    list.push(extra);
    format!("{tags:?}")
}

fn main() {}
