//! A state sealed by one version of a function is never resumed by another: the flow
//! restarts, unless the author declared the edit layout-compatible with `compat`.

use mrtr::machine::Machine;
use mrtr::testing::{Harness, Reply};
use rmcp::model::InputResponses;
use serde_json::json;

mod v1 {
    #[mrtr::tool(name = "counter")]
    pub async fn counter() -> String {
        let first = ask!(text("first?")).ok().unwrap_or_default();
        let second = ask!(text("second?")).ok().unwrap_or_default();
        format!("v1 {first} {second}")
    }
    pub use counter as tool;

    #[mrtr::tool(name = "hotfix", compat = "layout-1")]
    pub async fn hotfix() -> String {
        let first = ask!(text("first?")).ok().unwrap_or_default();
        let second = ask!(text("second?")).ok().unwrap_or_default();
        format!("v1 {first} {second}")
    }
    pub use hotfix as compat_tool;
}

mod v2 {
    #[mrtr::tool(name = "counter")]
    pub async fn counter() -> String {
        let count = 7u64;
        let first = ask!(text("first (v2)?")).ok().unwrap_or_default();
        let second = ask!(text("second?")).ok().unwrap_or_default();
        format!("v2 {count} {first} {second}")
    }
    pub use counter as tool;

    #[mrtr::tool(name = "hotfix", compat = "layout-1")]
    pub async fn hotfix() -> String {
        let first = ask!(text("first?")).ok().unwrap_or_default();
        let second = ask!(text("second, fixed?")).ok().unwrap_or_default();
        format!("v2 {first} {second}")
    }
    pub use hotfix as compat_tool;
}

mod reformatted {
    #[mrtr::tool(name = "counter")]
    pub async fn counter() -> String {
        // Only formatting and comments differ from v1.
        let first = ask!(text("first?")).ok().unwrap_or_default();
        let second = ask!(text("second?")).ok().unwrap_or_default();
        format!("v1 {first} {second}")
    }
    pub use counter as tool;
}

fn answered(key: &str, text: &str) -> InputResponses {
    [(
        key.to_string(),
        json!({"action": "accept", "content": {"text": text}}),
    )]
    .into()
}

#[test]
fn formatting_keeps_the_fingerprint_and_edits_change_it() {
    let v1 = v1::tool.descriptor().fingerprint;
    assert_eq!(v1, reformatted::tool.descriptor().fingerprint);
    assert_ne!(v1, v2::tool.descriptor().fingerprint);
    assert_eq!(
        v1::compat_tool.descriptor().fingerprint,
        v2::compat_tool.descriptor().fingerprint
    );
}

#[tokio::test]
async fn a_state_from_another_version_restarts_the_flow() {
    let harness = Harness::new();
    let Reply::InputRequired(first) = harness
        .request(&v1::tool, json!({}), None, None)
        .await
        .unwrap()
    else {
        panic!("v1 should ask")
    };
    let token = first.request_state.clone();
    // The server was redeployed with v2 before the client answered.
    let reply = harness
        .request(&v2::tool, json!({}), token, Some(answered("ask_0", "a")))
        .await
        .unwrap();
    let Reply::InputRequired(restarted) = reply else {
        panic!("expected a restart")
    };
    let requests = restarted.input_requests.unwrap();
    let request = serde_json::to_value(&requests["ask_0"]).unwrap();
    assert_eq!(
        request["params"]["message"], "first (v2)?",
        "v2 starts from the beginning"
    );
}

#[tokio::test]
async fn compat_tag_continues_the_flow_across_a_hotfix() {
    let harness = Harness::new();
    let Reply::InputRequired(first) = harness
        .request(&v1::compat_tool, json!({}), None, None)
        .await
        .unwrap()
    else {
        panic!("v1 should ask")
    };
    let reply = harness
        .request(
            &v2::compat_tool,
            json!({}),
            first.request_state,
            Some(answered("ask_0", "a")),
        )
        .await
        .unwrap();
    let Reply::InputRequired(second) = reply else {
        panic!("expected the second question")
    };
    let requests = second.input_requests.unwrap();
    let request = serde_json::to_value(&requests["ask_1"]).unwrap();
    assert_eq!(request["params"]["message"], "second, fixed?");
    let done = harness
        .request(
            &v2::compat_tool,
            json!({}),
            second.request_state,
            Some(answered("ask_1", "b")),
        )
        .await
        .unwrap();
    let Reply::Complete(result) = done else {
        panic!("expected completion")
    };
    assert_eq!(
        serde_json::to_value(&result).unwrap()["content"][0]["text"],
        "v2 a b"
    );
}
