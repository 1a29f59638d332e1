use std::collections::BTreeMap;

#[mrtr::tool]
async fn owner(team: BTreeMap<String, String>, nickname: Option<String>) -> String {
    let name = nickname.as_deref().unwrap_or("anonymous");
    if let Some(lead) = team.get("lead") {
        let _ = ask!(confirm("Notify the lead?"));
        return format!("{lead} {name}");
    }
    match &nickname {
        Some(nick) => {
            let _ = ask!(confirm("Use the nickname?"));
            nick.clone()
        }
        None => String::new(),
    }
}

fn main() {}
