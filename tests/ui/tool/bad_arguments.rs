#[mrtr::tool(nmae = "deploy", compat = 3)]
async fn deploy<T>(service: &str, (a, b): (u8, u8)) -> String {
    let _ = (service, a, b);
    String::new()
}

fn main() {}

#[mrtr::tool]
#[inline]
async fn inlined() -> String {
    String::new()
}
