//! Category 7: deferred initialization in a brace-less match arm, suspensions after a pure
//! prefix (`base * 2 + ask!(..)`, `totals[i] += ask!(..)`), and a parameter named like
//! the tool.

use mrtr::machine::ToolError;
use serde_json::json;

use super::support::{Pick, Script, check};

ready! {
    "waiting (7, issue item 5): deferred initialization in a brace-less match arm gives E0381";
    everyday! {
        #[allow(clippy::needless_late_init)]
        async fn provision_bucket(cloud: String, name: String) -> Result<String, ToolError> {
            let region;
            match cloud.as_str() {
                "aws" => region = ask!(choice("Which AWS region?", ["us-east-1", "eu-west-1"])).accepted()?,
                "gcp" => region = ask!(choice("Which GCP region?", ["us-central1", "europe-west1"])).accepted()?,
                _ => region = String::from("local"),
            }
            let public = ask!(confirm(format!("Make {name} public?"))).accepted()?;
            Ok(format!("{name} in {cloud}/{region}, public: {public}"))
        }
    }

    #[tokio::test]
    async fn provision_bucket_brace_less_arm() {
        let scripts = [
            Script::accept("first"),
            Script::accept("last, private").pick(Pick::Last).confirm(false),
            Script::accept("declined region").decline_at(0),
        ];
        let mut outputs = Vec::new();
        for cloud in ["aws", "gcp", "azure"] {
            let runs = check(
                &provision_bucket::provision_bucket,
                json!({"cloud": cloud, "name": "logs"}),
                || provision_bucket::plain(cloud.into(), "logs".into()),
                &scripts,
            )
            .await;
            outputs.push(runs);
        }
        assert_eq!(outputs[0][0].ok(), "logs in aws/us-east-1, public: true");
        assert_eq!(outputs[1][1].ok(), "logs in gcp/europe-west1, public: false");
        assert_eq!(outputs[0][2].err(), "the user declined");
        assert_eq!(outputs[2][0].ok(), "logs in azure/local, public: true");
        assert_eq!(outputs[2][0].rounds, 1);
    }
}

ready! {
    "waiting (7, issue item 5 + a related E0381): brace-less arm assignments; and `notify`, declared before a suspension and assigned in an `if` with a suspension after it";
    everyday! {
        #[allow(clippy::needless_late_init)]
        async fn schedule_maintenance(window: String, hours: u32) -> Result<String, ToolError> {
            let start: String;
            let notify: bool;
            match window.as_str() {
                "tonight" => start = "22:00".to_string(),
                "weekend" => start = ask!(choice("Which day?", ["Saturday 06:00", "Sunday 06:00"])).accepted()?,
                "custom" => start = ask!(text("Start (HH:MM)?")).accepted()?.trim().to_string(),
                other => return Err(ToolError::new(format!("unknown window `{other}`"))),
            }
            if hours > 2 {
                notify = ask!(confirm(format!("{hours}h from {start}: notify customers?"))).accepted()?;
            } else {
                notify = false;
            }
            Ok(format!("maintenance at {start} for {hours}h (notify: {notify})"))
        }
    }

    #[tokio::test]
    async fn schedule_maintenance_brace_less_arms() {
        let scripts = [
            Script::accept("accept").texts(["03:30 "]),
            Script::accept("sunday, no").pick(Pick::Last).confirm(false).texts(["04:00"]),
            Script::accept("cancel").cancel_at(0),
        ];
        let mut all = Vec::new();
        for (window, hours) in [("tonight", 1), ("weekend", 4), ("custom", 3), ("someday", 1)] {
            all.push(
                check(
                    &schedule_maintenance::schedule_maintenance,
                    json!({"window": window, "hours": hours}),
                    || schedule_maintenance::plain(window.into(), hours),
                    &scripts,
                )
                .await,
            );
        }
        assert_eq!(all[0][0].ok(), "maintenance at 22:00 for 1h (notify: false)");
        assert_eq!(all[0][0].rounds, 0);
        assert_eq!(all[1][1].ok(), "maintenance at Sunday 06:00 for 4h (notify: false)");
        assert_eq!(all[2][0].ok(), "maintenance at 03:30 for 3h (notify: true)");
        assert_eq!(all[2][0].asked[1], "3h from 03:30: notify customers?");
        assert_eq!(all[2][2].err(), "the user cancelled");
        assert_eq!(all[3][0].err(), "unknown window `someday`");
    }
}

ready! {
    "waiting (7, issue item 6): a suspension after the pure prefix `base * 2 + ..` is refused";
    everyday! {
        async fn estimate(story_points: u32, reviewers: u32) -> Result<String, ToolError> {
            let base = story_points * 3;
            let hours = base * 2 + ask!(text("Extra hours for QA?")).accepted()?.trim().parse::<u32>()?;
            let review = reviewers * (1 + ask!(text("Review rounds?")).accepted()?.trim().parse::<u32>()?);
            Ok(format!("{hours}h of work + {review}h of review"))
        }
    }

    #[tokio::test]
    async fn estimate_pure_prefix() {
        let scripts = [
            Script::accept("numbers").texts(["4", " 2"]),
            Script::accept("not a number").texts(["four"]),
            Script::accept("declined").decline_at(1).texts(["0"]),
        ];
        let runs = check(
            &estimate::estimate,
            json!({"story_points": 5, "reviewers": 2}),
            || estimate::plain(5, 2),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "34h of work + 6h of review");
        assert_eq!(runs[1].err(), "invalid digit found in string");
        assert_eq!(runs[2].err(), "the user declined");
    }
}

ready! {
    "waiting (7, issue item 6): `totals[i] += ask!(..)` is refused";
    everyday! {
        async fn timesheet(people: Vec<String>, days: u32) -> Result<String, ToolError> {
            let mut totals = vec![0u32; people.len()];
            for day in 1..=days {
                for i in 0..people.len() {
                    totals[i] += ask!(text(format!("Hours for {} on day {day}?", people[i])))
                        .accepted()?
                        .trim()
                        .parse::<u32>()?;
                }
            }
            let lines: Vec<String> = people
                .iter()
                .zip(&totals)
                .map(|(person, total)| format!("{person}: {total}h"))
                .collect();
            Ok(lines.join(", "))
        }
    }

    #[tokio::test]
    async fn timesheet_compound_assignment() {
        let people = vec!["ana".to_string(), "ben".to_string(), "cy".to_string()];
        let scripts = [
            Script::accept("rotating").texts(["8", "6", "7", "4"]),
            Script::accept("bad number").texts(["8", "eight"]),
            Script::accept("cancel").cancel_at(4).texts(["1"]),
        ];
        let runs = check(
            &timesheet::timesheet,
            json!({"people": people, "days": 2}),
            || timesheet::plain(people.clone(), 2),
            &scripts,
        )
        .await;
        // Answers in order: ana 8, ben 6, cy 7, ana 4, ben 8, cy 6.
        assert_eq!(runs[0].ok(), "ana: 12h, ben: 14h, cy: 13h");
        assert_eq!(runs[0].asked[4], "Hours for ben on day 2?");
        assert_eq!(runs[1].err(), "invalid digit found in string");
        assert_eq!(runs[2].err(), "the user cancelled");
    }
}

ready! {
    "7: a literal prefix (`100 * ask!(..)`) in a compound assignment, compiles today";
    everyday! {
        async fn checkout(subtotal_cents: u64, member: bool) -> Result<String, ToolError> {
            let mut total = subtotal_cents;
            if member {
                total -= subtotal_cents / 10;
            }
            let tip_percent = ask!(choice("Add a tip?", ["0", "10", "15"])).accepted()?;
            total += subtotal_cents * tip_percent.parse::<u64>()? / 100;
            total -= 100 * ask!(text("Voucher value in whole dollars?")).accepted()?.trim().parse::<u64>()?;
            Ok(format!("charge {total} cents"))
        }
    }

    #[tokio::test]
    async fn checkout_compound_subtraction() {
        let scripts = [
            Script::accept("no tip").texts(["0"]),
            Script::accept("15% tip, $5 voucher").pick(Pick::Last).texts(["5"]),
            Script::accept("declined voucher").decline_at(1),
        ];
        let runs = check(
            &checkout::checkout,
            json!({"subtotal_cents": 10_000, "member": true}),
            || checkout::plain(10_000, true),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "charge 9000 cents");
        assert_eq!(runs[1].ok(), "charge 10000 cents");
        assert_eq!(runs[2].err(), "the user declined");
    }
}

pub fn catalog() -> Vec<String> {
    [
        "rust book",
        "rust in action",
        "rustic bread",
        "trust me",
        "python crash course",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

ready! {
    "waiting (7, issue item 7): a parameter named like the tool collides with the generated unit struct";
    everyday! {
        async fn search(search: String, limit: Option<u32>) -> Result<String, ToolError> {
            let query = search.trim().to_lowercase();
            let hits: Vec<String> = catalog().into_iter().filter(|title| title.contains(&query)).collect();
            let limit = limit.unwrap_or(2) as usize;
            if hits.len() <= limit {
                return Ok(format!("{search}: {}", hits.join(" | ")));
            }
            let narrowed = ask!(choice(
                format!("{} results for `{search}`; which one?", hits.len()),
                hits.clone()
            ))
            .accepted()?;
            Ok(format!("{search}: {narrowed}"))
        }
    }

    #[tokio::test]
    async fn search_parameter_named_like_the_tool() {
        let scripts = [Script::accept("first"), Script::accept("last").pick(Pick::Last)];
        let runs = check(
            &search::search,
            json!({"search": "Rust"}),
            || search::plain("Rust".into(), None),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "Rust: rust book");
        assert_eq!(runs[0].asked, ["4 results for `Rust`; which one?"]);
        assert_eq!(runs[1].ok(), "Rust: trust me");
        let runs = check(
            &search::search,
            json!({"search": "python", "limit": 3}),
            || search::plain("python".into(), Some(3)),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "python: python crash course");
        assert_eq!(runs[0].rounds, 0);
    }
}

ready! {
    "waiting (7, issue item 7): a parameter named like the tool collides with the generated unit struct";
    everyday! {
        async fn label(label: Vec<String>, issue: u32) -> Result<String, ToolError> {
            let mut applied = Vec::new();
            for name in label {
                let name = name.trim().to_lowercase();
                if name.starts_with("prio") {
                    let ok = ask!(confirm(format!("Set {name} on #{issue}? It pages the on-call."))).accepted()?;
                    if !ok {
                        continue;
                    }
                }
                applied.push(name);
            }
            let note = ask!(text(format!("Comment for #{issue}?"))).ok().unwrap_or_default();
            Ok(format!("#{issue}: [{}] {note}", applied.join(", ")))
        }
    }

    #[tokio::test]
    async fn label_parameter_named_like_the_tool() {
        let labels = vec!["Bug".to_string(), "prio-1".to_string(), "UI".to_string()];
        let scripts = [
            Script::accept("all").texts(["triaged"]),
            Script::accept("no paging").confirm(false).decline_at(1),
        ];
        let runs = check(
            &label::label,
            json!({"label": labels, "issue": 12}),
            || label::plain(labels.clone(), 12),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "#12: [bug, prio-1, ui] triaged");
        assert_eq!(runs[1].ok(), "#12: [bug, ui] ");
    }
}
