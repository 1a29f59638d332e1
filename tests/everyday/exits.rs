//! Category 8 (issue 33): exits the attribute cannot see, and early exits after a
//! suspension.
//!
//! - A `return Err(..)` or `?` produced by another macro's expansion (`anyhow::bail!`,
//!   `anyhow::ensure!`, a user's `macro_rules!`) ends the tool with that value, before and
//!   after a suspension, in loops and branches, with `anyhow` and `thiserror` errors.
//! - A `return`/`continue`/`break` after a suspension does not fall through: a local used
//!   only on the other path (not storable, or large) is not kept across the suspension.

use std::num::ParseIntError;

use mrtr::machine::NotAccepted;
use serde_json::json;

use super::support::{Script, check, pick};

// ---------------------------------------------------------------------------------------
// Class 1: `return` and `?` from another macro's expansion.

/// The author's own early exit: `return Err(..)` the attribute never sees.
macro_rules! refuse {
    ($error:expr) => {
        return Err($error)
    };
}

/// A `?` inside the author's own macro.
macro_rules! number {
    ($text:expr) => {
        $text.trim().parse::<u32>()?
    };
}

#[derive(Debug, thiserror::Error)]
pub enum QuotaError {
    #[error("over quota by {0}")]
    Over(u32),
    #[error("not a number: {0}")]
    Parse(#[from] ParseIntError),
    #[error("aborted: {0}")]
    Aborted(#[from] NotAccepted),
}

ready! {
    everyday! {
        async fn take_amount(limit: u32) -> anyhow::Result<String> {
            if limit == 0 {
                anyhow::bail!("the limit must be positive");
            }
            let text = ask!(text(format!("How many (at most {limit})?"))).accepted()?;
            let n: u32 = text.trim().parse()?;
            if n > limit {
                anyhow::bail!("{n} is over the limit of {limit}");
            }
            anyhow::ensure!(n.is_multiple_of(2), "{n} is odd");
            let sure = ask!(confirm(format!("Take {n}?"))).accepted()?;
            anyhow::ensure!(sure, "not taken");
            Ok(format!("took {n} of {limit}"))
        }
    }

    #[tokio::test]
    async fn take_amount_bails_through_anyhow() {
        let scripts = [
            Script::accept("even").texts(["4"]),
            Script::accept("odd").texts(["3"]),
            Script::accept("too many").texts(["12"]),
            Script::accept("not a number").texts(["four"]),
            Script::accept("not sure").texts(["2"]).confirm(false),
            Script::accept("declined").decline_at(0),
        ];
        let runs = check(&take_amount::take_amount, json!({"limit": 10}), || take_amount::plain(10), &scripts).await;
        assert_eq!(runs[0].ok(), "took 4 of 10");
        assert_eq!(runs[1].err(), "3 is odd");
        assert_eq!(runs[2].err(), "12 is over the limit of 10");
        assert_eq!(runs[3].err(), "invalid digit found in string");
        assert_eq!(runs[4].err(), "not taken");
        assert_eq!(runs[5].err(), "the user declined");

        let zero = check(&take_amount::take_amount, json!({"limit": 0}), || take_amount::plain(0), &[Script::accept("zero")]).await;
        assert_eq!(zero[0].err(), "the limit must be positive");
        assert_eq!(zero[0].rounds, 0);
    }
}

ready! {
    everyday! {
        async fn rename_all(names: Vec<String>) -> anyhow::Result<String> {
            anyhow::ensure!(!names.is_empty(), "nothing to rename");
            let mut renamed = Vec::new();
            for name in names {
                anyhow::ensure!(!name.is_empty(), "an empty name after {}", renamed.len());
                let new = ask!(text(format!("New name for {name}?"))).accepted()?;
                if new == name {
                    anyhow::bail!("{name} is unchanged");
                }
                renamed.push(new);
            }
            Ok(renamed.join(","))
        }
    }

    #[tokio::test]
    async fn rename_all_ensures_in_a_loop() {
        let names = || vec!["a".to_string(), "b".to_string(), String::new(), "c".to_string()];
        let scripts = [
            Script::accept("renamed").texts(["x", "y"]),
            Script::accept("unchanged").texts(["x", "b"]),
            Script::accept("cancelled").cancel_at(1),
        ];
        let runs = check(&rename_all::rename_all, json!({"names": names()}), || rename_all::plain(names()), &scripts).await;
        assert_eq!(runs[0].err(), "an empty name after 2");
        assert_eq!(runs[1].err(), "b is unchanged");
        assert_eq!(runs[2].err(), "the user cancelled");

        let two = || vec!["a".to_string(), "b".to_string()];
        let ok = check(&rename_all::rename_all, json!({"names": two()}), || rename_all::plain(two()), &[Script::accept("ok").texts(["x", "y"])]).await;
        assert_eq!(ok[0].ok(), "x,y");
        let none = check(&rename_all::rename_all, json!({"names": []}), || rename_all::plain(Vec::new()), &[Script::accept("none")]).await;
        assert_eq!(none[0].err(), "nothing to rename");
    }
}

ready! {
    everyday! {
        async fn fill_quota(quota: u32) -> Result<String, QuotaError> {
            if quota > 1000 {
                refuse!(QuotaError::Over(quota - 1000));
            }
            let mut total = 0u32;
            let mut round = 0u32;
            loop {
                round += 1;
                let text = ask!(text(format!("Amount {round}?"))).accepted()?;
                let amount = number!(text);
                total += amount;
                if total > quota {
                    refuse!(QuotaError::Over(total - quota));
                }
                if amount == 0 || round == 3 {
                    break;
                }
            }
            Ok(format!("total {total} of {quota} in {round} rounds"))
        }
    }

    #[tokio::test]
    async fn fill_quota_returns_from_user_macros() {
        let scripts = [
            Script::accept("three").texts(["1", "2", "3"]),
            Script::accept("stop").texts(["4", "0"]),
            Script::accept("over").texts(["6", "5"]),
            Script::accept("garbage").texts(["1", "lots"]),
            Script::accept("declined").texts(["1"]).decline_at(1),
        ];
        let runs = check(&fill_quota::fill_quota, json!({"quota": 10}), || fill_quota::plain(10), &scripts).await;
        assert_eq!(runs[0].ok(), "total 6 of 10 in 3 rounds");
        assert_eq!(runs[1].ok(), "total 4 of 10 in 2 rounds");
        assert_eq!(runs[2].err(), "over quota by 1");
        assert_eq!(runs[3].err(), "not a number: invalid digit found in string");
        assert_eq!(runs[4].err(), "aborted: the user declined");

        let huge = check(&fill_quota::fill_quota, json!({"quota": 1500}), || fill_quota::plain(1500), &[Script::accept("huge")]).await;
        assert_eq!(huge[0].err(), "over quota by 500");
        assert_eq!(huge[0].rounds, 0);
    }
}

ready! {
    everyday! {
        async fn pick_size(sizes: Vec<String>) -> Result<String, QuotaError> {
            let size = ask!(choice("Which size?", ["1", "2", "x"])).accepted()?;
            let doubled = format!("{}", number!(size) * 2);
            let all = vec![number!(doubled), sizes.len() as u32];
            match all.as_slice() {
                [first, ..] if *first > 2 => refuse!(QuotaError::Over(*first - 2)),
                _ => {}
            }
            Ok(format!("{all:?}"))
        }
    }

    #[tokio::test]
    async fn pick_size_with_a_question_mark_in_a_macro_in_a_macro() {
        let sizes = || vec!["s".to_string()];
        let scripts = [
            Script::accept("one"),
            Script::accept("two").when("Which size", pick("2")),
            Script::accept("x").when("Which size", pick("x")),
        ];
        let runs = check(&pick_size::pick_size, json!({"sizes": sizes()}), || pick_size::plain(sizes()), &scripts).await;
        assert_eq!(runs[0].ok(), "[2, 1]");
        assert_eq!(runs[1].err(), "over quota by 2");
        assert_eq!(runs[2].err(), "not a number: invalid digit found in string");
    }
}

// ---------------------------------------------------------------------------------------
// Class 2: an early exit after a suspension keeps nothing of the other path.

ready! {
    everyday! {
        async fn quick_or_asked(quick: bool) -> Result<String, NotAccepted> {
            let started = std::time::Instant::now();
            if !quick {
                let answer = ask!(text("Answer?")).accepted()?;
                return Ok(answer);
            }
            let took = started.elapsed();
            Ok(format!("quick: {}", took.as_secs() < 60))
        }
    }

    #[tokio::test]
    async fn quick_or_asked_returns_after_the_question() {
        let scripts = [Script::accept("asked").texts(["hello"]), Script::accept("declined").decline_at(0)];
        let runs = check(&quick_or_asked::quick_or_asked, json!({"quick": false}), || quick_or_asked::plain(false), &scripts).await;
        assert_eq!(runs[0].ok(), "hello");
        assert_eq!(runs[1].err(), "the user declined");
        let quick = check(&quick_or_asked::quick_or_asked, json!({"quick": true}), || quick_or_asked::plain(true), &[Script::accept("quick")]).await;
        assert_eq!(quick[0].ok(), "quick: true");
    }
}

ready! {
    everyday! {
        async fn review_lines(lines: Vec<String>) -> Result<String, NotAccepted> {
            let mut kept = Vec::new();
            for line in lines {
                let clock = std::time::Instant::now();
                if line.starts_with('?') {
                    let keep = ask!(confirm(format!("Keep `{line}`?"))).accepted()?;
                    if keep {
                        kept.push(line);
                    }
                    continue;
                }
                let fast = clock.elapsed().as_secs() < 60;
                kept.push(format!("{line} (fast={fast})"));
            }
            Ok(kept.join("; "))
        }
    }

    #[tokio::test]
    async fn review_lines_continues_after_the_question() {
        let lines = || vec!["a".to_string(), "?b".to_string(), "c".to_string(), "?d".to_string()];
        let scripts = [Script::accept("all"), Script::accept("none").confirm(false), Script::accept("cancel").cancel_at(1)];
        let runs = check(&review_lines::review_lines, json!({"lines": lines()}), || review_lines::plain(lines()), &scripts).await;
        assert_eq!(runs[0].ok(), "a (fast=true); ?b; c (fast=true); ?d");
        assert_eq!(runs[1].ok(), "a (fast=true); c (fast=true)");
        assert_eq!(runs[2].err(), "the user cancelled");
    }
}

ready! {
    everyday! {
        async fn first_flagged(count: u32) -> Result<String, NotAccepted> {
            let mut index = 0u32;
            let note = loop {
                // 100 KB, used only when the item is not flagged: never sealed.
                let padding = "x".repeat(100_000);
                index += 1;
                if index.is_multiple_of(3) {
                    let note = ask!(text(format!("Note for item {index}?"))).accepted()?;
                    break note;
                }
                if index >= count {
                    break format!("none flagged ({} bytes of padding)", padding.len());
                }
            };
            Ok(format!("{index}: {note}"))
        }
    }

    #[tokio::test]
    async fn first_flagged_breaks_after_the_question() {
        let scripts = [Script::accept("noted").texts(["ship it"]), Script::accept("declined").decline_at(0)];
        let runs = check(&first_flagged::first_flagged, json!({"count": 5}), || first_flagged::plain(5), &scripts).await;
        assert_eq!(runs[0].ok(), "3: ship it");
        assert_eq!(runs[1].err(), "the user declined");
        let short = check(&first_flagged::first_flagged, json!({"count": 2}), || first_flagged::plain(2), &[Script::accept("short")]).await;
        assert_eq!(short[0].ok(), "2: none flagged (100000 bytes of padding)");
    }
}
