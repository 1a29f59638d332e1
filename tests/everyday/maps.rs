//! Category 2: `HashMap` / `HashSet` / `BTreeMap` live across suspensions, with about 50
//! entries; every test repeats its flows 20 times (a decoded `HashMap` gets a new
//! `RandomState`, so a bug that depends on iteration order shows up at random).

use std::collections::{BTreeMap, HashMap, HashSet};

use mrtr::machine::ToolError;
use serde_json::json;

use super::support::{Pick, Script, check};

const REPEAT: usize = 20;

/// 50 subscriber addresses, every fifth one a differently spelled duplicate of an earlier one.
fn subscribers() -> Vec<String> {
    (0..50)
        .map(|i| {
            if i % 5 == 4 {
                format!(" User{}@Example.com", i - 2)
            } else {
                format!("user{i}@example.com")
            }
        })
        .collect()
}

ready! {
    everyday! {
        async fn dedupe_subscribers(emails: Vec<String>) -> Result<String, ToolError> {
            let mut seen: HashSet<String> = HashSet::new();
            let mut duplicates = 0;
            let mut kept: Vec<String> = Vec::new();
            for email in emails {
                let key = email.trim().to_lowercase();
                if seen.contains(&key) {
                    duplicates += 1;
                    let merge = ask!(confirm(format!("`{email}` is already subscribed as {key}. Merge?"))).accepted()?;
                    if merge {
                        continue;
                    }
                    kept.push(email);
                    continue;
                }
                seen.insert(key);
                kept.push(email);
            }
            Ok(format!("{} unique, {duplicates} duplicate(s), {} kept", seen.len(), kept.len()))
        }
    }

    #[tokio::test]
    async fn dedupe_subscribers_hash_set() {
        let emails = subscribers();
        let scripts = [
            Script::accept("merge"),
            Script::accept("keep").confirm(false),
            Script::accept("cancel third").cancel_at(2),
        ];
        for _ in 0..REPEAT {
            let runs = check(
                &dedupe_subscribers::dedupe_subscribers,
                json!({"emails": emails}),
                || dedupe_subscribers::plain(emails.clone()),
                &scripts,
            )
            .await;
            assert_eq!(runs[0].ok(), "40 unique, 10 duplicate(s), 40 kept");
            assert_eq!(runs[0].asked[0], "` User2@Example.com` is already subscribed as user2@example.com. Merge?");
            assert_eq!(runs[1].ok(), "40 unique, 10 duplicate(s), 50 kept");
            assert_eq!(runs[2].err(), "the user cancelled");
        }
    }
}

ready! {
    everyday! {
        async fn label_report(labels: Vec<String>) -> Result<String, ToolError> {
            let mut counts: HashMap<String, u32> = HashMap::new();
            for label in &labels {
                *counts.entry(label.to_lowercase()).or_insert(0) += 1;
            }
            let min: u32 = ask!(text(format!(
                "{} issues use {} labels. Hide labels used fewer than how many times?",
                labels.len(),
                counts.len()
            )))
            .accepted()?
            .trim()
            .parse()?;
            let rename = ask!(text("Rename a label (old=new), or leave empty")).accepted()?;
            if let Some((old, new)) = rename.split_once('=')
                && let Some(n) = counts.remove(old.trim())
            {
                *counts.entry(new.trim().to_string()).or_insert(0) += n;
            }
            let mut shown: Vec<(String, u32)> = counts.into_iter().filter(|(_, n)| *n >= min).collect();
            shown.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let top: Vec<String> = shown.iter().take(3).map(|(label, n)| format!("{label}:{n}")).collect();
            Ok(format!("{} labels shown; top: {}", shown.len(), top.join(" ")))
        }
    }

    #[tokio::test]
    async fn label_report_hash_map_counts() {
        // 200 issues over 50 labels: label k is used (k % 7) + 1 times, then padding.
        let mut labels: Vec<String> = Vec::new();
        for k in 0..50 {
            for _ in 0..(k % 7) + 1 {
                labels.push(if k % 2 == 0 { format!("Label-{k}") } else { format!("label-{k}") });
            }
        }
        let scripts = [
            Script::accept("min 6").texts(["6", ""]),
            Script::accept("min 1, rename").texts(["1", "label-48 = triage"]),
            Script::accept("not a number").texts(["many"]),
        ];
        for _ in 0..REPEAT {
            let runs = check(
                &label_report::label_report,
                json!({"labels": labels}),
                || label_report::plain(labels.clone()),
                &scripts,
            )
            .await;
            assert_eq!(runs[0].ok(), "14 labels shown; top: label-13:7 label-20:7 label-27:7");
            assert_eq!(runs[0].asked[0], "197 issues use 50 labels. Hide labels used fewer than how many times?");
            assert_eq!(runs[1].ok(), "50 labels shown; top: label-13:7 label-20:7 label-27:7");
            assert_eq!(runs[2].err(), "invalid digit found in string");
        }
    }
}

ready! {
    everyday! {
        async fn notify_team(people: Vec<String>, teams: Vec<String>, message: String) -> Result<String, ToolError> {
            let mut by_team: HashMap<String, Vec<String>> = HashMap::new();
            for (person, team) in people.iter().zip(teams.iter()) {
                by_team.entry(team.clone()).or_default().push(person.clone());
            }
            let mut names: Vec<String> = by_team.keys().cloned().collect();
            names.sort();
            let team = ask!(choice(format!("Send `{message}` to which of {} teams?", names.len()), names))
                .accepted()?;
            let mut recipients = by_team.get(&team).cloned().unwrap_or_default();
            let copy_leads = ask!(confirm(format!(
                "Also copy the leads of the other {} teams?",
                by_team.len() - 1
            )))
            .accepted()?;
            if copy_leads {
                for (other, members) in &by_team {
                    if *other != team {
                        recipients.push(members[0].clone());
                    }
                }
            }
            recipients.sort();
            Ok(format!("{team}: {} recipient(s), first {}", recipients.len(), recipients[0]))
        }
    }

    #[tokio::test]
    async fn notify_team_hash_map_of_vecs() {
        let people: Vec<String> = (0..150).map(|i| format!("p{i:03}")).collect();
        let teams: Vec<String> = (0..150).map(|i| format!("team-{:02}", i % 50)).collect();
        let scripts = [
            Script::accept("first team, with leads"),
            Script::accept("last team, no leads").pick(Pick::Last).confirm(false),
            Script::accept("declined").decline_at(1),
        ];
        for _ in 0..REPEAT {
            let runs = check(
                &notify_team::notify_team,
                json!({"people": people, "teams": teams, "message": "deploy freeze"}),
                || notify_team::plain(people.clone(), teams.clone(), "deploy freeze".into()),
                &scripts,
            )
            .await;
            assert_eq!(runs[0].ok(), "team-00: 52 recipient(s), first p000");
            assert_eq!(runs[0].asked[1], "Also copy the leads of the other 49 teams?");
            assert_eq!(runs[1].ok(), "team-49: 3 recipient(s), first p049");
            assert_eq!(runs[2].err(), "the user declined");
        }
    }
}

ready! {
    everyday! {
        async fn adjust_stock(mut stock: HashMap<String, i64>, skus: Vec<String>) -> Result<String, ToolError> {
            let mut changes = 0;
            for sku in skus {
                let current = stock.get(&sku).copied().unwrap_or(0);
                let answer = ask!(text(format!("Counted {sku} (system says {current})?"))).accepted()?;
                let counted: i64 = answer.trim().parse()?;
                if counted != current {
                    stock.insert(sku, counted);
                    changes += 1;
                }
            }
            let total: i64 = stock.values().sum();
            let empty = stock.values().filter(|n| **n == 0).count();
            Ok(format!("{changes} correction(s); {} SKUs, {total} units, {empty} empty", stock.len()))
        }
    }

    #[tokio::test]
    async fn adjust_stock_mutated_hash_map_argument() {
        let stock: HashMap<String, i64> = (0..50).map(|i| (format!("sku-{i:02}"), i * 10)).collect();
        let skus: Vec<String> = ["sku-03", "sku-10", "sku-99", "sku-42"].map(String::from).to_vec();
        let scripts = [
            Script::accept("as recorded").text_by(|q| {
                q.split("system says ").nth(1).unwrap().trim_end_matches(")?").to_string()
            }),
            Script::accept("all empty").texts(["0"]),
            Script::accept("typo").texts(["30", "1O0"]),
        ];
        for _ in 0..REPEAT {
            let runs = check(
                &adjust_stock::adjust_stock,
                json!({"stock": stock, "skus": skus}),
                || adjust_stock::plain(stock.clone(), skus.clone()),
                &scripts,
            )
            .await;
            assert_eq!(runs[0].ok(), "0 correction(s); 50 SKUs, 12250 units, 1 empty");
            assert_eq!(runs[0].asked[2], "Counted sku-99 (system says 0)?");
            assert_eq!(runs[1].ok(), "3 correction(s); 50 SKUs, 11700 units, 4 empty");
            assert_eq!(runs[2].err(), "invalid digit found in string");
        }
    }
}

ready! {
    everyday! {
        async fn merge_customers(already_merged: Vec<u32>, pairs: Vec<(u32, u32)>) -> Result<String, ToolError> {
            let mut merged_away: HashSet<u32> = already_merged.into_iter().collect();
            let mut merged_now = 0;
            for (keep, drop) in pairs {
                if merged_away.contains(&keep) || merged_away.contains(&drop) {
                    continue;
                }
                if ask!(confirm(format!("Merge customer #{drop} into #{keep}?"))).accepted()? {
                    merged_away.insert(drop);
                    merged_now += 1;
                }
            }
            let mut ids: Vec<u32> = merged_away.into_iter().collect();
            ids.sort_unstable();
            Ok(format!("{merged_now} merged now, {} in total, highest #{}", ids.len(), ids.last().copied().unwrap_or(0)))
        }
    }

    #[tokio::test]
    async fn merge_customers_growing_hash_set() {
        let already: Vec<u32> = (1..=45).map(|i| i * 2).collect();
        let pairs: Vec<(u32, u32)> = vec![(1, 3), (3, 5), (4, 7), (7, 9), (11, 13), (13, 15), (15, 201)];
        let scripts = [
            Script::accept("merge all"),
            Script::accept("merge none").confirm(false),
            Script::accept("declined").decline_at(2),
        ];
        for _ in 0..REPEAT {
            let runs = check(
                &merge_customers::merge_customers,
                json!({"already_merged": already, "pairs": pairs}),
                || merge_customers::plain(already.clone(), pairs.clone()),
                &scripts,
            )
            .await;
            // (1,3) merges 3, so (3,5) is skipped; (4,7) skipped (4 is merged away); (7,9)
            // merges 9; (11,13) merges 13, so (13,15) is skipped; (15,201) merges 201.
            assert_eq!(runs[0].ok(), "4 merged now, 49 in total, highest #201");
            assert_eq!(runs[0].asked, [
                "Merge customer #3 into #1?",
                "Merge customer #9 into #7?",
                "Merge customer #13 into #11?",
                "Merge customer #201 into #15?"
            ]);
            assert_eq!(runs[1].ok(), "0 merged now, 45 in total, highest #90");
            assert_eq!(runs[1].rounds, 6);
            assert_eq!(runs[2].err(), "the user declined");
        }
    }
}

ready! {
    everyday! {
        async fn reorder_stock(counts: Vec<(String, u32)>, threshold: u32) -> Result<String, ToolError> {
            let mut stock: BTreeMap<String, u32> = counts.into_iter().collect();
            let low: Vec<String> = stock.iter().filter(|(_, n)| **n < threshold).map(|(sku, _)| sku.clone()).collect();
            let mut ordered = 0;
            for sku in low {
                let quantity: u32 = ask!(text(format!("{sku} is low ({}). Order how many?", stock[&sku])))
                    .accepted()?
                    .trim()
                    .parse()?;
                *stock.entry(sku).or_insert(0) += quantity;
                ordered += quantity;
            }
            let lowest = stock.iter().min_by_key(|(_, n)| **n).map(|(sku, n)| format!("{sku}={n}")).unwrap_or_default();
            Ok(format!("ordered {ordered}; {} SKUs; lowest now {lowest}", stock.len()))
        }
    }

    #[tokio::test]
    async fn reorder_stock_btree_map() {
        let counts: Vec<(String, u32)> = (0..50).map(|i| (format!("sku-{i:02}"), (i * 37) % 100)).collect();
        let scripts = [
            Script::accept("fifty each").texts(["50"]),
            Script::accept("rotating").texts(["5", "0", "100"]),
            Script::accept("cancel").texts(["1"]).cancel_at(3),
        ];
        for _ in 0..REPEAT {
            let runs = check(
                &reorder_stock::reorder_stock,
                json!({"counts": counts, "threshold": 10}),
                || reorder_stock::plain(counts.clone(), 10),
                &scripts,
            )
            .await;
            assert_eq!(runs[0].ok(), "ordered 250; 50 SKUs; lowest now sku-30=10");
            assert_eq!(runs[0].asked[0], "sku-00 is low (0). Order how many?");
            assert_eq!(runs[0].rounds, 5);
            assert_eq!(runs[1].ok(), "ordered 110; 50 SKUs; lowest now sku-46=2");
            assert_eq!(runs[2].err(), "the user cancelled");
        }
    }
}

ready! {
    everyday! {
        async fn reduce_permissions(grants: Vec<(String, String)>, max: usize) -> Result<String, ToolError> {
            let mut by_user: HashMap<String, HashSet<String>> = HashMap::new();
            for (user, permission) in grants {
                by_user.entry(user).or_default().insert(permission);
            }
            let mut users: Vec<String> = by_user.keys().cloned().collect();
            users.sort();
            let mut reduced = 0;
            for user in users {
                let count = by_user[&user].len();
                if count <= max {
                    continue;
                }
                let answer = ask!(choice(
                    format!("{user} has {count} permissions. Reduce to?"),
                    ["read", "read+write", "keep"]
                ))
                .accepted()?;
                let keep: HashSet<String> = match answer.as_str() {
                    "read" => HashSet::from(["read".to_string()]),
                    "read+write" => HashSet::from(["read".to_string(), "write".to_string()]),
                    _ => continue,
                };
                by_user.insert(user, keep);
                reduced += 1;
            }
            let total: usize = by_user.values().map(HashSet::len).sum();
            Ok(format!("{reduced} user(s) reduced; {} users, {total} grants", by_user.len()))
        }
    }

    #[tokio::test]
    async fn reduce_permissions_hash_map_of_hash_sets() {
        let permissions = ["read", "write", "deploy", "admin", "billing", "audit"];
        let grants: Vec<(String, String)> = (0..50)
            .flat_map(|u| {
                (0..=(u % 6)).map(move |p| (format!("u{u:02}"), permissions[p].to_string()))
            })
            .collect();
        let scripts = [
            Script::accept("read only"),
            Script::accept("keep").pick(Pick::Last),
            Script::accept("rotate").pick(Pick::Rotate),
            Script::accept("cancel").cancel_at(5),
        ];
        for _ in 0..REPEAT {
            let runs = check(
                &reduce_permissions::reduce_permissions,
                json!({"grants": grants, "max": 4}),
                || reduce_permissions::plain(grants.clone(), 4),
                &scripts,
            )
            .await;
            // Users with u % 6 >= 4 hold 5 or 6 permissions: 16 of them.
            assert_eq!(runs[0].ok(), "16 user(s) reduced; 50 users, 99 grants");
            assert_eq!(runs[0].asked[0], "u04 has 5 permissions. Reduce to?");
            assert_eq!(runs[1].ok(), "0 user(s) reduced; 50 users, 171 grants");
            assert_eq!(runs[1].rounds, 16);
            assert_eq!(runs[2].ok(), "11 user(s) reduced; 50 users, 126 grants");
            assert_eq!(runs[3].err(), "the user cancelled");
        }
    }
}
