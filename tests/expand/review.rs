/// Reviews files with a shared audit log: app state, a loop over borrowed items with a
/// borrow derived from the item, and a string literal kept across suspensions.
#[mrtr::tool]
async fn review(audit: State<Audit>, files: Vec<String>, strict: bool) -> String {
    let mode = if strict { "strict" } else { "lenient" };
    let mut kept = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let name = file.trim();
        if ask!(confirm(format!("Keep {name} ({i}, {mode})?"))).ok().unwrap_or(false) {
            kept.push(name.to_string());
        }
    }
    audit.record(mode, &kept);
    kept.join(",")
}
