//! `crate = "..."`: tools and forms written against a re-exported `mrtr` (as a crate that
//! wraps mrtr, or renames the dependency, would) expand to paths through that re-export and
//! run like any other tool. The unit tests in mrtr-macros check that no `::mrtr` path is
//! left in such an expansion; this test checks that the retargeted code compiles and runs.

mod deps {
    pub use ::mrtr as facade;
}

#[derive(Debug, serde::Deserialize, serde::Serialize, mrtr::Form)]
#[form(crate = "crate::deps::facade")]
struct Size {
    /// Replicas to run.
    #[form(minimum = 1, maximum = 9)]
    replicas: u8,
    zone: Zone,
}

#[derive(Debug, serde::Deserialize, serde::Serialize, mrtr::FormChoice)]
#[form(crate = "crate::deps::facade")]
#[serde(rename_all = "lowercase")]
enum Zone {
    North,
    South,
}

/// Scales a service after asking how.
#[mrtr::tool(crate = "crate::deps::facade")]
async fn scale(service: String) -> String {
    let Some(size) = ask!(form::<Size>("How should it scale?")).ok() else {
        return "cancelled".into();
    };
    let sure = ask!(confirm(format!("Scale {service} to {}?", size.replicas))).ok();
    format!("{service}: {} in {:?} ({sure:?})", size.replicas, size.zone)
}

#[tokio::test]
async fn a_tool_and_its_form_expanded_through_a_reexport_run() {
    use crate::deps::facade::testing::{Answer, Harness};
    use serde_json::json;

    let harness = Harness::new();
    let mut flow = harness.flow(&scale, json!({"service": "api"}));
    let asked = flow.start().await.unwrap();
    assert_eq!(asked.questions()[0].message, "How should it scale?");
    flow.answer([(
        "ask_0",
        Answer::form(&json!({"replicas": 3, "zone": "south"})),
    )])
    .await
    .unwrap();
    let done = flow
        .answer([("ask_1", Answer::confirm(true))])
        .await
        .unwrap();
    assert_eq!(done.text().unwrap(), "api: 3 in South (Some(true))");
}
