//! Category 9 (issue 33): borrowed `match`/`if let` whose arm suspends, and loops over
//! reference-typed bindings.
//!
//! - A binding of a borrowed scrutinee (`if let Some(v) = &x`, `match &x`, `x.as_deref()`,
//!   `x.as_ref()`, `map.get(..)`) is matched again from its owner where it is needed, never
//!   carried apart from it: dead at the suspension, nothing extra is kept; live across it,
//!   the owner is kept and the binding borrows from it again after resuming.

use std::collections::HashMap;

use serde_json::json;

use super::support::{Script, check};

// ---------------------------------------------------------------------------------------
// Class 1: a borrowed `match`/`if let` with a suspension inside an arm.

ready! {
    everyday! {
        async fn keep_nickname(nickname: Option<String>) -> Result<String, String> {
            if let Some(current) = &nickname {
                let len = current.chars().count();
                let keep = ask!(confirm(format!("Keep your {len}-letter nickname?"))).ok().unwrap_or(true);
                return Ok(format!("keep={keep}"));
            }
            Ok("no nickname".to_string())
        }
    }

    #[tokio::test]
    async fn if_let_on_a_borrow_suspends_in_its_arm() {
        let nick = || Some("Zoë".to_string());
        let scripts = [
            Script::accept("keep").confirm(true),
            Script::accept("drop").confirm(false),
            Script::accept("declined").decline_at(0),
        ];
        let runs = check(&keep_nickname::keep_nickname, json!({"nickname": "Zoë"}), || keep_nickname::plain(nick()), &scripts).await;
        assert_eq!(runs[0].ok(), "keep=true");
        assert_eq!(runs[1].ok(), "keep=false");
        assert_eq!(runs[2].ok(), "keep=true");
        let none = check(&keep_nickname::keep_nickname, json!({"nickname": null}), || keep_nickname::plain(None), &[Script::accept("none")]).await;
        assert_eq!(none[0].ok(), "no nickname");
    }
}

ready! {
    everyday! {
        async fn rename_owner(owner: String) -> Result<String, String> {
            let mut lookup: Option<String> = None;
            if !owner.is_empty() {
                lookup = Some(owner.to_uppercase());
            }
            let said = match &lookup {
                Some(upper) if upper.len() > 2 => {
                    // `upper` is used after the suspension: the owner is kept, not the borrow.
                    let new = ask!(text(format!("Rename {upper}?"))).accepted().map_err(|e| e.to_string())?;
                    format!("{upper} -> {new}")
                }
                Some(short) => format!("short {short}"),
                None => {
                    let why = ask!(text("Why no owner?")).accepted().map_err(|e| e.to_string())?;
                    format!("none: {why}")
                }
            };
            Ok(format!("{said}; lookup={lookup:?}"))
        }
    }

    #[tokio::test]
    async fn match_on_a_borrow_keeps_the_owner_for_a_live_binding() {
        let scripts = [
            Script::accept("renamed").texts(["bob"]),
            Script::accept("other").texts(["carol"]),
            Script::accept("cancelled").cancel_at(0),
        ];
        let runs = check(&rename_owner::rename_owner, json!({"owner": "alice"}), || rename_owner::plain("alice".into()), &scripts).await;
        assert_eq!(runs[0].ok(), "ALICE -> bob; lookup=Some(\"ALICE\")");
        assert_eq!(runs[1].ok(), "ALICE -> carol; lookup=Some(\"ALICE\")");
        assert_eq!(runs[2].err(), "the user cancelled");
        let short = check(&rename_owner::rename_owner, json!({"owner": "al"}), || rename_owner::plain("al".into()), &[Script::accept("short")]).await;
        assert_eq!(short[0].ok(), "short AL; lookup=Some(\"AL\")");
        let none = check(&rename_owner::rename_owner, json!({"owner": ""}), || rename_owner::plain(String::new()), &[Script::accept("none").texts(["gone"])]).await;
        assert_eq!(none[0].ok(), "none: gone; lookup=None");
    }
}

ready! {
    everyday! {
        async fn greet_title(title: Option<String>, name: String) -> Result<String, String> {
            let mut out = Vec::new();
            match title.as_deref() {
                Some("Dr") => {
                    let field = ask!(text(format!("Dr {name}, which field?"))).accepted().map_err(|e| e.to_string())?;
                    out.push(format!("Dr {name} of {field}"));
                }
                Some(other) => {
                    let short = other.trim().to_lowercase();
                    let ok = ask!(confirm(format!("Call you {short}?"))).accepted().map_err(|e| e.to_string())?;
                    out.push(format!("{other}/{short}/{ok}"));
                }
                None => out.push(name.clone()),
            }
            if let Some(t) = title.as_ref() {
                let n = t.len();
                let again = ask!(confirm(format!("Title of {n} letters, right?"))).ok().unwrap_or(false);
                out.push(format!("{t}:{again}"));
            }
            Ok(out.join(" | "))
        }
    }

    #[tokio::test]
    async fn as_deref_and_as_ref_arms_suspend() {
        let scripts = [
            Script::accept("yes").texts(["optics"]).confirm(true),
            Script::accept("no").texts(["optics"]).confirm(false),
            Script::accept("declined").decline_at(0),
        ];
        let dr = || Some("Dr".to_string());
        let runs = check(&greet_title::greet_title, json!({"title": "Dr", "name": "Ada"}), || greet_title::plain(dr(), "Ada".into()), &scripts).await;
        assert_eq!(runs[0].ok(), "Dr Ada of optics | Dr:true");
        assert_eq!(runs[1].ok(), "Dr Ada of optics | Dr:false");
        assert_eq!(runs[2].err(), "the user declined");
        let ms = || Some(" Ms ".to_string());
        let runs = check(&greet_title::greet_title, json!({"title": " Ms ", "name": "Ada"}), || greet_title::plain(ms(), "Ada".into()), &scripts).await;
        assert_eq!(runs[0].ok(), " Ms /ms/true |  Ms :true");
        assert_eq!(runs[1].ok(), " Ms /ms/false |  Ms :false");
        let none = check(&greet_title::greet_title, json!({"title": null, "name": "Ada"}), || greet_title::plain(None, "Ada".into()), &[Script::accept("none")]).await;
        assert_eq!(none[0].ok(), "Ada");
    }
}

ready! {
    everyday! {
        async fn set_limits(user: String) -> Result<String, String> {
            let mut limits: HashMap<String, u32> = HashMap::new();
            limits.insert("ada".to_string(), 3);
            limits.insert("bob".to_string(), 10);
            let mut report = String::new();
            if let Some(limit) = limits.get(&user) {
                // `limit` is live across both suspensions: `limits` (and `user`) are kept.
                let raise = ask!(confirm(format!("Raise {user}'s limit of {limit}?"))).ok().unwrap_or(false);
                let note = ask!(text(format!("Note for {limit}?"))).ok().unwrap_or_default();
                report = format!("{user}: {limit} raise={raise} note={note}");
            }
            if let Some(found) = limits.get("bob") {
                let bonus = ask!(text("Bonus for bob?")).ok().unwrap_or_default();
                report.push_str(&format!("; bob {} + {bonus}", found + 1));
            }
            Ok(report)
        }
    }

    #[tokio::test]
    async fn map_get_binding_is_looked_up_again_after_resuming() {
        let scripts = [
            Script::accept("raise").confirm(true).texts(["-", "busy", "5"]),
            Script::accept("keep").confirm(false).texts(["-", "", "0"]),
            Script::accept("declined").decline_at(0),
            Script::accept("cancelled").cancel_at(2),
        ];
        let runs = check(&set_limits::set_limits, json!({"user": "ada"}), || set_limits::plain("ada".into()), &scripts).await;
        assert_eq!(runs[0].ok(), "ada: 3 raise=true note=busy; bob 11 + 5");
        assert_eq!(runs[1].ok(), "ada: 3 raise=false note=; bob 11 + 0");
        let other = check(&set_limits::set_limits, json!({"user": "eve"}), || set_limits::plain("eve".into()), &[Script::accept("eve").texts(["2"])]).await;
        assert_eq!(other[0].ok(), "; bob 11 + 2");
    }
}

ready! {
    everyday! {
        async fn nested_labels(labels: Vec<Option<String>>) -> Result<String, String> {
            let mut kept = Vec::new();
            let first = labels.first().cloned().flatten();
            if let Some(label) = &first {
                if let Some(tail) = label.strip_prefix("x-") {
                    let ok = ask!(confirm(format!("Keep {tail} (from {label})?"))).ok().unwrap_or(false);
                    if ok {
                        kept.push(tail.to_string());
                    }
                }
                kept.push(format!("{}", label.len()));
            }
            Ok(kept.join(","))
        }
    }

    #[tokio::test]
    async fn nested_borrowed_if_lets_are_matched_again_in_order() {
        let labels = || vec![Some("x-red".to_string()), None];
        let scripts = [
            Script::accept("yes").confirm(true),
            Script::accept("no").confirm(false),
            Script::accept("declined").decline_at(0),
        ];
        let runs = check(&nested_labels::nested_labels, json!({"labels": ["x-red", null]}), || nested_labels::plain(labels()), &scripts).await;
        assert_eq!(runs[0].ok(), "red,5");
        assert_eq!(runs[1].ok(), "5");
        assert_eq!(runs[2].ok(), "5");
    }
}

// ---------------------------------------------------------------------------------------
// Class 4: loops over reference-typed bindings, and the rewrites the refusals advise.

#[derive(Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Team {
    pub name: String,
    pub roles: Vec<String>,
}

ready! {
    everyday! {
        async fn staff_roles(team: Team) -> Result<String, String> {
            let roles = &team.roles;
            let mut filled = Vec::new();
            for role in roles {
                let who = ask!(text(format!("Who is {role} of {}?", team.name))).ok().unwrap_or_default();
                filled.push(format!("{role}={who}"));
            }
            Ok(filled.join(","))
        }
    }

    #[tokio::test]
    async fn loop_over_a_reference_typed_binding_is_a_snapshot_loop() {
        let team = || Team { name: "core".into(), roles: vec!["lead".into(), "scribe".into()] };
        let scripts = [
            Script::accept("named").texts(["ada", "bob"]),
            Script::accept("declined").decline_at(1),
        ];
        let runs = check(&staff_roles::staff_roles, json!({"team": {"name": "core", "roles": ["lead", "scribe"]}}), || staff_roles::plain(team()), &scripts).await;
        assert_eq!(runs[0].ok(), "lead=ada,scribe=bob");
        assert_eq!(runs[1].ok(), "lead=ok,scribe=");
    }
}

ready! {
    everyday! {
        async fn tag_item(tags: Option<Vec<String>>) -> Result<String, String> {
            let mut tags = tags;
            let list = tags.get_or_insert_with(Vec::new);
            list.push("new".to_string());
            let extra = ask!(text("Another tag?")).ok().unwrap_or_default();
            // The refusal's rewrite: take the `&mut` again after the suspension.
            let list = tags.get_or_insert_with(Vec::new);
            list.push(extra);
            let last = ask!(text("Last tag?")).ok().unwrap_or_default();
            Ok(format!("{:?} {}", tags, last.to_uppercase()))
        }
    }

    #[tokio::test]
    async fn a_mut_reference_taken_again_after_the_suspension() {
        let scripts = [
            Script::accept("tagged").texts(["red", "blue"]),
            Script::accept("declined").decline_at(0),
        ];
        let runs = check(&tag_item::tag_item, json!({"tags": ["a"]}), || tag_item::plain(Some(vec!["a".into()])), &scripts).await;
        assert_eq!(runs[0].ok(), "Some([\"a\", \"new\", \"red\"]) BLUE");
    }
}
