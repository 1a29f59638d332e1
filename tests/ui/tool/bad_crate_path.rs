// `crate` names where the `mrtr` facade is, as a string holding a path.
#[mrtr::tool(crate = facade)]
async fn unquoted() -> String {
    String::new()
}

#[mrtr::tool(crate = "not a path", crate = "::mrtr")]
async fn not_a_path() -> String {
    String::new()
}

fn main() {}
