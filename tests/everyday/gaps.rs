//! Category 11 (issue 33, smaller gaps): a `Result` alias under another name, a `const`
//! as a match scrutinee, a let chain whose body suspends, a struct field initialized
//! shorthand from an argument.

use serde_json::json;

use super::support::{Script, check};

pub type Res<T> = anyhow::Result<T>;

pub const MODE: &str = "strict";

ready! {
    "was waiting (33, Result alias): the attribute chose how a block ends from the return type's name, so under another name (`Res<T>`) a `bail!` did not type-check; it now follows the type";
    everyday! {
        async fn alias_bail(limit: u32) -> Res<String> {
            let text = ask!(text(format!("How many (at most {limit})?"))).accepted()?;
            let n: u32 = text.trim().parse()?;
            if n > limit {
                anyhow::bail!("{n} is over {limit}");
            }
            Ok(format!("took {n}"))
        }
    }

    #[tokio::test]
    async fn a_result_alias_under_another_name_bails() {
        let scripts = [Script::accept("ok").texts(["3"]), Script::accept("over").texts(["30"])];
        let runs = check(&alias_bail::alias_bail, json!({"limit": 10}), || alias_bail::plain(10), &scripts).await;
        assert_eq!(runs[0].ok(), "took 3");
        assert_eq!(runs[1].err(), "30 is over 10");
    }
}

ready! {
    everyday! {
        async fn const_scrutinee(name: String) -> Result<String, String> {
            let out = match MODE {
                "strict" => {
                    let ok = ask!(confirm(format!("Strictly check {name}?"))).ok().unwrap_or(false);
                    format!("strict {ok}")
                }
                other => other.to_string(),
            };
            Ok(out)
        }
    }

    #[tokio::test]
    async fn a_const_as_match_scrutinee() {
        let scripts = [Script::accept("yes").confirm(true), Script::accept("no").confirm(false)];
        let runs = check(&const_scrutinee::const_scrutinee, json!({"name": "a"}), || const_scrutinee::plain("a".into()), &scripts).await;
        assert_eq!(runs[0].ok(), "strict true");
        assert_eq!(runs[1].ok(), "strict false");
    }
}

ready! {
    everyday! {
        async fn chained(nick: Option<String>, strict: bool) -> Result<String, String> {
            if let Some(n) = nick.clone() && strict {
                let keep = ask!(confirm(format!("Keep {n}?"))).ok().unwrap_or(false);
                return Ok(format!("{n}:{keep}"));
            }
            Ok("none".to_string())
        }
    }

    #[tokio::test]
    async fn a_let_chain_whose_body_suspends() {
        let scripts = [Script::accept("yes").confirm(true), Script::accept("no").confirm(false)];
        let runs = check(&chained::chained, json!({"nick": "zo", "strict": true}), || chained::plain(Some("zo".into()), true), &scripts).await;
        assert_eq!(runs[0].ok(), "zo:true");
        assert_eq!(runs[1].ok(), "zo:false");
        let off = check(&chained::chained, json!({"nick": "zo", "strict": false}), || chained::plain(Some("zo".into()), false), &[Script::accept("off")]).await;
        assert_eq!(off[0].ok(), "none");
    }
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Card {
    pub label: String,
    pub hits: u32,
}

ready! {
    everyday! {
        async fn shorthand(label: String, count: u32) -> Result<String, String> {
            let mut card = Card { label, hits: 0 };
            for i in 0..count {
                let hit = ask!(confirm(format!("Hit {i} on {}?", card.label))).ok().unwrap_or(false);
                if hit {
                    card.hits += 1;
                }
            }
            Ok(format!("{} {}", card.label, card.hits))
        }
    }

    #[tokio::test]
    async fn a_shorthand_field_from_an_argument() {
        let scripts = [Script::accept("yes").confirm(true), Script::accept("no").confirm(false)];
        let runs = check(&shorthand::shorthand, json!({"label": "a", "count": 2}), || shorthand::plain("a".into(), 2), &scripts).await;
        assert_eq!(runs[0].ok(), "a 2");
        assert_eq!(runs[1].ok(), "a 0");
    }
}
