use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use serde::Serialize;

use super::*;
use crate::machine::AsJson;

/// Shaped like a generated state: a struct variant whose fields are named like the locals.
#[derive(Serialize)]
enum State<A, B> {
    S0 { count: u32, note: A, kept: B },
}

fn state<A: Serialize, B: Serialize>(note: A, kept: B) -> State<A, B> {
    State::S0 {
        count: 1,
        note,
        kept,
    }
}

fn refused<S: Serialize>(value: &S) -> Problem {
    inspect(value).expect_err("the walk refuses it")
}

#[derive(Serialize)]
struct Buffers {
    label: String,
    log: Rc<RefCell<Vec<String>>>,
    writer: Rc<RefCell<Vec<String>>>,
}

#[test]
fn an_rc_inside_a_kept_struct_is_refused_by_the_local_and_field() {
    let log = Rc::new(RefCell::new(Vec::new()));
    let buffers = Buffers {
        label: "x".into(),
        log: log.clone(),
        writer: log,
    };
    let problem = refused(&state("n", buffers));
    assert_eq!(problem.local, Some("kept"));
    assert!(
        problem
            .reason
            .starts_with("`kept.log` is an `Rc`/`Arc` handle"),
        "{}",
        problem.reason
    );
    let arcs = refused(&state(vec![Some(Arc::new(3u8))], ()));
    assert_eq!(arcs.local, Some("note"));
    assert!(
        arcs.reason.starts_with("`note[0]` is an `Rc`/`Arc` handle"),
        "{}",
        arcs.reason
    );
}

#[test]
fn a_json_value_is_refused_and_as_json_is_not() {
    let problem = refused(&state(serde_json::json!({"a": 1}), ()));
    assert_eq!(problem.local, Some("note"));
    assert!(problem.reason.contains("AsJson"), "{}", problem.reason);
    let map = BTreeMap::from([("k", serde_json::json!(null))]);
    let problem = refused(&state((), map));
    assert!(
        problem
            .reason
            .starts_with("`kept[0]` is a `serde_json` value"),
        "{}",
        problem.reason
    );
    assert!(inspect(&state(AsJson(serde_json::json!({"a": 1})), ())).is_ok());
}

#[derive(Serialize)]
struct Profile {
    #[serde(skip_serializing_if = "Option::is_none")]
    nick: Option<String>,
    age: u8,
}

#[derive(Serialize)]
struct Flat {
    id: u8,
    #[serde(flatten)]
    extra: BTreeMap<String, u8>,
}

#[test]
fn a_skipped_field_and_a_flattened_map_are_refused() {
    let problem = refused(&state(Profile { nick: None, age: 3 }, ()));
    assert_eq!(problem.local, Some("note"));
    assert!(
        problem
            .reason
            .starts_with("`note` leaves out its field `nick`"),
        "{}",
        problem.reason
    );
    // Not skipped: the field is written, and postcard reads it back.
    let nick = Profile {
        nick: Some("z".into()),
        age: 3,
    };
    assert!(inspect(&state(nick, ())).is_ok());
    let flat = Flat {
        id: 1,
        extra: BTreeMap::new(),
    };
    let problem = refused(&state((), flat));
    assert_eq!(problem.local, Some("kept"));
    assert!(
        problem.reason.contains("unknown length"),
        "{}",
        problem.reason
    );
}

#[test]
fn the_largest_local_is_named_with_its_size() {
    let walked = inspect(&state("x".repeat(300), vec![1u8; 10])).unwrap();
    assert_eq!(walked.largest, Some(("note", 302)));
    // A state that does not name its locals (a hand-written tuple) has none.
    assert!(inspect(&(1u8, "a")).unwrap().largest.is_none());
    let problem = refused(&(1u8, Rc::new(2u8)));
    assert_eq!(problem.local, None);
    assert!(
        problem.reason.starts_with("`[1]` is an `Rc`"),
        "{}",
        problem.reason
    );
}
