// `rounds` and `mrtr_rounds`, the old names of `replay` and `task_after`, still work for
// one release, with a deprecation warning at the old key (denied here, so it shows).
#![deny(deprecated)]

#[mrtr::tool(rounds = "unprotected", task = "optional", mrtr_rounds = 1)]
async fn lookup() -> String {
    String::new()
}

fn main() {}
