//! Every round leaves one `mrtr.round` span with the tool, round number, state bytes in and
//! out, the outcome, and — for rejected states — the specific reason, which the client
//! never sees.

#[path = "../examples/hand_written/release_wizard.rs"]
mod release_wizard;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use mrtr::testing::{Harness, Reply};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

type Fields = BTreeMap<String, String>;

/// Collects the fields of every closed `mrtr.round` span.
#[derive(Clone, Default)]
struct RoundSpans {
    open: Arc<Mutex<BTreeMap<u64, Fields>>>,
    closed: Arc<Mutex<Vec<Fields>>>,
}

struct Collect<'a>(&'a mut Fields);

impl Visit for Collect<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(
            field.name().to_string(),
            format!("{value:?}").trim_matches('"').to_string(),
        );
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for RoundSpans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        if attrs.metadata().name() == "mrtr.round" {
            let mut fields = Fields::new();
            attrs.record(&mut Collect(&mut fields));
            self.open.lock().unwrap().insert(id.into_u64(), fields);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        if let Some(fields) = self.open.lock().unwrap().get_mut(&id.into_u64()) {
            values.record(&mut Collect(fields));
        }
    }

    fn on_close(&self, id: Id, _: Context<'_, S>) {
        if let Some(fields) = self.open.lock().unwrap().remove(&id.into_u64()) {
            self.closed.lock().unwrap().push(fields);
        }
    }
}

#[tokio::test]
async fn each_round_is_one_span_and_rejections_are_explained_only_there() {
    let spans = RoundSpans::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));

    let harness = Harness::new();
    let tool = release_wizard::PlanRelease::new(Default::default());
    let first = match harness
        .request(&tool, json!({"service": "api"}), None, None)
        .await
    {
        Ok(Reply::InputRequired(result)) => result,
        other => panic!("expected input_required, got {other:?}"),
    };
    let token = first.request_state.expect("state");
    let error = harness
        .request(
            &tool,
            json!({"service": "api"}),
            Some(format!("{token}-TAMPERED")),
            None,
        )
        .await
        .expect_err("tampered");
    // The client learns only that the state was rejected, not why.
    let shown = format!("{error:?}").to_lowercase();
    assert!(
        !["unauthentic", "malformed", "tag", "decrypt"]
            .iter()
            .any(|word| shown.contains(word)),
        "{shown}"
    );
    assert!(error.data.is_none());
    harness.clock().advance(601);
    harness
        .request(&tool, json!({"service": "api"}), Some(token.clone()), None)
        .await
        .expect_err("expired");

    let closed = spans.closed.lock().unwrap().clone();
    assert_eq!(closed.len(), 3, "one span per request: {closed:?}");
    let asked = &closed[0];
    assert_eq!(asked["target"], "plan_release");
    assert_eq!(asked["method"], "tools/call");
    assert_eq!(asked["outcome"], "input_required");
    assert_eq!(asked["round"], "0");
    assert_eq!(asked["state_bytes_in"], "0");
    assert_eq!(asked["state_bytes_out"], token.len().to_string());

    let tampered = &closed[1];
    assert_eq!(tampered["outcome"], "rejected");
    assert!(
        ["malformed", "unauthentic"].contains(&tampered["rejection"].as_str()),
        "{tampered:?}"
    );
    assert_eq!(
        tampered["state_bytes_in"],
        (token.len() + "-TAMPERED".len()).to_string()
    );
    let expired = &closed[2];
    assert_eq!(expired["outcome"], "rejected");
    assert_ne!(
        tampered["rejection"], expired["rejection"],
        "the reason is specific"
    );
    assert_eq!(expired["rejection"], "expired", "{expired:?}");
}
