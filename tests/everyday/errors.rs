//! Category 6: error paths — `?` on the author's own `Result` types, early
//! `return Err(ToolError::..)`, decline / cancel handled explicitly, `.ok_or(..)?`.

use std::fmt;

use mrtr::machine::{Elicited, NotAccepted, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::support::{Pick, Script, check, pick, yes_no};

// ---------------------------------------------------------------------------------------
// A ticketing backend with its own error type.

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ticket {
    pub id: u32,
    pub title: String,
}

#[derive(Debug)]
pub enum TicketError {
    NotFound(u32),
    Invalid(String),
    Aborted(NotAccepted),
}

impl fmt::Display for TicketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TicketError::NotFound(id) => write!(f, "ticket #{id} not found"),
            TicketError::Invalid(text) => write!(f, "invalid input: {text}"),
            TicketError::Aborted(why) => write!(f, "aborted: {why}"),
        }
    }
}

impl std::error::Error for TicketError {}

impl From<NotAccepted> for TicketError {
    fn from(why: NotAccepted) -> Self {
        TicketError::Aborted(why)
    }
}

pub fn find_ticket(id: u32) -> Option<Ticket> {
    let titles = [
        "Login fails",
        "Slow search",
        "Typo in footer",
        "Crash on upload",
    ];
    (1..=8).contains(&id).then(|| Ticket {
        id,
        title: titles[id as usize % titles.len()].to_string(),
    })
}

ready! {
    everyday! {
        async fn close_ticket(id: u32) -> Result<String, TicketError> {
            let ticket = find_ticket(id).ok_or(TicketError::NotFound(id))?;
            let reason = ask!(choice(
                format!("Why close #{id} ({})?", ticket.title),
                ["fixed", "duplicate", "wontfix"]
            ))
            .accepted()?;
            let duplicate_of = if reason == "duplicate" {
                let text = ask!(text("Duplicate of which ticket?")).accepted()?;
                let other: u32 = text
                    .trim()
                    .trim_start_matches('#')
                    .parse()
                    .map_err(|_| TicketError::Invalid(text.clone()))?;
                if other == id {
                    return Err(TicketError::Invalid(format!("#{id} cannot duplicate itself")));
                }
                Some(find_ticket(other).ok_or(TicketError::NotFound(other))?.id)
            } else {
                None
            };
            let close = ask!(confirm(format!("Close #{id} as {reason}?"))).accepted()?;
            if !close {
                return Ok(format!("#{id} left open"));
            }
            Ok(match duplicate_of {
                Some(other) => format!("#{id} closed as duplicate of #{other}"),
                None => format!("#{id} closed: {reason}"),
            })
        }
    }

    #[tokio::test]
    async fn close_ticket_error_paths() {
        let duplicate = || Script::accept("duplicate").when("Why close", pick("duplicate"));
        let scripts = [
            Script::accept("fixed"),
            Script::accept("wontfix, kept open").pick(Pick::Last).confirm(false),
            duplicate().texts(["#3"]),
            duplicate().texts(["7"]),
            duplicate().texts(["#42"]),
            duplicate().texts(["three"]),
            Script::accept("declined").decline_at(0),
            duplicate().texts(["2"]).cancel_at(2),
        ];
        let runs = check(
            &close_ticket::close_ticket,
            json!({"id": 7}),
            || close_ticket::plain(7),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "#7 closed: fixed");
        assert_eq!(runs[0].asked[0], "Why close #7 (Crash on upload)?");
        assert_eq!(runs[1].ok(), "#7 left open");
        assert_eq!(runs[2].ok(), "#7 closed as duplicate of #3");
        assert_eq!(runs[3].err(), "invalid input: #7 cannot duplicate itself");
        assert_eq!(runs[4].err(), "ticket #42 not found");
        assert_eq!(runs[5].err(), "invalid input: three");
        assert_eq!(runs[6].err(), "aborted: the user declined");
        assert_eq!(runs[7].err(), "aborted: the user cancelled");
        assert_eq!(runs[7].rounds, 3);

        let missing = check(
            &close_ticket::close_ticket,
            json!({"id": 99}),
            || close_ticket::plain(99),
            &[Script::accept("missing")],
        )
        .await;
        assert_eq!(missing[0].err(), "ticket #99 not found");
        assert_eq!(missing[0].rounds, 0);
    }
}

// ---------------------------------------------------------------------------------------
// Importing contacts: a parser with its own error enum, kept across a suspension.

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Contact {
    pub name: String,
    pub email: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum ContactError {
    MissingEmail(String),
    Malformed(String),
}

impl fmt::Display for ContactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContactError::MissingEmail(name) => write!(f, "{name} has no email"),
            ContactError::Malformed(line) => write!(f, "line `{line}` is malformed"),
        }
    }
}

impl std::error::Error for ContactError {}

pub fn parse_contact(line: &str) -> Result<Contact, ContactError> {
    let fields: Vec<&str> = line.split(';').map(str::trim).collect();
    match fields.as_slice() {
        [name, email] if !name.is_empty() && email.contains('@') => Ok(Contact {
            name: name.to_string(),
            email: email.to_string(),
        }),
        [name] | [name, ""] if !name.is_empty() => {
            Err(ContactError::MissingEmail(name.to_string()))
        }
        _ => Err(ContactError::Malformed(line.to_string())),
    }
}

ready! {
    everyday! {
        async fn import_contacts(csv: String) -> Result<String, ToolError> {
            let lines: Vec<String> = csv
                .lines()
                .filter(|line| !line.trim().is_empty())
                .map(String::from)
                .collect();
            let mut imported: Vec<Contact> = Vec::new();
            let mut skipped = 0u32;
            for line in lines {
                let contact = match parse_contact(&line) {
                    Ok(contact) => contact,
                    Err(ContactError::MissingEmail(name)) => {
                        let email = ask!(text(format!("Email for {name}?"))).accepted()?;
                        if !email.contains('@') {
                            return Err(ToolError::new(format!("`{email}` is not an email address")));
                        }
                        Contact { name, email }
                    }
                    Err(error) => {
                        if ask!(confirm(format!("{error}. Skip it?"))).accepted()? {
                            skipped += 1;
                            continue;
                        }
                        return Err(error.into());
                    }
                };
                imported.push(contact);
            }
            let names: Vec<String> = imported.iter().map(|c| format!("{} <{}>", c.name, c.email)).collect();
            Ok(format!("imported {}, skipped {skipped}: {}", imported.len(), names.join(", ")))
        }
    }

    #[tokio::test]
    async fn import_contacts_error_paths() {
        let csv = "Ada; ada@example.com\nGrace\n\n???;;;\nLinus;\nKen; ken@example.com\n";
        let scripts = [
            Script::accept("emails given").text_by(|q| {
                let name = q.trim_start_matches("Email for ").trim_end_matches('?');
                format!("{}@example.com", name.to_lowercase())
            }),
            Script::accept("not an email").texts(["grace at home"]),
            Script::accept("refuse to skip").texts(["x@y.z"]).confirm(false),
            Script::accept("declined email").decline_at(0),
            Script::accept("cancelled skip").texts(["x@y.z"]).cancel_at(1),
        ];
        let runs = check(
            &import_contacts::import_contacts,
            json!({"csv": csv}),
            || import_contacts::plain(csv.to_string()),
            &scripts,
        )
        .await;
        assert_eq!(
            runs[0].ok(),
            "imported 4, skipped 1: Ada <ada@example.com>, Grace <grace@example.com>, \
             Linus <linus@example.com>, Ken <ken@example.com>"
        );
        assert_eq!(
            runs[0].asked,
            ["Email for Grace?", "line `???;;;` is malformed. Skip it?", "Email for Linus?"]
        );
        assert_eq!(runs[1].err(), "`grace at home` is not an email address");
        assert_eq!(runs[2].err(), "line `???;;;` is malformed");
        assert_eq!(runs[3].err(), "the user declined");
        assert_eq!(runs[4].err(), "the user cancelled");
    }
}

// ---------------------------------------------------------------------------------------
// Rolling a service back: `.ok_or(..)?` and `.ok_or_else(..)?` on lookups.

pub fn release_history(service: &str) -> Option<Vec<String>> {
    match service {
        "api" => Some(vec![
            "2.4.0".into(),
            "2.3.1".into(),
            "2.3.0".into(),
            "2.2.9".into(),
        ]),
        "web" => Some(vec!["1.0.1".into(), "1.0.0".into()]),
        _ => None,
    }
}

ready! {
    everyday! {
        async fn rollback(service: String, version: Option<String>) -> Result<String, ToolError> {
            let history = release_history(&service)
                .ok_or_else(|| ToolError::new(format!("unknown service `{service}`")))?;
            let target = match version {
                Some(version) => version,
                None => ask!(choice(
                    format!("Roll {service} back to?"),
                    history.iter().skip(1).cloned()
                ))
                .accepted()?,
            };
            let position = history
                .iter()
                .position(|v| *v == target)
                .ok_or(ToolError::new(format!("{target} was never released")))?;
            if position == 0 {
                return Err(ToolError::new(format!("{target} is already live")));
            }
            let go = ask!(confirm(format!(
                "Roll {service} back {position} release(s), from {} to {target}?",
                history[0]
            )))
            .accepted()?;
            if !go {
                return Ok(format!("{service} stays on {}", history[0]));
            }
            Ok(format!("{service} rolled back to {target}"))
        }
    }

    #[tokio::test]
    async fn rollback_error_paths() {
        let scripts = [
            Script::accept("first"),
            Script::accept("oldest, then no").pick(Pick::Last).confirm(false),
            Script::accept("cancel").cancel_at(1),
        ];
        let runs = check(
            &rollback::rollback,
            json!({"service": "api"}),
            || rollback::plain("api".into(), None),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "api rolled back to 2.3.1");
        assert_eq!(runs[1].ok(), "api stays on 2.4.0");
        assert_eq!(runs[1].asked[1], "Roll api back 3 release(s), from 2.4.0 to 2.2.9?");
        assert_eq!(runs[2].err(), "the user cancelled");

        for (service, version, expected) in [
            ("db", None, "unknown service `db`"),
            ("web", Some("0.9.0"), "0.9.0 was never released"),
            ("web", Some("1.0.1"), "1.0.1 is already live"),
        ] {
            let runs = check(
                &rollback::rollback,
                json!({"service": service, "version": version}),
                || rollback::plain(service.into(), version.map(String::from)),
                &[Script::accept("given version")],
            )
            .await;
            assert_eq!(runs[0].err(), expected);
            assert_eq!(runs[0].rounds, 0);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Offboarding: decline and cancel handled explicitly by matching on `Elicited`.

ready! {
    everyday! {
        async fn offboard(user: String) -> Result<String, ToolError> {
            let mut steps: Vec<String> = Vec::new();
            match ask!(confirm(format!("Revoke all access for {user}?"))) {
                Elicited::Accept(true) => steps.push(format!("revoked {user}")),
                Elicited::Accept(false) => return Ok(format!("{user}: nothing changed")),
                Elicited::Decline => return Err(ToolError::new("offboarding needs a decision")),
                Elicited::Cancel => return Ok("cancelled".to_string()),
            }
            let transfer_to = match ask!(text(format!("Who receives {user}'s documents?"))) {
                Elicited::Accept(name) if name.trim().is_empty() => None,
                Elicited::Accept(name) => Some(name.trim().to_string()),
                Elicited::Decline => None,
                Elicited::Cancel => return Ok(format!("cancelled after: {}", steps.join(", "))),
            };
            match transfer_to {
                Some(to) => steps.push(format!("documents to {to}")),
                None => {
                    let archive = ask!(confirm("Archive the documents instead?")).ok().unwrap_or(false);
                    steps.push(if archive { "archived".to_string() } else { "deleted".to_string() });
                }
            }
            Ok(steps.join(", "))
        }
    }

    #[tokio::test]
    async fn offboard_decline_and_cancel() {
        let scripts = [
            Script::accept("transfer").texts([" bob "]),
            Script::accept("blank name, archive").texts(["  "]),
            Script::accept("decline transfer, delete").decline_at(1).confirm(true).rule(|q, _| {
                q.message.starts_with("Archive").then(|| yes_no(false))
            }),
            Script::accept("keep").confirm(false),
            Script::accept("decline first").decline_at(0),
            Script::accept("cancel first").cancel_at(0),
            Script::accept("cancel second").cancel_at(1),
            Script::accept("cancel archive").texts([""]).cancel_at(2),
        ];
        let runs = check(
            &offboard::offboard,
            json!({"user": "carol"}),
            || offboard::plain("carol".into()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "revoked carol, documents to bob");
        assert_eq!(runs[1].ok(), "revoked carol, archived");
        assert_eq!(runs[2].ok(), "revoked carol, deleted");
        assert_eq!(runs[3].ok(), "carol: nothing changed");
        assert_eq!(runs[4].err(), "offboarding needs a decision");
        assert_eq!(runs[5].ok(), "cancelled");
        assert_eq!(runs[6].ok(), "cancelled after: revoked carol");
        assert_eq!(runs[7].ok(), "revoked carol, deleted");
    }
}

// ---------------------------------------------------------------------------------------
// A retry loop that gives up with an error after `max_attempts`.

ready! {
    everyday! {
        async fn password_policy(max_attempts: u32) -> Result<String, ToolError> {
            let mut attempts = 0;
            let length = loop {
                attempts += 1;
                let answer = ask!(text(format!("Minimum password length (attempt {attempts})?")))
                    .accepted()?;
                match answer.trim().parse::<u32>() {
                    Ok(n) if (8..=128).contains(&n) => break n,
                    Ok(n) => {
                        if attempts >= max_attempts {
                            return Err(ToolError::new(format!("{n} is out of range (8..=128), giving up")));
                        }
                    }
                    Err(error) => {
                        if attempts >= max_attempts {
                            return Err(error.into());
                        }
                    }
                }
            };
            Ok(format!("minimum length {length} after {attempts} attempt(s)"))
        }
    }

    #[tokio::test]
    async fn password_policy_gives_up() {
        let scripts = [
            Script::accept("third time").texts(["5", "abc", "12"]),
            Script::accept("first time").texts(["64"]),
            Script::accept("always short").texts(["4"]),
            Script::accept("not a number").texts(["6", "7", "six"]),
            Script::accept("declined").texts(["300"]).decline_at(1),
        ];
        let runs = check(
            &password_policy::password_policy,
            json!({"max_attempts": 3}),
            || password_policy::plain(3),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "minimum length 12 after 3 attempt(s)");
        assert_eq!(runs[1].ok(), "minimum length 64 after 1 attempt(s)");
        assert_eq!(runs[2].err(), "4 is out of range (8..=128), giving up");
        assert_eq!(runs[2].rounds, 3);
        assert_eq!(runs[3].err(), "invalid digit found in string");
        assert_eq!(runs[4].err(), "the user declined");
    }
}

// ---------------------------------------------------------------------------------------
// Bulk refunds: `.await?` on an async backend with its own error type, mid-loop.

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Order {
    pub id: u32,
    pub amount_cents: u64,
    pub refundable: bool,
}

#[derive(Debug)]
pub enum PaymentError {
    UnknownOrder(u32),
    NotRefundable(u32),
}

impl fmt::Display for PaymentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PaymentError::UnknownOrder(id) => write!(f, "order #{id} does not exist"),
            PaymentError::NotRefundable(id) => write!(f, "order #{id} is not refundable"),
        }
    }
}

impl std::error::Error for PaymentError {}

pub async fn load_order(id: u32) -> Result<Order, PaymentError> {
    tokio::task::yield_now().await;
    if id >= 100 {
        return Err(PaymentError::UnknownOrder(id));
    }
    Ok(Order {
        id,
        amount_cents: u64::from(id) * 4_000,
        refundable: !id.is_multiple_of(7),
    })
}

pub async fn refund(order: &Order) -> Result<(), PaymentError> {
    tokio::task::yield_now().await;
    if order.refundable {
        Ok(())
    } else {
        Err(PaymentError::NotRefundable(order.id))
    }
}

pub fn dollars(cents: u64) -> String {
    format!("${}.{:02}", cents / 100, cents % 100)
}

ready! {
    everyday! {
        async fn bulk_refund(order_ids: Vec<u32>) -> Result<String, ToolError> {
            let mut refunded = Vec::new();
            let mut total_cents = 0u64;
            for id in order_ids {
                let order = load_order(id).await?;
                if order.amount_cents > 10_000 {
                    let ok = ask!(confirm(format!(
                        "Refund order #{id} of {}?",
                        dollars(order.amount_cents)
                    )))
                    .accepted()?;
                    if !ok {
                        continue;
                    }
                }
                refund(&order)
                    .await
                    .map_err(|e| ToolError::new(format!("stopped after {refunded:?}: {e}")))?;
                total_cents += order.amount_cents;
                refunded.push(id);
            }
            Ok(format!("refunded {refunded:?}, {}", dollars(total_cents)))
        }
    }

    #[tokio::test]
    async fn bulk_refund_backend_errors() {
        let scripts = [
            Script::accept("all"),
            Script::accept("none").confirm(false),
            Script::accept("second declined").decline_at(1),
        ];
        let ids = vec![1, 2, 5, 3];
        let runs = check(
            &bulk_refund::bulk_refund,
            json!({"order_ids": ids}),
            || bulk_refund::plain(ids.clone()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "refunded [1, 2, 5, 3], $440.00");
        assert_eq!(runs[0].asked, ["Refund order #5 of $200.00?", "Refund order #3 of $120.00?"]);
        assert_eq!(runs[1].ok(), "refunded [1, 2], $120.00");
        assert_eq!(runs[2].err(), "the user declined");

        let ids = vec![2, 14, 3];
        let runs = check(
            &bulk_refund::bulk_refund,
            json!({"order_ids": ids}),
            || bulk_refund::plain(ids.clone()),
            &[Script::accept("not refundable")],
        )
        .await;
        assert_eq!(runs[0].err(), "stopped after [2]: order #14 is not refundable");

        let ids = vec![4, 100];
        let runs = check(
            &bulk_refund::bulk_refund,
            json!({"order_ids": ids}),
            || bulk_refund::plain(ids.clone()),
            &[Script::accept("unknown")],
        )
        .await;
        assert_eq!(runs[0].err(), "order #100 does not exist");
        assert_eq!(runs[0].rounds, 1);
    }
}

// ---------------------------------------------------------------------------------------
// `Option` as the return type: `?` on `Option` before and after suspensions.

pub fn lookup_manager(employee: &str) -> Option<String> {
    match employee {
        "dana" => Some("erin".into()),
        "erin" => Some("frank".into()),
        "frank" => None,
        _ => None,
    }
}

ready! {
    everyday! {
        async fn escalate(employee: String) -> Option<String> {
            let mut chain = vec![employee.clone()];
            let mut current = employee;
            loop {
                let manager = lookup_manager(&current)?;
                let go_on = ask!(confirm(format!("Escalate from {current} to {manager}?"))).ok()?;
                chain.push(manager.clone());
                if !go_on {
                    break;
                }
                current = manager;
            }
            let note = ask!(text(format!("Note for {}?", chain.last()?))).ok()?;
            Some(format!("{} ({note})", chain.join(" -> ")))
        }
    }

    #[tokio::test]
    async fn escalate_option_question_mark() {
        let scripts = [
            Script::accept("stop at first").confirm(false).texts(["urgent"]),
            Script::accept("to the top"),
            Script::accept("declined note").confirm(false).decline_at(1),
            Script::accept("cancelled").cancel_at(0),
        ];
        let runs = check(
            &escalate::escalate,
            json!({"employee": "dana"}),
            || escalate::plain("dana".into()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "dana -> erin (urgent)");
        // Frank has no manager: `?` on the lookup ends the flow with `None`.
        assert!(runs[1].is_error);
        assert_eq!(runs[1].asked, ["Escalate from dana to erin?", "Escalate from erin to frank?"]);
        assert!(runs[2].is_error);
        assert!(runs[3].is_error);
        assert_eq!(runs[3].rounds, 1);
    }
}
