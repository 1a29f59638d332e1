//! A deploy wizard: pick an environment, confirm (the question depends on the pick), then
//! type a version until it is a valid `MAJOR.MINOR.PATCH`.

use mrtr::machine::{Elicited, ToolError};

/// Checks a version string the way release tooling does: three dot-separated numbers,
/// no leading zeros, optionally a `-pre` suffix of letters, digits and dots.
///
/// ```ignore
/// assert_eq!(check_version("v1.4.2"), Ok("1.4.2".to_string()));
/// ```
pub fn check_version(text: &str) -> Result<String, String> {
    let text = text.trim();
    let text = text.strip_prefix('v').unwrap_or(text);
    let (core, pre) = match text.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (text, None),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts.len() != 3 {
        return Err(format!(
            "expected three numbers like 1.4.2, found {} part(s)",
            parts.len()
        ));
    }
    for (part, name) in parts.iter().zip(["major", "minor", "patch"]) {
        if part.is_empty() || !part.chars().all(|c| c.is_ascii_digit()) {
            return Err(format!("the {name} number `{part}` is not a number"));
        }
        if part.len() > 1 && part.starts_with('0') {
            return Err(format!("the {name} number `{part}` has a leading zero"));
        }
    }
    if let Some(pre) = pre
        && (pre.is_empty() || !pre.chars().all(|c| c.is_ascii_alphanumeric() || c == '.'))
    {
        return Err(format!(
            "the pre-release tag `{pre}` may hold only letters, digits and dots"
        ));
    }
    Ok(text.to_string())
}

/// Deploy a service: choose the environment, confirm, and give the version to ship.
#[mrtr::tool]
pub async fn deploy_wizard(
    /// The service to deploy, e.g. "api".
    service: String,
) -> Result<String, ToolError> {
    let env = ask!(
        key = "environment",
        choice(
            format!("Where should {service} go?"),
            ["staging", "production"]
        )
    )
    .accepted()?;
    let question = if env == "production" {
        format!("Deploy {service} to PRODUCTION? Live users will be affected.")
    } else {
        format!("Deploy {service} to {env}? Nobody outside the team will see it.")
    };
    match ask!(key = "confirm", confirm(question)) {
        Elicited::Accept(true) => {}
        _ => return Ok(format!("Deployment of {service} to {env} called off.")),
    }
    let mut question = format!("Which version of {service}? (MAJOR.MINOR.PATCH, e.g. 1.4.2)");
    let mut attempts = 0u32;
    let version = loop {
        let typed = ask!(key = "version", text(question.clone())).accepted()?;
        attempts += 1;
        match check_version(&typed) {
            Ok(version) => break version,
            Err(problem) => {
                question = format!(
                    "`{typed}` is not a version: {problem}. Try again (MAJOR.MINOR.PATCH)."
                );
            }
        }
    };
    Ok(format!(
        "Deploying {service} {version} to {env} ({attempts} version attempt(s))."
    ))
}
