//! Category 1: `for` loops over borrowed iterators and iterator adapters, with a suspension
//! in the body. After every loop the body still uses the collection (it must not have been
//! moved or changed behind the author's back).

use std::collections::{BTreeMap, HashMap};

use mrtr::machine::ToolError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::support::{Pick, Script, check, pick, yes_no};

ready! {
    "waiting (1, issue item 3): `for (i, f) in files.iter().enumerate()` is refused";
    everyday! {
        async fn review_files(pr: u32, files: Vec<String>) -> Result<String, ToolError> {
            let mut approved: Vec<String> = Vec::new();
            let mut comments: Vec<String> = Vec::new();
            for (i, file) in files.iter().enumerate() {
                let verdict = ask!(choice(
                    format!("PR #{pr}, file {}/{}: {file}", i + 1, files.len()),
                    ["approve", "comment", "skip"]
                ))
                .accepted()?;
                match verdict.as_str() {
                    "approve" => approved.push(file.clone()),
                    "comment" => {
                        let text = ask!(text(format!("Comment on {file}?"))).accepted()?;
                        comments.push(format!("{file}: {text}"));
                    }
                    _ => {}
                }
            }
            Ok(format!(
                "{} of {} approved [{}]; comments: {}",
                approved.len(),
                files.len(),
                approved.join(", "),
                comments.join(" | ")
            ))
        }
    }

    #[tokio::test]
    async fn review_files_iter_enumerate() {
        let files = vec!["src/main.rs".to_string(), "src/lib.rs".into(), "README.md".into()];
        let scripts = [
            Script::accept("approve all"),
            Script::accept("rotate").pick(Pick::Rotate).texts(["nit: naming"]),
            Script::accept("cancel").cancel_at(1),
        ];
        let runs = check(
            &review_files::review_files,
            json!({"pr": 42, "files": files}),
            || review_files::plain(42, files.clone()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "3 of 3 approved [src/main.rs, src/lib.rs, README.md]; comments: ");
        assert_eq!(runs[0].asked[2], "PR #42, file 3/3: README.md");
        assert_eq!(
            runs[1].ok(),
            "2 of 3 approved [src/main.rs, README.md]; comments: src/lib.rs: nit: naming"
        );
        assert_eq!(runs[2].err(), "the user cancelled");
        let empty = check(
            &review_files::review_files,
            json!({"pr": 1, "files": []}),
            || review_files::plain(1, Vec::new()),
            &scripts[..1],
        )
        .await;
        assert_eq!(empty[0].ok(), "0 of 0 approved []; comments: ");
    }
}

ready! {
    "waiting (1, issue item 3): `for (n, task) in tasks.into_iter().enumerate()` is refused";
    everyday! {
        async fn onboarding_checklist(new_hire: String, tasks: Vec<String>) -> Result<String, ToolError> {
            let mut done: Vec<String> = Vec::new();
            let mut postponed: Vec<String> = Vec::new();
            for (n, task) in tasks.into_iter().enumerate() {
                if ask!(confirm(format!("{new_hire}, step {}: {task} — done?", n + 1))).accepted()? {
                    done.push(task);
                } else {
                    postponed.push(format!("{} ({task})", n + 1));
                }
            }
            Ok(format!(
                "{new_hire}: done [{}], postponed [{}]",
                done.join(", "),
                postponed.join(", ")
            ))
        }
    }

    #[tokio::test]
    async fn onboarding_checklist_into_iter_enumerate() {
        let tasks: Vec<String> = ["laptop", "badge", "2FA", "payroll"].map(String::from).to_vec();
        let scripts = [
            Script::accept("all done"),
            Script::accept("badge and payroll later")
                .when("badge", yes_no(false))
                .when("payroll", yes_no(false)),
            Script::accept("declined").decline_at(2),
        ];
        let runs = check(
            &onboarding_checklist::onboarding_checklist,
            json!({"new_hire": "Sam", "tasks": tasks}),
            || onboarding_checklist::plain("Sam".into(), tasks.clone()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "Sam: done [laptop, badge, 2FA, payroll], postponed []");
        assert_eq!(runs[0].asked[3], "Sam, step 4: payroll — done?");
        assert_eq!(runs[1].ok(), "Sam: done [laptop, 2FA], postponed [2 (badge), 4 (payroll)]");
        assert_eq!(runs[2].err(), "the user declined");
    }
}

ready! {
    "waiting (1, issue item 3): `for (pr, reviewer) in prs.iter().zip(reviewers.iter())` is refused";
    everyday! {
        async fn assign_reviewers(prs: Vec<u32>, reviewers: Vec<String>) -> Result<String, ToolError> {
            let mut assigned: Vec<String> = Vec::new();
            for (pr, reviewer) in prs.iter().zip(reviewers.iter()) {
                let who = ask!(choice(
                    format!("Reviewer for PR #{pr}?"),
                    [reviewer.clone(), "someone else".to_string()]
                ))
                .accepted()?;
                let who = if who == "someone else" {
                    ask!(text(format!("Who reviews #{pr} instead of {reviewer}?"))).accepted()?
                } else {
                    who
                };
                assigned.push(format!("#{pr}->{who}"));
            }
            let unassigned = prs.len().saturating_sub(reviewers.len());
            Ok(format!("{} ({unassigned} without reviewer)", assigned.join(", ")))
        }
    }

    #[tokio::test]
    async fn assign_reviewers_zip() {
        let prs = vec![101, 102, 103];
        let reviewers = vec!["ana".to_string(), "ben".to_string()];
        let scripts = [
            Script::accept("suggested"),
            Script::accept("someone else").pick(Pick::Last).texts(["cy"]),
            Script::accept("cancel").cancel_at(1),
        ];
        let runs = check(
            &assign_reviewers::assign_reviewers,
            json!({"prs": prs, "reviewers": reviewers}),
            || assign_reviewers::plain(prs.clone(), reviewers.clone()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "#101->ana, #102->ben (1 without reviewer)");
        assert_eq!(runs[1].ok(), "#101->cy, #102->cy (1 without reviewer)");
        assert_eq!(
            runs[1].asked,
            [
                "Reviewer for PR #101?",
                "Who reviews #101 instead of ana?",
                "Reviewer for PR #102?",
                "Who reviews #102 instead of ben?"
            ]
        );
        assert_eq!(runs[2].err(), "the user cancelled");
    }
}

ready! {
    "waiting (1, issue item 3): `for (b, batch) in ids.chunks(n).enumerate()` is refused";
    everyday! {
        async fn purge_accounts(ids: Vec<u64>, batch_size: u32) -> Result<String, ToolError> {
            let mut deleted = 0usize;
            let mut kept: Vec<u64> = Vec::new();
            for (b, batch) in ids.chunks(batch_size.max(1) as usize).enumerate() {
                let ok = ask!(confirm(format!(
                    "Batch {}: delete {} account(s) {:?}?",
                    b + 1,
                    batch.len(),
                    batch
                )))
                .accepted()?;
                if ok {
                    deleted += batch.len();
                } else {
                    kept.extend(batch.iter());
                }
            }
            Ok(format!("deleted {deleted} of {}, kept {kept:?}", ids.len()))
        }
    }

    #[tokio::test]
    async fn purge_accounts_chunks() {
        let ids: Vec<u64> = (1..=7).collect();
        let scripts = [
            Script::accept("all"),
            Script::accept("keep batch 2").when("Batch 2", yes_no(false)),
            Script::accept("declined").decline_at(2),
        ];
        let runs = check(
            &purge_accounts::purge_accounts,
            json!({"ids": ids, "batch_size": 3}),
            || purge_accounts::plain(ids.clone(), 3),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "deleted 7 of 7, kept []");
        assert_eq!(runs[0].asked[2], "Batch 3: delete 1 account(s) [7]?");
        assert_eq!(runs[1].ok(), "deleted 4 of 7, kept [4, 5, 6]");
        assert_eq!(runs[2].err(), "the user declined");
    }
}

ready! {
    "waiting (1, issue item 3): `for host in &hosts` is refused";
    everyday! {
        async fn restart_hosts(service: String, hosts: Vec<String>) -> Result<String, ToolError> {
            let mut restarted: Vec<String> = Vec::new();
            for host in &hosts {
                if host.ends_with(".prod") {
                    let ok = ask!(confirm(format!("Restart {service} on production host {host}?")))
                        .accepted()?;
                    if !ok {
                        continue;
                    }
                }
                restarted.push(host.to_string());
            }
            Ok(format!(
                "restarted {}/{} hosts: {}",
                restarted.len(),
                hosts.len(),
                restarted.join(" ")
            ))
        }
    }

    #[tokio::test]
    async fn restart_hosts_for_over_reference() {
        let hosts: Vec<String> = ["a.dev", "b.prod", "c.dev", "d.prod"].map(String::from).to_vec();
        let scripts = [
            Script::accept("all"),
            Script::accept("no production").confirm(false),
            Script::accept("cancel second").cancel_at(1),
        ];
        let runs = check(
            &restart_hosts::restart_hosts,
            json!({"service": "nginx", "hosts": hosts}),
            || restart_hosts::plain("nginx".into(), hosts.clone()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "restarted 4/4 hosts: a.dev b.prod c.dev d.prod");
        assert_eq!(runs[0].asked, ["Restart nginx on production host b.prod?", "Restart nginx on production host d.prod?"]);
        assert_eq!(runs[1].ok(), "restarted 2/4 hosts: a.dev c.dev");
        assert_eq!(runs[2].err(), "the user cancelled");
    }
}

ready! {
    "waiting (1, issue item 3): `for (key, value) in &btree_map` is refused";
    everyday! {
        async fn review_config(changes: BTreeMap<String, String>) -> Result<String, ToolError> {
            let mut applied: BTreeMap<String, String> = BTreeMap::new();
            for (key, value) in &changes {
                let answer = ask!(choice(format!("Set {key} = {value}?"), ["apply", "edit", "skip"]))
                    .accepted()?;
                match answer.as_str() {
                    "apply" => {
                        applied.insert(key.clone(), value.clone());
                    }
                    "edit" => {
                        let new = ask!(text(format!("New value for {key} (was {value})?"))).accepted()?;
                        applied.insert(key.clone(), new);
                    }
                    _ => {}
                }
            }
            let lines: Vec<String> = applied.iter().map(|(k, v)| format!("{k}={v}")).collect();
            Ok(format!("{} of {} changes: {}", applied.len(), changes.len(), lines.join(", ")))
        }
    }

    #[tokio::test]
    async fn review_config_btree_map_by_reference() {
        let changes: BTreeMap<String, String> = [("timeout", "30s"), ("retries", "5"), ("log_level", "debug")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let scripts = [
            Script::accept("apply all"),
            Script::accept("rotate").pick(Pick::Rotate).texts(["info"]),
            Script::accept("declined edit").decline_at(2).when("Set retries", pick("edit")),
        ];
        let runs = check(
            &review_config::review_config,
            json!({"changes": changes}),
            || review_config::plain(changes.clone()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "3 of 3 changes: log_level=debug, retries=5, timeout=30s");
        assert_eq!(runs[0].asked[0], "Set log_level = debug?");
        // log_level: apply; retries: edit -> "info"; timeout (question 3): 3 % 3 = apply.
        assert_eq!(runs[1].ok(), "3 of 3 changes: log_level=debug, retries=info, timeout=30s");
        assert_eq!(runs[1].asked[2], "New value for retries (was 5)?");
        assert_eq!(runs[2].err(), "the user declined");
    }
}

ready! {
    "waiting (1 and 2, issue items 2 and 3): `for (user, role) in &hash_map`, and a HashMap kept across a suspension";
    everyday! {
        async fn audit_grants(grants: HashMap<String, String>) -> Result<String, ToolError> {
            let mut revoked: Vec<String> = Vec::new();
            for (user, role) in &grants {
                if role == "admin" || role == "owner" {
                    let keep = ask!(confirm(format!("Keep {role} for {user}?"))).accepted()?;
                    if !keep {
                        revoked.push(format!("{user}:{role}"));
                    }
                }
            }
            revoked.sort();
            Ok(format!("{} grants, revoked {}: {}", grants.len(), revoked.len(), revoked.join(" ")))
        }
    }

    #[tokio::test]
    async fn audit_grants_hash_map_by_reference() {
        let roles = ["viewer", "admin", "editor", "owner"];
        let grants: HashMap<String, String> = (0..40)
            .map(|i| (format!("user{i:02}"), roles[i % roles.len()].to_string()))
            .collect();
        // Answers depend on the question only (the order of a HashMap differs between maps).
        let scripts = [
            Script::accept("keep all").unordered(),
            Script::accept("revoke owners").when("Keep owner", yes_no(false)).unordered(),
        ];
        for _ in 0..20 {
            let runs = check(
                &audit_grants::audit_grants,
                json!({"grants": grants}),
                || audit_grants::plain(grants.clone()),
                &scripts,
            )
            .await;
            assert_eq!(runs[0].ok(), "40 grants, revoked 0: ");
            assert_eq!(runs[0].rounds, 20);
            assert!(runs[1].ok().starts_with("40 grants, revoked 10: user03:owner user07:owner user11:owner"));
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TestResult {
    pub name: String,
    pub passed: bool,
    pub flaky: bool,
}

ready! {
    "waiting (1, issue item 3): `for t in results.iter().filter(..)` is refused";
    everyday! {
        async fn rerun_failures(results: Vec<TestResult>) -> Result<String, ToolError> {
            let mut rerun: Vec<String> = Vec::new();
            let mut quarantined: Vec<String> = Vec::new();
            for result in results.iter().filter(|r| !r.passed) {
                let action = if result.flaky {
                    ask!(choice(format!("{} is flaky and failed", result.name), ["rerun", "quarantine"]))
                        .accepted()?
                } else {
                    "rerun".to_string()
                };
                if action == "quarantine" {
                    quarantined.push(result.name.clone());
                } else if ask!(confirm(format!("Rerun {}?", result.name))).accepted()? {
                    rerun.push(result.name.clone());
                }
            }
            let passed = results.iter().filter(|r| r.passed).count();
            Ok(format!("{passed} passed; rerun [{}]; quarantined [{}]", rerun.join(", "), quarantined.join(", ")))
        }
    }

    #[tokio::test]
    async fn rerun_failures_iter_filter() {
        let result = |name: &str, passed, flaky| TestResult { name: name.into(), passed, flaky };
        let results = vec![
            result("login", true, false),
            result("upload", false, true),
            result("search", false, false),
            result("export", true, true),
            result("billing", false, true),
        ];
        let scripts = [
            Script::accept("rerun all"),
            Script::accept("quarantine flaky").pick(Pick::Last).confirm(false),
            Script::accept("cancel").cancel_at(3),
        ];
        let runs = check(
            &rerun_failures::rerun_failures,
            json!({"results": results}),
            || rerun_failures::plain(results.clone()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "2 passed; rerun [upload, search, billing]; quarantined []");
        assert_eq!(runs[0].rounds, 5);
        assert_eq!(runs[1].ok(), "2 passed; rerun []; quarantined [upload, billing]");
        assert_eq!(runs[1].asked, ["upload is flaky and failed", "Rerun search?", "billing is flaky and failed"]);
        assert_eq!(runs[2].err(), "the user cancelled");
    }
}

ready! {
    "waiting (1, issue item 3): `for name in secrets.keys()` is refused";
    everyday! {
        async fn rotate_secrets(secrets: BTreeMap<String, u32>, max_age_days: u32) -> Result<String, ToolError> {
            let mut rotated: Vec<String> = Vec::new();
            for name in secrets.keys() {
                let age = secrets[name.as_str()];
                if age <= max_age_days {
                    continue;
                }
                if ask!(confirm(format!("{name} is {age} days old. Rotate it now?"))).accepted()? {
                    rotated.push(name.to_string());
                }
            }
            let oldest = secrets.values().max().copied().unwrap_or(0);
            Ok(format!("rotated [{}] of {} secrets (oldest {oldest} days)", rotated.join(", "), secrets.len()))
        }
    }

    #[tokio::test]
    async fn rotate_secrets_keys() {
        let secrets: BTreeMap<String, u32> = [("db", 400), ("api", 12), ("smtp", 91), ("s3", 200)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let scripts = [
            Script::accept("rotate all"),
            Script::accept("not smtp").when("smtp", yes_no(false)),
            Script::accept("declined").decline_at(1),
        ];
        let runs = check(
            &rotate_secrets::rotate_secrets,
            json!({"secrets": secrets, "max_age_days": 90}),
            || rotate_secrets::plain(secrets.clone(), 90),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "rotated [db, s3, smtp] of 4 secrets (oldest 400 days)");
        assert_eq!(runs[0].asked[0], "db is 400 days old. Rotate it now?");
        assert_eq!(runs[1].ok(), "rotated [db, s3] of 4 secrets (oldest 400 days)");
        assert_eq!(runs[2].err(), "the user declined");
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Budget {
    pub team: String,
    pub amount: u32,
}

ready! {
    "waiting (1, issue item 3): `for budget in budgets.values()` is refused";
    everyday! {
        async fn approve_budgets(budgets: BTreeMap<String, Budget>, limit: u32) -> Result<String, ToolError> {
            let mut approved_total = 0u32;
            let mut cut: Vec<String> = Vec::new();
            for budget in budgets.values() {
                let amount = if budget.amount > limit {
                    let answer = ask!(text(format!(
                        "{} asks for {}, above the limit of {limit}. Approved amount?",
                        budget.team, budget.amount
                    )))
                    .accepted()?;
                    let approved: u32 = answer.trim().parse()?;
                    if approved < budget.amount {
                        cut.push(format!("{} -{}", budget.team, budget.amount - approved));
                    }
                    approved
                } else {
                    budget.amount
                };
                approved_total += amount;
            }
            let requested: u32 = budgets.values().map(|b| b.amount).sum();
            Ok(format!("approved {approved_total} of {requested}; cuts: {}", cut.join(", ")))
        }
    }

    #[tokio::test]
    async fn approve_budgets_values() {
        let budgets: BTreeMap<String, Budget> = [("ops", 900), ("dev", 3000), ("sales", 5000), ("hr", 200)]
            .into_iter()
            .map(|(team, amount)| (format!("cc-{team}"), Budget { team: team.to_string(), amount }))
            .collect();
        let scripts = [
            Script::accept("cut").texts(["2500", "4000"]),
            Script::accept("full").text_by(|q| q.split(" asks for ").nth(1).unwrap().split(',').next().unwrap().to_string()),
            Script::accept("not a number").texts(["lots"]),
        ];
        let runs = check(
            &approve_budgets::approve_budgets,
            json!({"budgets": budgets, "limit": 1000}),
            || approve_budgets::plain(budgets.clone(), 1000),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "approved 7600 of 9100; cuts: dev -500, sales -1000");
        assert_eq!(runs[0].asked[0], "dev asks for 3000, above the limit of 1000. Approved amount?");
        assert_eq!(runs[1].ok(), "approved 9100 of 9100; cuts: ");
        assert_eq!(runs[2].err(), "invalid digit found in string");
    }
}

ready! {
    "waiting (1, issue item 3): `for line in changelog.lines()` is refused";
    everyday! {
        async fn triage_changelog(changelog: String) -> Result<String, ToolError> {
            let mut breaking: Vec<String> = Vec::new();
            let mut entries = 0;
            for line in changelog.lines() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                entries += 1;
                if !line.contains("remove") && !line.contains("rename") {
                    continue;
                }
                if ask!(confirm(format!("Is `{line}` a breaking change?"))).accepted()? {
                    breaking.push(line.trim_start_matches("- ").to_string());
                }
            }
            Ok(format!("{entries} entries in {} lines; breaking: {}", changelog.lines().count(), breaking.join("; ")))
        }
    }

    #[tokio::test]
    async fn triage_changelog_lines() {
        let changelog = "# 2.0.0\n\n- remove the v1 API\n- add dark mode\n  - rename `cfg` to `config`\n- fix typo\n";
        let scripts = [
            Script::accept("both breaking"),
            Script::accept("rename is fine").when("rename", yes_no(false)),
            Script::accept("cancel").cancel_at(0),
        ];
        let runs = check(
            &triage_changelog::triage_changelog,
            json!({"changelog": changelog}),
            || triage_changelog::plain(changelog.to_string()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "4 entries in 6 lines; breaking: remove the v1 API; rename `cfg` to `config`");
        assert_eq!(runs[0].asked[1], "Is `- rename `cfg` to `config`` a breaking change?");
        assert_eq!(runs[1].ok(), "4 entries in 6 lines; breaking: remove the v1 API");
        assert_eq!(runs[2].err(), "the user cancelled");
    }
}

ready! {
    "waiting (1, issue item 3): `for tag in tags.split(',').map(str::trim).filter(..)` is refused";
    everyday! {
        async fn push_tags(version: String, tags: String) -> Result<String, ToolError> {
            let mut pushed: Vec<String> = Vec::new();
            for tag in tags.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                let push = ask!(confirm(format!("Push tag `{tag}` for {version}?"))).accepted()?;
                if push {
                    pushed.push(format!("{tag}@{version}"));
                }
            }
            let requested = tags.split(',').filter(|t| !t.trim().is_empty()).count();
            Ok(format!("pushed {} of {requested}: {}", pushed.len(), pushed.join(" ")))
        }
    }

    #[tokio::test]
    async fn push_tags_split() {
        let scripts = [
            Script::accept("all"),
            Script::accept("not latest").when("`latest`", yes_no(false)),
            Script::accept("declined").decline_at(0),
        ];
        let tags = " stable, latest,, lts ";
        let runs = check(
            &push_tags::push_tags,
            json!({"version": "3.1.0", "tags": tags}),
            || push_tags::plain("3.1.0".into(), tags.into()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "pushed 3 of 3: stable@3.1.0 latest@3.1.0 lts@3.1.0");
        assert_eq!(runs[0].asked[1], "Push tag `latest` for 3.1.0?");
        assert_eq!(runs[1].ok(), "pushed 2 of 3: stable@3.1.0 lts@3.1.0");
        assert_eq!(runs[2].err(), "the user declined");
    }
}

ready! {
    "waiting (1, issue item 3): `for pair in versions.windows(2)` is refused";
    everyday! {
        async fn check_migrations(versions: Vec<u32>) -> Result<String, ToolError> {
            let mut accepted_gaps: Vec<String> = Vec::new();
            for pair in versions.windows(2) {
                let (from, to) = (pair[0], pair[1]);
                if to <= from {
                    return Err(ToolError::new(format!("migrations out of order: {from} then {to}")));
                }
                if to != from + 1 {
                    let go = ask!(confirm(format!("Migrations {} to {} are missing. Continue?", from + 1, to - 1)))
                        .accepted()?;
                    if !go {
                        return Ok(format!("stopped at the gap after {from}"));
                    }
                    accepted_gaps.push(format!("{}..{}", from + 1, to - 1));
                }
            }
            Ok(format!("{} migrations, gaps accepted: [{}]", versions.len(), accepted_gaps.join(", ")))
        }
    }

    #[tokio::test]
    async fn check_migrations_windows() {
        let scripts = [
            Script::accept("continue"),
            Script::accept("stop at second gap").when("Migrations 7", yes_no(false)),
            Script::accept("cancel").cancel_at(0),
        ];
        let versions = vec![1, 2, 5, 6, 9, 10];
        let runs = check(
            &check_migrations::check_migrations,
            json!({"versions": versions}),
            || check_migrations::plain(versions.clone()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "6 migrations, gaps accepted: [3..4, 7..8]");
        assert_eq!(runs[0].asked, ["Migrations 3 to 4 are missing. Continue?", "Migrations 7 to 8 are missing. Continue?"]);
        assert_eq!(runs[1].ok(), "stopped at the gap after 6");
        assert_eq!(runs[2].err(), "the user cancelled");
        let versions = vec![1, 3, 2];
        let runs = check(
            &check_migrations::check_migrations,
            json!({"versions": versions}),
            || check_migrations::plain(versions.clone()),
            &scripts[..1],
        )
        .await;
        assert_eq!(runs[0].err(), "migrations out of order: 3 then 2");
        assert_eq!(runs[0].rounds, 1);
    }
}

ready! {
    "waiting (1, issue item 3): `for (n, m) in applied.iter().rev().take(k).enumerate()` is refused";
    everyday! {
        async fn revert_migrations(applied: Vec<String>, steps: u32) -> Result<String, ToolError> {
            let mut reverted: Vec<String> = Vec::new();
            for (n, migration) in applied.iter().rev().take(steps as usize).enumerate() {
                let answer = ask!(choice(
                    format!("Step {}/{steps}: revert {migration}?", n + 1),
                    ["revert", "stop"]
                ))
                .accepted()?;
                if answer == "stop" {
                    break;
                }
                reverted.push(migration.clone());
            }
            let remaining = &applied[..applied.len() - reverted.len()];
            Ok(format!("reverted [{}]; now at {}", reverted.join(", "), remaining.last().map_or("nothing", |m| m.as_str())))
        }
    }

    #[tokio::test]
    async fn revert_migrations_iter_rev() {
        let applied: Vec<String> = ["001_users", "002_orders", "003_index", "004_audit"].map(String::from).to_vec();
        let scripts = [
            Script::accept("revert"),
            Script::accept("stop at third").rule(|q, _| q.message.starts_with("Step 3").then(|| pick("stop"))),
            Script::accept("declined").decline_at(1),
        ];
        let runs = check(
            &revert_migrations::revert_migrations,
            json!({"applied": applied, "steps": 3}),
            || revert_migrations::plain(applied.clone(), 3),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "reverted [004_audit, 003_index, 002_orders]; now at 001_users");
        assert_eq!(runs[0].asked[0], "Step 1/3: revert 004_audit?");
        assert_eq!(runs[1].ok(), "reverted [004_audit, 003_index]; now at 002_orders");
        assert_eq!(runs[2].err(), "the user declined");
    }
}

ready! {
    "waiting (1, issue item 3): `for (i, c) in title.char_indices()` is refused";
    everyday! {
        async fn make_slug(title: String) -> Result<String, ToolError> {
            let mut slug = String::new();
            for (i, c) in title.char_indices() {
                if c.is_ascii_alphanumeric() {
                    slug.push(c.to_ascii_lowercase());
                    continue;
                }
                if c == ' ' || c == '-' {
                    if !slug.ends_with('-') {
                        slug.push('-');
                    }
                    continue;
                }
                let replacement = ask!(choice(format!("`{c}` at byte {i} of `{title}`: replace with?"), ["e", "a", "remove"]))
                    .accepted()?;
                if replacement != "remove" {
                    slug.push_str(&replacement);
                }
            }
            Ok(format!("{} -> {}", title, slug.trim_matches('-')))
        }
    }

    #[tokio::test]
    async fn make_slug_char_indices() {
        let scripts = [
            Script::accept("e, drop the `!`").when("`!`", pick("remove")),
            Script::accept("remove").pick(Pick::Last),
            Script::accept("cancel").cancel_at(1),
        ];
        let title = "Café à la crème!";
        let runs = check(
            &make_slug::make_slug,
            json!({"title": title}),
            || make_slug::plain(title.into()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "Café à la crème! -> cafe-e-la-creme");
        assert_eq!(runs[0].asked[0], "`é` at byte 3 of `Café à la crème!`: replace with?");
        assert_eq!(runs[0].rounds, 4);
        assert_eq!(runs[1].ok(), "Café à la crème! -> caf-la-crme");
        assert_eq!(runs[2].err(), "the user cancelled");
    }
}
