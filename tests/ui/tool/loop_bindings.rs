#[mrtr::tool]
async fn rename(files: Vec<String>) -> String {
    let mut out = String::new();
    for mut file in files.iter().cloned().collect::<Vec<_>>().iter() {
        let _ = ask!(confirm("Rename?"));
        out.push_str(file);
        file = &out;
        let _ = file;
    }
    out
}

#[mrtr::tool]
async fn bump(mut versions: Vec<u32>) -> Vec<u32> {
    for version in versions.iter_mut() {
        if ask!(confirm("Bump?")).ok().unwrap_or(false) {
            *version += 1;
        }
    }
    versions
}

fn main() {}
