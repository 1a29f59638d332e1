#[derive(mrtr::Form, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Deploy {
    dry_run: bool,
    #[serde(rename = "dryRun", alias = "dry")]
    dry: bool,
}

fn main() {}
