//! Category 3: string literals (`&'static str`) kept across a suspension — chosen by an
//! `if` or a `match`, iterated from an array, inside `Option`, `Vec`, tuples, and
//! reassigned between rounds.

use mrtr::machine::{Elicited, ToolError};
use serde_json::json;

use super::support::{Pick, Script, check, pick, yes_no};

ready! {
    "waiting (3, issue item 4): `let env = if prod { \"production\" } else { \"staging\" };` kept across a suspension";
    everyday! {
        async fn deploy_target(service: String, prod: bool) -> Result<String, ToolError> {
            let env = if prod { "production" } else { "staging" };
            let replicas = if prod { 6 } else { 2 };
            let ok = ask!(confirm(format!("Deploy {service} to {env} with {replicas} replicas?"))).accepted()?;
            if !ok {
                return Ok(format!("{service}: {env} deploy called off"));
            }
            let version = ask!(text(format!("Which version of {service} goes to {env}?"))).accepted()?;
            Ok(format!("{service}@{} -> {env} ({replicas} replicas)", version.trim()))
        }
    }

    #[tokio::test]
    async fn deploy_target_literal_from_if() {
        let scripts = [
            Script::accept("go").texts(["2.1.0 "]),
            Script::accept("no").confirm(false),
            Script::accept("declined version").decline_at(1),
        ];
        let prod = check(
            &deploy_target::deploy_target,
            json!({"service": "api", "prod": true}),
            || deploy_target::plain("api".into(), true),
            &scripts,
        )
        .await;
        assert_eq!(prod[0].ok(), "api@2.1.0 -> production (6 replicas)");
        assert_eq!(prod[0].asked[1], "Which version of api goes to production?");
        assert_eq!(prod[1].ok(), "api: production deploy called off");
        assert_eq!(prod[2].err(), "the user declined");
        let staging = check(
            &deploy_target::deploy_target,
            json!({"service": "web", "prod": false}),
            || deploy_target::plain("web".into(), false),
            &scripts,
        )
        .await;
        assert_eq!(staging[0].ok(), "web@2.1.0 -> staging (2 replicas)");
    }
}

ready! {
    "waiting (3, issue item 4): `for area in [\"security\", \"performance\", \"tests\"]` with a suspension in the body";
    everyday! {
        async fn code_review(pr: u32) -> Result<String, ToolError> {
            let mut findings: Vec<String> = Vec::new();
            for area in ["security", "performance", "tests"] {
                let verdict = ask!(choice(format!("PR #{pr}: {area} review?"), ["ok", "concern"])).accepted()?;
                if verdict == "concern" {
                    let note = ask!(text(format!("What is the {area} concern?"))).accepted()?;
                    findings.push(format!("{area}: {note}"));
                }
            }
            if findings.is_empty() {
                return Ok(format!("PR #{pr} approved"));
            }
            Ok(format!("PR #{pr} needs changes: {}", findings.join("; ")))
        }
    }

    #[tokio::test]
    async fn code_review_array_of_literals() {
        let scripts = [
            Script::accept("all ok"),
            Script::accept("concerns").pick(Pick::Last).text_by(|q| {
                format!("see {}", q.trim_start_matches("What is the ").trim_end_matches(" concern?"))
            }),
            Script::accept("perf only").when("performance review", pick("concern")).texts(["N+1 query"]),
            Script::accept("cancel").cancel_at(2),
        ];
        let runs = check(
            &code_review::code_review,
            json!({"pr": 7}),
            || code_review::plain(7),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "PR #7 approved");
        assert_eq!(runs[0].asked, ["PR #7: security review?", "PR #7: performance review?", "PR #7: tests review?"]);
        assert_eq!(
            runs[1].ok(),
            "PR #7 needs changes: security: see security; performance: see performance; tests: see tests"
        );
        assert_eq!(runs[2].ok(), "PR #7 needs changes: performance: N+1 query");
        assert_eq!(runs[3].err(), "the user cancelled");
    }
}

ready! {
    "waiting (3, issue item 4): `Option<&'static str>` kept across a suspension";
    everyday! {
        async fn file_incident(title: String, severity: u8) -> Result<String, ToolError> {
            let pager: Option<&str> = match severity {
                1 => Some("primary on-call"),
                2 => Some("team channel"),
                _ => None,
            };
            let summary = ask!(text(format!("Summary for `{title}`?"))).accepted()?;
            let paged = match pager {
                Some(target) => ask!(confirm(format!("Page the {target}?"))).accepted()?,
                None => false,
            };
            Ok(match (pager, paged) {
                (Some(target), true) => format!("SEV{severity} `{title}`: {summary}; paged the {target}"),
                (Some(target), false) => format!("SEV{severity} `{title}`: {summary}; the {target} was not paged"),
                (None, _) => format!("SEV{severity} `{title}`: {summary}"),
            })
        }
    }

    #[tokio::test]
    async fn file_incident_optional_literal() {
        let scripts = [
            Script::accept("page").texts(["checkout down"]),
            Script::accept("do not page").texts(["slow"]).confirm(false),
            Script::accept("cancel").cancel_at(1),
        ];
        let mut all = Vec::new();
        for severity in [1u8, 2, 3] {
            all.push(
                check(
                    &file_incident::file_incident,
                    json!({"title": "payments", "severity": severity}),
                    || file_incident::plain("payments".into(), severity),
                    &scripts,
                )
                .await,
            );
        }
        assert_eq!(all[0][0].ok(), "SEV1 `payments`: checkout down; paged the primary on-call");
        assert_eq!(all[1][1].ok(), "SEV2 `payments`: slow; the team channel was not paged");
        assert_eq!(all[1][1].asked[1], "Page the team channel?");
        assert_eq!(all[2][0].ok(), "SEV3 `payments`: checkout down");
        assert_eq!(all[2][0].rounds, 1);
        assert_eq!(all[0][2].err(), "the user cancelled");
    }
}

ready! {
    "waiting (3, issue item 4): a `Vec<&'static str>` of literals kept across suspensions";
    everyday! {
        async fn ci_pipeline(repo: String, release: bool) -> Result<String, ToolError> {
            let mut stages = vec!["lint", "build", "unit tests"];
            if ask!(confirm(format!("Run the integration tests for {repo}?"))).accepted()? {
                stages.push("integration tests");
            }
            if release {
                stages.push("publish");
                if !ask!(confirm("Sign the artifacts? (publishing needs signed artifacts)")).accepted()? {
                    stages.retain(|stage| *stage != "publish");
                }
            }
            let extra = ask!(choice(format!("{} stages planned. Add one?", stages.len()), ["none", "benchmarks", "fuzzing"]))
                .accepted()?;
            match extra.as_str() {
                "benchmarks" => stages.push("benchmarks"),
                "fuzzing" => stages.push("fuzzing"),
                _ => {}
            }
            Ok(format!("{repo}: {}", stages.join(" -> ")))
        }
    }

    #[tokio::test]
    async fn ci_pipeline_vec_of_literals() {
        let scripts = [
            Script::accept("everything").pick(Pick::Last),
            Script::accept("minimal").confirm(false),
            Script::accept("declined").decline_at(1),
        ];
        let release = check(
            &ci_pipeline::ci_pipeline,
            json!({"repo": "mrtr", "release": true}),
            || ci_pipeline::plain("mrtr".into(), true),
            &scripts,
        )
        .await;
        assert_eq!(
            release[0].ok(),
            "mrtr: lint -> build -> unit tests -> integration tests -> publish -> fuzzing"
        );
        assert_eq!(release[0].asked[2], "5 stages planned. Add one?");
        assert_eq!(release[1].ok(), "mrtr: lint -> build -> unit tests");
        assert_eq!(release[2].err(), "the user declined");
        let plain = check(
            &ci_pipeline::ci_pipeline,
            json!({"repo": "docs", "release": false}),
            || ci_pipeline::plain("docs".into(), false),
            &scripts,
        )
        .await;
        assert_eq!(plain[0].ok(), "docs: lint -> build -> unit tests -> integration tests -> fuzzing");
        assert_eq!(plain[1].ok(), "docs: lint -> build -> unit tests");
        assert_eq!(plain[2].err(), "the user declined");
    }
}

ready! {
    "waiting (3, issue item 4): literals returned by `match` arms kept across suspensions";
    everyday! {
        async fn triage_bug(title: String, reports: u32) -> Result<String, ToolError> {
            let severity = match reports {
                0..=2 => "low",
                3..=9 => "medium",
                _ => "high",
            };
            let team = ask!(choice(
                format!("`{title}` ({severity}, {reports} reports): which team?"),
                ["web", "mobile", "backend"]
            ))
            .accepted()?;
            let label = match team.as_str() {
                "web" => "area/web",
                "mobile" => "area/mobile",
                _ => "area/backend",
            };
            let assignee = ask!(text(format!("Assignee for the {severity} {label} bug?"))).accepted()?;
            Ok(format!("{title}: {severity}, {label}, @{}", assignee.trim_start_matches('@')))
        }
    }

    #[tokio::test]
    async fn triage_bug_literals_from_match() {
        let scripts = [
            Script::accept("web").texts(["@dee"]),
            Script::accept("backend").pick(Pick::Last).texts(["eli"]),
            Script::accept("cancel").cancel_at(1),
        ];
        let runs = check(
            &triage_bug::triage_bug,
            json!({"title": "login loop", "reports": 12}),
            || triage_bug::plain("login loop".into(), 12),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "login loop: high, area/web, @dee");
        assert_eq!(runs[1].ok(), "login loop: high, area/backend, @eli");
        assert_eq!(runs[1].asked[1], "Assignee for the high area/backend bug?");
        assert_eq!(runs[2].err(), "the user cancelled");
        let low = check(
            &triage_bug::triage_bug,
            json!({"title": "typo", "reports": 1}),
            || triage_bug::plain("typo".into(), 1),
            &scripts[..1],
        )
        .await;
        assert_eq!(low[0].ok(), "typo: low, area/web, @dee");
    }
}

ready! {
    "waiting (3, issue item 4): a literal reassigned between rounds and a tuple of literals";
    everyday! {
        async fn release_status(version: String, checks: u32) -> Result<String, ToolError> {
            let mut status = "draft";
            for i in 1..=checks {
                let passed = ask!(confirm(format!("Check {i}/{checks} for {version} passed?"))).accepted()?;
                if !passed {
                    status = "blocked";
                    break;
                }
                status = if i == checks { "ready" } else { "in review" };
            }
            let (mark, next) = match status {
                "ready" => ("[ok]", "ship it"),
                "blocked" => ("[x]", "fix the failing check"),
                _ => ("[..]", "add checks"),
            };
            let note = ask!(text(format!("Note for {version} ({status})?"))).ok().unwrap_or_default();
            Ok(format!("{mark} {version}: {status}, next: {next}. {note}"))
        }
    }

    #[tokio::test]
    async fn release_status_reassigned_literal() {
        let scripts = [
            Script::accept("all pass").texts(["lgtm"]),
            Script::accept("second fails").rule(|q, _| q.message.starts_with("Check 2").then(|| yes_no(false))),
            Script::accept("declined note").decline_at(3),
        ];
        let runs = check(
            &release_status::release_status,
            json!({"version": "1.2.0", "checks": 3}),
            || release_status::plain("1.2.0".into(), 3),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "[ok] 1.2.0: ready, next: ship it. lgtm");
        assert_eq!(runs[1].ok(), "[x] 1.2.0: blocked, next: fix the failing check. ok");
        assert_eq!(runs[1].asked[2], "Note for 1.2.0 (blocked)?");
        assert_eq!(runs[2].ok(), "[ok] 1.2.0: ready, next: ship it. ");
        let none = check(
            &release_status::release_status,
            json!({"version": "0.1.0", "checks": 0}),
            || release_status::plain("0.1.0".into(), 0),
            &scripts[..1],
        )
        .await;
        assert_eq!(none[0].ok(), "[..] 0.1.0: draft, next: add checks. lgtm");
    }
}

ready! {
    "waiting (3, issue item 4): an array of `(&str, &str)` tuples iterated, and a `Vec<&str>` of its keys";
    everyday! {
        async fn onboarding_tour(name: String) -> Result<String, ToolError> {
            let steps = [
                ("handbook", "Read the handbook"),
                ("chat", "Join #general"),
                ("repo", "Clone the monorepo"),
                ("oncall", "Shadow an on-call shift"),
            ];
            let mut done: Vec<&str> = Vec::new();
            let mut skipped: Vec<&str> = Vec::new();
            for (key, label) in steps {
                match ask!(confirm(format!("{name}: {label}. Done?"))) {
                    Elicited::Accept(true) => done.push(key),
                    Elicited::Accept(false) | Elicited::Decline => skipped.push(key),
                    Elicited::Cancel => break,
                }
            }
            Ok(format!("{name}: done [{}], skipped [{}]", done.join(", "), skipped.join(", ")))
        }
    }

    #[tokio::test]
    async fn onboarding_tour_tuples_of_literals() {
        let scripts = [
            Script::accept("all"),
            Script::accept("skip chat").when("#general", yes_no(false)).decline_at(3),
            Script::accept("stop").cancel_at(2),
        ];
        let runs = check(
            &onboarding_tour::onboarding_tour,
            json!({"name": "Kim"}),
            || onboarding_tour::plain("Kim".into()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "Kim: done [handbook, chat, repo, oncall], skipped []");
        assert_eq!(runs[0].asked[1], "Kim: Join #general. Done?");
        assert_eq!(runs[1].ok(), "Kim: done [handbook, repo], skipped [chat, oncall]");
        assert_eq!(runs[2].ok(), "Kim: done [handbook, chat], skipped []");
    }
}
