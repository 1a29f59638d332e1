//! Category 5: application state — `State<T>` parameters injected on every round from what
//! was registered (`Harness::new().app_state(..)`), never arguments, never stored. The fake
//! database counts its reads and logs its writes; every test runs each script against two
//! fresh databases (one per half) and asserts they end up identical, so code before a
//! suspension that ran twice in the machine would show up as an extra read or write.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mrtr::machine::ToolError;
use mrtr::testing::Harness;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::support::{Pick, Run, Script, compare, yes_no};
use mrtr::State;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct User {
    pub id: u32,
    pub name: String,
    pub inactive_days: u32,
    pub admin: bool,
}

/// What the fake database holds, and what was done to it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Db {
    pub users: BTreeMap<u32, User>,
    pub tickets: Vec<String>,
    pub reads: u32,
    pub writes: Vec<String>,
}

#[derive(Debug)]
pub struct DbError(String);

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "database: {}", self.0)
    }
}

impl std::error::Error for DbError {}

/// A connection-pool-like handle: clones share the database.
#[derive(Debug, Clone, Default)]
pub struct Pool {
    db: Arc<Mutex<Db>>,
}

impl Pool {
    pub fn seeded() -> Pool {
        let pool = Pool::default();
        let names = ["ada", "bob", "cyd", "dee", "eve", "fay", "gus", "hal"];
        let mut db = pool.db.lock().unwrap();
        for (i, name) in names.iter().enumerate() {
            let id = i as u32 + 1;
            db.users.insert(
                id,
                User {
                    id,
                    name: name.to_string(),
                    inactive_days: (id * 37) % 200,
                    admin: id.is_multiple_of(4),
                },
            );
        }
        drop(db);
        pool
    }

    pub fn snapshot(&self) -> Db {
        self.db.lock().unwrap().clone()
    }

    pub async fn inactive_users(&self, days: u32) -> Vec<User> {
        tokio::task::yield_now().await;
        let mut db = self.db.lock().unwrap();
        db.reads += 1;
        db.users
            .values()
            .filter(|u| u.inactive_days >= days)
            .cloned()
            .collect()
    }

    pub async fn user(&self, id: u32) -> Result<User, DbError> {
        tokio::task::yield_now().await;
        let mut db = self.db.lock().unwrap();
        db.reads += 1;
        db.users
            .get(&id)
            .cloned()
            .ok_or_else(|| DbError(format!("no user {id}")))
    }

    pub async fn delete_user(&self, id: u32) -> Result<(), DbError> {
        tokio::task::yield_now().await;
        let mut db = self.db.lock().unwrap();
        db.users
            .remove(&id)
            .ok_or_else(|| DbError(format!("no user {id}")))?;
        db.writes.push(format!("delete {id}"));
        Ok(())
    }

    pub async fn insert_user(&self, name: &str, admin: bool) -> Result<u32, DbError> {
        tokio::task::yield_now().await;
        let mut db = self.db.lock().unwrap();
        if db.users.values().any(|u| u.name == name) {
            return Err(DbError(format!("`{name}` exists")));
        }
        let id = db.users.keys().max().copied().unwrap_or(0) + 1;
        db.users.insert(
            id,
            User {
                id,
                name: name.to_string(),
                inactive_days: 0,
                admin,
            },
        );
        db.writes.push(format!("insert {id} {name}"));
        Ok(id)
    }

    pub async fn set_admin(&self, id: u32, admin: bool) -> Result<(), DbError> {
        let mut db = self.db.lock().unwrap();
        let user = db
            .users
            .get_mut(&id)
            .ok_or_else(|| DbError(format!("no user {id}")))?;
        user.admin = admin;
        db.writes.push(format!("admin {id} {admin}"));
        Ok(())
    }

    pub async fn rename(&self, id: u32, name: &str) -> Result<(), DbError> {
        let mut db = self.db.lock().unwrap();
        let user = db
            .users
            .get_mut(&id)
            .ok_or_else(|| DbError(format!("no user {id}")))?;
        user.name = name.to_string();
        db.writes.push(format!("rename {id} {name}"));
        Ok(())
    }

    pub async fn insert_ticket(&self, title: String) -> usize {
        let mut db = self.db.lock().unwrap();
        db.tickets.push(title.clone());
        db.writes.push(format!("ticket {title}"));
        db.tickets.len()
    }

    pub fn write_count(&self) -> usize {
        self.db.lock().unwrap().writes.len()
    }
}

/// A hit counter shared by every request.
#[derive(Debug, Clone, Default)]
pub struct Counter(Arc<AtomicU64>);

impl Counter {
    pub fn increment(&self) -> u64 {
        self.0.fetch_add(1, Ordering::SeqCst) + 1
    }
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Read-only configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub max_changes: usize,
    pub dry_run: bool,
}

/// Runs each script against two fresh seeded databases — the machine's registered through
/// `register`, the plain half's passed to `plain` — and asserts they end up identical.
async fn check_with_pool<M, R, F>(
    tool: &M,
    arguments: Value,
    register: impl Fn(Harness, Pool) -> Harness,
    plain: impl Fn(Pool) -> F,
    scripts: &[Script],
) -> Vec<(Run, Db)>
where
    M: mrtr::machine::Machine<Output = rmcp::model::CallToolResult>,
    R: mrtr::machine::IntoToolResult,
    F: Future<Output = R>,
{
    let mut runs = Vec::new();
    for script in scripts {
        let (machine_db, plain_db) = (Pool::seeded(), Pool::seeded());
        let harness = register(Harness::new(), machine_db.clone());
        let run = compare(
            &harness,
            tool,
            arguments.clone(),
            plain(plain_db.clone()),
            script,
        )
        .await;
        if run.plain_only {
            runs.push((run, plain_db.snapshot()));
            continue;
        }
        assert_eq!(
            machine_db.snapshot(),
            plain_db.snapshot(),
            "script `{}`: the databases differ (machine left, plain right)",
            script.name
        );
        runs.push((run, machine_db.snapshot()));
    }
    runs
}

ready! {
    "waiting (5, issue item 1): `pool: State<Pool>`";
    everyday! {
        async fn purge_inactive(pool: State<Pool>, days: u32) -> Result<String, ToolError> {
            let candidates = pool.inactive_users(days).await;
            if candidates.is_empty() {
                return Ok(format!("nobody inactive for {days} days"));
            }
            let mut deleted: Vec<String> = Vec::new();
            for user in candidates {
                let question = if user.admin {
                    format!("{} is an ADMIN, inactive {} days. Delete anyway?", user.name, user.inactive_days)
                } else {
                    format!("Delete {} (inactive {} days)?", user.name, user.inactive_days)
                };
                if !ask!(confirm(question)).accepted()? {
                    continue;
                }
                pool.delete_user(user.id).await?;
                deleted.push(user.name);
            }
            Ok(format!("deleted {}: {}", deleted.len(), deleted.join(", ")))
        }
    }

    #[tokio::test]
    async fn purge_inactive_state_pool() {
        let scripts = [
            Script::accept("delete all"),
            Script::accept("spare admins").rule(|q, _| q.message.contains("ADMIN").then(|| yes_no(false))),
            Script::accept("cancel second").cancel_at(1),
        ];
        let runs = check_with_pool(
            &purge_inactive::purge_inactive,
            json!({"days": 100}),
            |harness, pool| harness.app_state(pool),
            |pool| purge_inactive::plain(State(pool), 100),
            &scripts,
        )
        .await;
        // inactive days: ada 37, bob 74, cyd 111, dee 148 (admin), eve 185, fay 22, gus 59, hal 96 (admin)
        assert_eq!(runs[0].0.ok(), "deleted 3: cyd, dee, eve");
        assert_eq!(runs[0].1.reads, 1);
        assert_eq!(runs[0].1.writes, ["delete 3", "delete 4", "delete 5"]);
        assert_eq!(runs[1].0.ok(), "deleted 2: cyd, eve");
        assert_eq!(runs[1].0.asked[1], "dee is an ADMIN, inactive 148 days. Delete anyway?");
        assert_eq!(runs[2].0.err(), "the user cancelled");
        assert_eq!(runs[2].1.writes, ["delete 3"]);
        assert_eq!(runs[2].1.reads, 1);
    }
}

ready! {
    "waiting (5, issue item 1): destructured `State(pool): State<Arc<Pool>>`";
    everyday! {
        async fn open_ticket(State(pool): State<Arc<Pool>>, reporter: u32) -> Result<String, ToolError> {
            let user = pool.user(reporter).await?;
            let title = ask!(text(format!("{}, what is the problem?", user.name))).accepted()?;
            let priority = ask!(choice("Priority?", ["low", "normal", "urgent"])).accepted()?;
            if priority == "urgent" && !user.admin {
                let really = ask!(confirm("Urgent tickets page the on-call engineer. Sure?")).accepted()?;
                if !really {
                    return Ok("ticket not opened".into());
                }
            }
            let number = pool.insert_ticket(format!("[{priority}] {} (by {})", title.trim(), user.name)).await;
            Ok(format!("ticket #{number} opened"))
        }
    }

    #[tokio::test]
    async fn open_ticket_destructured_state() {
        let scripts = [
            Script::accept("normal").texts(["VPN drops"]).pick(Pick::Rotate),
            Script::accept("urgent, then no").texts(["site down"]).pick(Pick::Last).confirm(false),
            Script::accept("urgent").texts(["site down "]).pick(Pick::Last),
        ];
        let runs = check_with_pool(
            &open_ticket::open_ticket,
            json!({"reporter": 2}),
            |harness, pool| harness.app_state(Arc::new(pool)),
            |pool| open_ticket::plain(State(Arc::new(pool)), 2),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].0.ok(), "ticket #1 opened");
        assert_eq!(runs[0].1.tickets, ["[normal] VPN drops (by bob)"]);
        assert_eq!(runs[1].0.ok(), "ticket not opened");
        assert!(runs[1].1.writes.is_empty());
        assert_eq!(runs[2].1.tickets, ["[urgent] site down (by bob)"]);
        assert_eq!(runs[2].1.reads, 1);
        let missing = check_with_pool(
            &open_ticket::open_ticket,
            json!({"reporter": 99}),
            |harness, pool| harness.app_state(Arc::new(pool)),
            |pool| open_ticket::plain(State(Arc::new(pool)), 99),
            &scripts[..1],
        )
        .await;
        assert_eq!(missing[0].0.err(), "database: no user 99");
        assert_eq!(missing[0].0.rounds, 0);
    }
}

ready! {
    "waiting (5, issue item 1): a shared counter `State<Counter>` incremented before the first suspension";
    everyday! {
        async fn feedback(hits: State<Counter>, page: String) -> Result<String, ToolError> {
            let visitor = hits.increment();
            let rating = ask!(choice(format!("How was {page}? (visitor #{visitor})"), ["1", "2", "3", "4", "5"])).accepted()?;
            let comment = if rating.parse::<u8>()? <= 2 {
                ask!(text("What went wrong?")).ok().unwrap_or_default()
            } else {
                String::new()
            };
            Ok(format!("{page}: {rating}/5 from visitor #{visitor} of {} {comment}", hits.get()).trim_end().to_string())
        }
    }

    #[tokio::test]
    async fn feedback_state_counter() {
        let scripts = [
            Script::accept("five").pick(Pick::Last),
            Script::accept("one").texts(["slow"]),
            Script::accept("cancel").cancel_at(0),
        ];
        let (machine_hits, plain_hits) = (Counter::default(), Counter::default());
        let harness = Harness::new().app_state(machine_hits.clone());
        let mut runs = Vec::new();
        for script in &scripts {
            runs.push(
                compare(
                    &harness,
                    &feedback::feedback,
                    json!({"page": "/pricing"}),
                    feedback::plain(State(plain_hits.clone()), "/pricing".into()),
                    script,
                )
                .await,
            );
            // Once per flow, however many rounds it took.
            if !runs.last().unwrap().plain_only {
                assert_eq!(machine_hits.get(), plain_hits.get());
            }
        }
        assert_eq!(runs[0].ok(), "/pricing: 5/5 from visitor #1 of 1");
        assert_eq!(runs[1].ok(), "/pricing: 1/5 from visitor #2 of 2 slow");
        assert_eq!(runs[1].rounds, 2);
        assert_eq!(runs[2].err(), "the user cancelled");
        assert_eq!(plain_hits.get(), 3);
        if !runs[0].plain_only {
            assert_eq!(machine_hits.get(), 3);
        }
    }
}

ready! {
    "waiting (5, issue item 1): two states, `State<Pool>` and `State<Config>`, used after suspensions";
    everyday! {
        async fn promote_admins(pool: State<Pool>, config: State<Config>, ids: Vec<u32>) -> Result<String, ToolError> {
            let mut changed: Vec<String> = Vec::new();
            for id in ids {
                let user = pool.user(id).await?;
                if user.admin {
                    continue;
                }
                let promote = ask!(confirm(format!("Make {} an admin?", user.name))).accepted()?;
                if !promote {
                    continue;
                }
                if changed.len() >= config.max_changes {
                    return Err(ToolError::new(format!("at most {} change(s) per call", config.max_changes)));
                }
                if !config.dry_run {
                    pool.set_admin(id, true).await?;
                }
                changed.push(user.name);
            }
            let mode = if config.dry_run { "would promote" } else { "promoted" };
            Ok(format!("{mode} [{}]; {} write(s) in total", changed.join(", "), pool.write_count()))
        }
    }

    #[tokio::test]
    async fn promote_admins_two_states() {
        let scripts = [
            Script::accept("all"),
            Script::accept("not cyd").when("cyd", yes_no(false)),
            Script::accept("declined").decline_at(1),
        ];
        for (max_changes, dry_run) in [(5, false), (2, false), (5, true)] {
            let runs = check_with_pool(
                &promote_admins::promote_admins,
                json!({"ids": [1, 4, 3, 5, 42]}),
                |harness, pool| harness.app_state(pool).app_state(Config { max_changes, dry_run }),
                |pool| promote_admins::plain(State(pool), State(Config { max_changes, dry_run }), vec![1, 4, 3, 5, 42]),
                &scripts,
            )
            .await;
            match (max_changes, dry_run) {
                (5, false) => {
                    // Everybody is found up to #42, which does not exist.
                    assert_eq!(runs[0].0.err(), "database: no user 42");
                    assert_eq!(runs[0].1.writes, ["admin 1 true", "admin 3 true", "admin 5 true"]);
                    assert_eq!(runs[0].1.reads, 5);
                    assert_eq!(runs[1].1.writes, ["admin 1 true", "admin 5 true"]);
                    assert_eq!(runs[2].0.err(), "the user declined");
                }
                (2, false) => {
                    assert_eq!(runs[0].0.err(), "at most 2 change(s) per call");
                    assert_eq!(runs[0].1.writes.len(), 2);
                }
                _ => {
                    assert_eq!(runs[0].0.err(), "database: no user 42");
                    assert!(runs[0].1.writes.is_empty());
                    assert_eq!(runs[0].0.asked, ["Make ada an admin?", "Make cyd an admin?", "Make eve an admin?"]);
                }
            }
        }
    }
}

ready! {
    "waiting (5, issue item 1): `State<Pool>` written to on every iteration, with an error mid-way";
    everyday! {
        async fn import_users(pool: State<Pool>, names: Vec<String>) -> Result<String, ToolError> {
            let mut created: Vec<u32> = Vec::new();
            for name in names {
                let role = ask!(choice(format!("Role for {name}?"), ["member", "admin", "skip"])).accepted()?;
                if role == "skip" {
                    continue;
                }
                let id = pool
                    .insert_user(&name, role == "admin")
                    .await
                    .map_err(|e| ToolError::new(format!("{e} (created so far: {created:?})")))?;
                created.push(id);
            }
            Ok(format!("created {created:?}; {} users now", pool.snapshot().users.len()))
        }
    }

    #[tokio::test]
    async fn import_users_writes_once_per_round() {
        let scripts = [
            Script::accept("members"),
            Script::accept("rotate").pick(Pick::Rotate),
            Script::accept("cancel").cancel_at(2),
        ];
        let names = vec!["ivy".to_string(), "jon".to_string(), "kit".to_string(), "bob".to_string()];
        let runs = check_with_pool(
            &import_users::import_users,
            json!({"names": names}),
            |harness, pool| harness.app_state(pool),
            |pool| import_users::plain(State(pool), names.clone()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].0.err(), "database: `bob` exists (created so far: [9, 10, 11])");
        assert_eq!(runs[0].1.writes, ["insert 9 ivy", "insert 10 jon", "insert 11 kit"]);
        // member, admin, skip, member(bob: exists)
        assert_eq!(runs[1].0.err(), "database: `bob` exists (created so far: [9, 10])");
        assert!(runs[1].1.users[&10].admin);
        assert_eq!(runs[2].0.err(), "the user cancelled");
        assert_eq!(runs[2].1.writes.len(), 2);
    }
}

ready! {
    "waiting (5, issue item 1): `State<Pool>` read again after the suspension sees the current data";
    everyday! {
        async fn rename_user(pool: State<Pool>, id: u32) -> Result<String, ToolError> {
            let before = pool.user(id).await?;
            let new_name = ask!(text(format!("New name for {}?", before.name))).accepted()?;
            let new_name = new_name.trim().to_lowercase();
            if new_name == before.name {
                return Ok("unchanged".into());
            }
            pool.rename(id, &new_name).await?;
            let after = pool.user(id).await?;
            let announce = ask!(confirm(format!("Announce {} -> {}?", before.name, after.name))).accepted()?;
            let now = pool.user(id).await?;
            Ok(format!("{} -> {} (announce: {announce}, {} write(s))", before.name, now.name, pool.write_count()))
        }
    }

    #[tokio::test]
    async fn rename_user_reads_after_suspension() {
        let scripts = [
            Script::accept("rename").texts([" Adele "]),
            Script::accept("same").texts(["ada"]),
            Script::accept("quiet").texts(["ace"]).confirm(false),
        ];
        let runs = check_with_pool(
            &rename_user::rename_user,
            json!({"id": 1}),
            |harness, pool| harness.app_state(pool),
            |pool| rename_user::plain(State(pool), 1),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].0.ok(), "ada -> adele (announce: true, 1 write(s))");
        assert_eq!(runs[0].0.asked[1], "Announce ada -> adele?");
        assert_eq!(runs[0].1.reads, 3);
        assert_eq!(runs[1].0.ok(), "unchanged");
        assert_eq!(runs[2].0.ok(), "ada -> ace (announce: false, 1 write(s))");
        assert_eq!(runs[2].1.users[&1].name, "ace");
    }
}
