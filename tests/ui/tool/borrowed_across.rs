use std::borrow::Cow;

#[mrtr::tool]
async fn greet(user: String) -> String {
    let name: &str = user.as_str();
    let _ = ask!(confirm("Greet?"));
    name.to_string()
}

#[mrtr::tool]
async fn shout(user: String) -> String {
    let loud: Cow<'_, str> = Cow::Borrowed(user.trim());
    let _ = ask!(confirm("Shout?"));
    loud.to_uppercase()
}

fn main() {}
