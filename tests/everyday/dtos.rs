//! Category 4: DTO structs from another crate kept across a suspension. Types whose serde
//! shape postcard cannot store (`skip_serializing_if`, `untagged`, `flatten`, internally
//! tagged enums, `serde_json::Value`) go through the planned `AsJson<T>` wrapper; a type
//! without serde at all is only used between suspensions; the author's own serde-derived
//! DTOs are stored directly.

use std::collections::BTreeMap;

use mrtr::machine::{Elicited, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::support::{Pick, Script, check, decline, pick, yes_no};
use mrtr::machine::AsJson;

/// Stands in for a third-party API client crate (an issue tracker / CRM / CI SDK): its
/// types are what they are, the tool author cannot change their derives.
pub mod other_crate {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Serialize};
    use serde_json::{Value, json};

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Issue {
        pub number: u64,
        pub title: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub assignee: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub labels: Vec<String>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(untagged)]
    pub enum CustomerId {
        Numeric(u64),
        Handle(String),
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Customer {
        pub id: CustomerId,
        pub name: String,
        #[serde(flatten)]
        pub attributes: BTreeMap<String, Value>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    pub enum PipelineEvent {
        Push { branch: String, commits: u32 },
        Tag { name: String },
        PullRequest { number: u64, draft: bool },
    }

    /// A builder from an email SDK: no serde at all.
    #[derive(Debug, Clone)]
    pub struct EmailDraft {
        to: Vec<String>,
        subject: String,
        lines: Vec<String>,
    }

    impl EmailDraft {
        pub fn new(subject: impl Into<String>) -> Self {
            EmailDraft {
                to: Vec::new(),
                subject: subject.into(),
                lines: Vec::new(),
            }
        }
        pub fn to(mut self, address: &str) -> Self {
            self.to.push(address.to_string());
            self
        }
        pub fn line(mut self, line: impl Into<String>) -> Self {
            self.lines.push(line.into());
            self
        }
        pub fn render(&self) -> String {
            format!(
                "To: {} | {} | {}",
                self.to.join(", "),
                self.subject,
                self.lines.join(" / ")
            )
        }
    }

    pub fn fetch_issue(number: u64) -> Issue {
        Issue {
            number,
            title: format!("Crash when saving draft {number}"),
            assignee: number.is_multiple_of(2).then(|| "lee".to_string()),
            labels: if number.is_multiple_of(3) {
                vec!["bug".into()]
            } else {
                Vec::new()
            },
        }
    }

    pub fn list_issues(repo: &str) -> Vec<Issue> {
        (1..=4)
            .map(|n| Issue {
                number: n * 10,
                title: format!("{repo} issue {n}"),
                assignee: (n == 2).then(|| "kai".to_string()),
                labels: if n % 2 == 1 {
                    vec!["triage".into()]
                } else {
                    Vec::new()
                },
            })
            .collect()
    }

    pub fn fetch_customer(handle: &str) -> Option<Customer> {
        let mut attributes = BTreeMap::new();
        attributes.insert("plan".to_string(), json!("pro"));
        attributes.insert("seats".to_string(), json!(12));
        attributes.insert("tags".to_string(), json!(["eu", "annual"]));
        match handle {
            "acme" => Some(Customer {
                id: CustomerId::Numeric(4711),
                name: "ACME Corp".into(),
                attributes,
            }),
            "initech" => Some(Customer {
                id: CustomerId::Handle("initech-01".into()),
                name: "Initech".into(),
                attributes: BTreeMap::new(),
            }),
            _ => None,
        }
    }

    pub fn pipeline_events() -> Vec<PipelineEvent> {
        vec![
            PipelineEvent::Push {
                branch: "main".into(),
                commits: 3,
            },
            PipelineEvent::PullRequest {
                number: 88,
                draft: true,
            },
            PipelineEvent::Tag {
                name: "v2.0.0".into(),
            },
            PipelineEvent::PullRequest {
                number: 90,
                draft: false,
            },
        ]
    }
}

use other_crate::{
    Customer, CustomerId, EmailDraft, PipelineEvent, fetch_customer, fetch_issue, list_issues,
    pipeline_events,
};

ready! {
    "waiting (4, issue: storage wrapper): `AsJson<Issue>` (skip_serializing_if) kept and mutated across suspensions";
    everyday! {
        async fn triage_issue(number: u64) -> Result<String, ToolError> {
            let mut issue = AsJson(fetch_issue(number));
            if issue.assignee.is_none() {
                let who = ask!(choice(format!("#{} `{}` has no assignee. Assign to?", issue.number, issue.title), ["lee", "kai", "nobody"]))
                    .accepted()?;
                if who != "nobody" {
                    issue.assignee = Some(who);
                }
            }
            let labels = ask!(multi_choice(format!("Labels for #{}?", issue.number), ["bug", "ux", "p1"])).accepted()?;
            for label in labels {
                if !issue.labels.contains(&label) {
                    issue.labels.push(label);
                }
            }
            let saved: other_crate::Issue = issue.0;
            Ok(serde_json::to_string(&saved)?)
        }
    }

    #[tokio::test]
    async fn triage_issue_as_json_skip_serializing_if() {
        let scripts = [
            Script::accept("first"),
            Script::accept("nobody, p1").pick(Pick::Last),
            Script::accept("cancel").cancel_at(0),
        ];
        let odd = check(&triage_issue::triage_issue, json!({"number": 3}), || triage_issue::plain(3), &scripts).await;
        assert_eq!(odd[0].ok(), r#"{"number":3,"title":"Crash when saving draft 3","assignee":"lee","labels":["bug"]}"#);
        assert_eq!(odd[1].ok(), r#"{"number":3,"title":"Crash when saving draft 3","labels":["bug","p1"]}"#);
        assert_eq!(odd[2].err(), "the user cancelled");
        let even = check(&triage_issue::triage_issue, json!({"number": 4}), || triage_issue::plain(4), &scripts).await;
        assert_eq!(even[0].ok(), r#"{"number":4,"title":"Crash when saving draft 4","assignee":"lee","labels":["bug"]}"#);
        assert_eq!(even[0].rounds, 1);
    }
}

ready! {
    "waiting (4, issue: storage wrapper): `AsJson<Customer>` (untagged id, flattened attributes) kept across suspensions";
    everyday! {
        async fn upgrade_customer(handle: String) -> Result<String, ToolError> {
            let customer: AsJson<Customer> = AsJson(
                fetch_customer(&handle).ok_or_else(|| ToolError::new(format!("no customer `{handle}`")))?,
            );
            let plan = ask!(choice(format!("New plan for {}?", customer.name), ["pro", "enterprise"])).accepted()?;
            let current = customer.attributes.get("plan").and_then(Value::as_str).unwrap_or("free").to_string();
            if current == plan {
                return Ok(format!("{} is already on {plan}", customer.name));
            }
            let seats = customer.attributes.get("seats").and_then(Value::as_u64).unwrap_or(1);
            let confirm = ask!(confirm(format!("Move {} ({seats} seats) from {current} to {plan}?", customer.name))).accepted()?;
            if !confirm {
                return Ok("no change".into());
            }
            let id = match &customer.id {
                CustomerId::Numeric(n) => format!("#{n}"),
                CustomerId::Handle(h) => format!("@{h}"),
            };
            Ok(format!("{id} {}: {current} -> {plan}, {} attribute(s)", customer.name, customer.attributes.len()))
        }
    }

    #[tokio::test]
    async fn upgrade_customer_as_json_untagged_and_flatten() {
        let scripts = [
            Script::accept("pro"),
            Script::accept("enterprise").pick(Pick::Last),
            Script::accept("enterprise, no").pick(Pick::Last).confirm(false),
        ];
        let acme = check(&upgrade_customer::upgrade_customer, json!({"handle": "acme"}), || upgrade_customer::plain("acme".into()), &scripts).await;
        assert_eq!(acme[0].ok(), "ACME Corp is already on pro");
        assert_eq!(acme[1].ok(), "#4711 ACME Corp: pro -> enterprise, 3 attribute(s)");
        assert_eq!(acme[1].asked[1], "Move ACME Corp (12 seats) from pro to enterprise?");
        assert_eq!(acme[2].ok(), "no change");
        let initech = check(&upgrade_customer::upgrade_customer, json!({"handle": "initech"}), || upgrade_customer::plain("initech".into()), &scripts).await;
        assert_eq!(initech[0].ok(), "@initech-01 Initech: free -> pro, 0 attribute(s)");
        let missing = check(&upgrade_customer::upgrade_customer, json!({"handle": "hooli"}), || upgrade_customer::plain("hooli".into()), &scripts[..1]).await;
        assert_eq!(missing[0].err(), "no customer `hooli`");
    }
}

ready! {
    "waiting (4, issue: storage wrapper): a webhook payload `AsJson<serde_json::Value>` kept across suspensions";
    everyday! {
        async fn handle_webhook(body: String) -> Result<String, ToolError> {
            let payload: AsJson<Value> = AsJson(serde_json::from_str(&body)?);
            let repo = payload["repository"]["full_name"].as_str().unwrap_or("?").to_string();
            let action = ask!(choice(
                format!("{} event on {repo} by {}: what now?", payload["action"].as_str().unwrap_or("unknown"), payload["sender"]["login"]),
                ["label", "ignore"]
            ))
            .accepted()?;
            if action == "ignore" {
                return Ok(format!("ignored {repo}"));
            }
            let label = ask!(text(format!("Label for {repo} #{}?", payload["number"]))).accepted()?;
            let existing = payload["labels"].as_array().map_or(0, Vec::len);
            Ok(format!("{repo} #{}: +{label} ({existing} existing)", payload["number"]))
        }
    }

    #[tokio::test]
    async fn handle_webhook_as_json_value() {
        let body = json!({
            "action": "opened",
            "number": 31,
            "labels": [{"name": "bug"}, {"name": "help wanted"}],
            "repository": {"full_name": "acme/rockets", "private": false},
            "sender": {"login": "wile", "id": 7}
        })
        .to_string();
        let scripts = [
            Script::accept("label").texts(["triaged"]),
            Script::accept("ignore").pick(Pick::Last),
            Script::accept("declined").decline_at(1),
        ];
        let runs = check(&handle_webhook::handle_webhook, json!({"body": body}), || handle_webhook::plain(body.clone()), &scripts).await;
        assert_eq!(runs[0].ok(), "acme/rockets #31: +triaged (2 existing)");
        assert_eq!(runs[0].asked[0], "opened event on acme/rockets by \"wile\": what now?");
        assert_eq!(runs[1].ok(), "ignored acme/rockets");
        assert_eq!(runs[2].err(), "the user declined");
        let bad = check(&handle_webhook::handle_webhook, json!({"body": "{not json"}), || handle_webhook::plain("{not json".into()), &scripts[..1]).await;
        assert!(bad[0].err().starts_with("key must be a string"));
    }
}

ready! {
    "waiting (4, issue: storage wrapper): `AsJson<Vec<Issue>>` mutated in a loop with a suspension per item";
    everyday! {
        async fn assign_backlog(repo: String) -> Result<String, ToolError> {
            let mut issues = AsJson(list_issues(&repo));
            for i in 0..issues.len() {
                if issues[i].assignee.is_some() {
                    continue;
                }
                let who = ask!(choice(format!("Assign {} ({})?", issues[i].title, issues[i].number), ["ana", "ben", "later"]))
                    .accepted()?;
                if who != "later" {
                    issues[i].assignee = Some(who);
                    issues[i].labels.retain(|l| l != "triage");
                }
            }
            let summary: Vec<String> = issues
                .iter()
                .map(|issue| format!("{}={}", issue.number, issue.assignee.as_deref().unwrap_or("-")))
                .collect();
            let still_triage = issues.iter().filter(|i| i.labels.iter().any(|l| l == "triage")).count();
            Ok(format!("{} [{still_triage} in triage]", summary.join(" ")))
        }
    }

    #[tokio::test]
    async fn assign_backlog_as_json_vec() {
        let scripts = [
            Script::accept("ana"),
            Script::accept("rotate").pick(Pick::Rotate),
            Script::accept("later").pick(Pick::Last),
            Script::accept("cancel").cancel_at(2),
        ];
        let runs = check(&assign_backlog::assign_backlog, json!({"repo": "web"}), || assign_backlog::plain("web".into()), &scripts).await;
        assert_eq!(runs[0].ok(), "10=ana 20=kai 30=ana 40=ana [0 in triage]");
        assert_eq!(runs[0].asked, ["Assign web issue 1 (10)?", "Assign web issue 3 (30)?", "Assign web issue 4 (40)?"]);
        assert_eq!(runs[1].ok(), "10=ana 20=kai 30=ben 40=- [0 in triage]");
        assert_eq!(runs[2].ok(), "10=- 20=kai 30=- 40=- [2 in triage]");
        assert_eq!(runs[3].err(), "the user cancelled");
    }
}

ready! {
    "waiting (4, issue: storage wrapper): internally tagged enums (`AsJson<Vec<PipelineEvent>>`) kept across suspensions";
    everyday! {
        async fn release_gate() -> Result<String, ToolError> {
            let events = AsJson(pipeline_events());
            let mut approved: Vec<String> = Vec::new();
            for n in 0..events.len() {
                let (what, risky) = match &events[n] {
                    PipelineEvent::Push { branch, commits } => (format!("push of {commits} commit(s) to {branch}"), branch == "main"),
                    PipelineEvent::Tag { name } => (format!("tag {name}"), true),
                    PipelineEvent::PullRequest { number, draft } => (format!("PR #{number}"), !draft),
                };
                if risky {
                    let through = ask!(confirm(format!("Let the {what} through?"))).accepted()?;
                    if !through {
                        continue;
                    }
                }
                approved.push(what);
            }
            Ok(format!("{}/{} through: {}", approved.len(), events.len(), approved.join("; ")))
        }
    }

    #[tokio::test]
    async fn release_gate_as_json_internally_tagged() {
        let scripts = [
            Script::accept("all"),
            Script::accept("none").confirm(false),
            Script::accept("not the tag").when("tag v2", yes_no(false)),
        ];
        let runs = check(&release_gate::release_gate, json!({}), release_gate::plain, &scripts).await;
        assert_eq!(runs[0].ok(), "4/4 through: push of 3 commit(s) to main; PR #88; tag v2.0.0; PR #90");
        assert_eq!(runs[0].rounds, 3);
        assert_eq!(runs[1].ok(), "1/4 through: PR #88");
        assert_eq!(runs[2].ok(), "3/4 through: push of 3 commit(s) to main; PR #88; PR #90");
    }
}

// ---------------------------------------------------------------------------------------
// The author's own serde-derived DTOs, stored directly.

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Strategy {
    Rolling { batch: u32 },
    BlueGreen,
    Canary { percent: u8 },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeploymentPlan {
    pub service: String,
    pub version: String,
    pub regions: Vec<String>,
    pub strategy: Strategy,
    pub approvals: BTreeMap<String, bool>,
}

waiting! {
    "waiting (4; NOT in issue 8): `plan.strategy = match .. { \"canary\" => { ask!(..) .. } _ => plan.strategy }` (a field moved out and re-assigned in one statement that suspends) gives E0382";
    everyday! {
        async fn plan_deployment(service: String, version: String) -> Result<String, ToolError> {
            let mut plan = DeploymentPlan {
                service: service.clone(),
                version,
                regions: vec!["eu-west-1".into()],
                strategy: Strategy::Rolling { batch: 2 },
                approvals: BTreeMap::new(),
            };
            let strategy = ask!(choice(format!("Strategy for {}?", plan.service), ["rolling", "blue-green", "canary"])).accepted()?;
            plan.strategy = match strategy.as_str() {
                "blue-green" => Strategy::BlueGreen,
                "canary" => {
                    let percent: u8 = ask!(text("Canary percentage?")).accepted()?.trim().parse()?;
                    Strategy::Canary { percent }
                }
                _ => plan.strategy,
            };
            let more = ask!(multi_choice("Extra regions?", ["us-east-1", "ap-south-1"])).accepted()?;
            plan.regions.extend(more);
            for region in plan.regions.clone() {
                let ok = ask!(confirm(format!("Approve {} {} in {region}?", plan.service, plan.version))).accepted()?;
                plan.approvals.insert(region, ok);
            }
            let approved = plan.approvals.values().filter(|ok| **ok).count();
            Ok(format!("{:?}; {approved}/{} regions approved", plan.strategy, plan.regions.len()))
        }
    }

    #[tokio::test]
    async fn plan_deployment_own_dto() {
        let scripts = [
            Script::accept("rolling"),
            Script::accept("canary").pick(Pick::Last).texts(["5", "10"]),
            Script::accept("blue-green, deny eu").when("Strategy", pick("blue-green")).when("in eu-west-1", yes_no(false)),
            Script::accept("bad percent").when("Strategy", pick("canary")).texts(["half"]),
        ];
        let runs = check(
            &plan_deployment::plan_deployment,
            json!({"service": "api", "version": "3.0.1"}),
            || plan_deployment::plain("api".into(), "3.0.1".into()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "Rolling { batch: 2 }; 2/2 regions approved");
        assert_eq!(runs[0].asked[2], "Approve api 3.0.1 in eu-west-1?");
        assert_eq!(runs[1].ok(), "Canary { percent: 10 }; 2/2 regions approved");
        assert_eq!(runs[2].ok(), "BlueGreen; 1/2 regions approved");
        assert_eq!(runs[3].err(), "invalid digit found in string");
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Answer {
    Yes,
    No,
    Later { reason: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SurveyItem {
    pub question: String,
    pub answer: Option<Answer>,
    pub asked_at_round: u32,
}

ready! {
    everyday! {
        async fn security_questionnaire(vendor: String) -> Result<String, ToolError> {
            let mut items: Vec<SurveyItem> = ["SOC 2 report?", "Data stays in the EU?", "SSO supported?"]
                .iter()
                .map(|q| SurveyItem { question: q.to_string(), answer: None, asked_at_round: 0 })
                .collect();
            let mut round = 0;
            for n in 0..items.len() {
                round += 1;
                items[n].asked_at_round = round;
                let answer = match ask!(confirm(format!("{vendor}: {}", items[n].question))) {
                    Elicited::Accept(true) => Answer::Yes,
                    Elicited::Accept(false) => Answer::No,
                    Elicited::Decline | Elicited::Cancel => {
                        let reason = ask!(text(format!("Why is `{}` open?", items[n].question))).ok().unwrap_or_default();
                        Answer::Later { reason }
                    }
                };
                items[n].answer = Some(answer);
            }
            let open: Vec<String> = items
                .iter()
                .filter_map(|i| match &i.answer {
                    Some(Answer::Later { reason }) => Some(format!("{} ({reason})", i.question)),
                    _ => None,
                })
                .collect();
            let yes = items.iter().filter(|i| i.answer == Some(Answer::Yes)).count();
            Ok(format!("{vendor}: {yes} yes, open: [{}]", open.join(", ")))
        }
    }

    #[tokio::test]
    async fn security_questionnaire_own_dtos() {
        let scripts = [
            Script::accept("all yes"),
            Script::accept("eu open").when("Globex: Data", decline()).texts(["asking legal"]),
        ];
        let runs = check(
            &security_questionnaire::security_questionnaire,
            json!({"vendor": "Globex"}),
            || security_questionnaire::plain("Globex".into()),
            &scripts,
        )
        .await;
        assert_eq!(runs[0].ok(), "Globex: 3 yes, open: []");
        assert_eq!(runs[1].ok(), "Globex: 2 yes, open: [Data stays in the EU? (asking legal)]");
    }
}

ready! {
    everyday! {
        async fn send_welcome(email: String, name: String) -> Result<String, ToolError> {
            let plan = ask!(choice(format!("Which plan did {name} buy?"), ["free", "team", "business"])).accepted()?;
            let preview = EmailDraft::new(format!("Welcome to the {plan} plan"))
                .to(&email)
                .line(format!("Hi {name},"))
                .line("your workspace is ready.")
                .render();
            let send = ask!(confirm(format!("Send this email? {preview}"))).accepted()?;
            if !send {
                return Ok(format!("not sent to {email}"));
            }
            let draft = EmailDraft::new(format!("Welcome to the {plan} plan"))
                .to(&email)
                .line(format!("Hi {name},"))
                .line("your workspace is ready.");
            Ok(format!("sent: {}", draft.render()))
        }
    }

    #[tokio::test]
    async fn send_welcome_sdk_type_without_serde() {
        let scripts = [
            Script::accept("free").pick(Pick::Rotate),
            Script::accept("do not send").confirm(false),
            Script::accept("cancel").cancel_at(1),
        ];
        let runs = check(
            &send_welcome::send_welcome,
            json!({"email": "zoe@example.com", "name": "Zoe"}),
            || send_welcome::plain("zoe@example.com".into(), "Zoe".into()),
            &scripts,
        )
        .await;
        assert_eq!(
            runs[0].ok(),
            "sent: To: zoe@example.com | Welcome to the free plan | Hi Zoe, / your workspace is ready."
        );
        assert_eq!(
            runs[1].asked[1],
            "Send this email? To: zoe@example.com | Welcome to the free plan | Hi Zoe, / your workspace is ready."
        );
        assert_eq!(runs[1].ok(), "not sent to zoe@example.com");
        assert_eq!(runs[2].err(), "the user cancelled");
    }
}
