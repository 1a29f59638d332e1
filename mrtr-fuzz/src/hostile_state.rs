//! Target 2: authenticated but hostile plaintext. Arbitrary bytes are sealed with the
//! server's own key (as a leaked key would allow) — as the whole envelope, as the state
//! behind a machine's genuine pending requests, or as the pending requests (raw, or as
//! request JSON) in front of its genuine state, for the real machines in
//! [`crate::machines`] — and sent with valid answers through the real pipeline
//! ([`Harness`]), so the postcard decoding behind authentication (envelope, stored request
//! recipes, generated state enums, `&'static str` literals, snapshot loops, `AsJson`) runs
//! on them.
//!
//! Oracle: never a panic; the reply is a result, a re-ask, or `-32602` (rejected state).

use std::sync::OnceLock;

use arbitrary::Unstructured;
use futures::executor::block_on;
use mrtr::machine::Machine;
use mrtr::testing::Harness;
use mrtr_runtime::fuzz_api::{
    BindingSpec, FuzzSealer, Opened, encode_json_payload, pending_requests, split_payload,
};
use mrtr_runtime::token::internals::Envelope;
use mrtr_runtime::token::{Clock, KeyId, KeyRing, SecretKey};
use rmcp::model::InputResponses;
use serde_json::{Value, json};

use crate::answering::valid_answer;
use crate::machines;

/// The machines under test, by index.
const MACHINES: usize = 6;

/// More requests than any genuine flow of [`crate::machines`] needs.
const MAX_GENUINE_REQUESTS: usize = 32;

fn arguments(machine: usize) -> Value {
    match machine {
        0 => json!({"rounds": 3}),
        1 => json!({"prod": true}),
        2 => json!({"items": ["a", "bb", "ccc"]}),
        4 => json!({"topic": "fuzzing"}),
        _ => json!({}),
    }
}

struct Fixture {
    harness: Harness,
    sealer: FuzzSealer,
    /// Every round of every machine's genuine flow, as sealed by the server.
    rounds: Vec<(usize, Opened)>,
}

/// What one request through the harness ended in.
enum Outcome {
    Done,
    Asked(Option<String>),
    Error(rmcp::ErrorData),
}

/// Sends one request to machine `index`.
fn request(
    harness: &Harness,
    index: usize,
    token: Option<String>,
    answers: Option<InputResponses>,
) -> Outcome {
    fn on<M: Machine>(
        harness: &Harness,
        machine: &M,
        index: usize,
        token: Option<String>,
        answers: Option<InputResponses>,
    ) -> Outcome {
        match block_on(harness.request(machine, arguments(index), token, answers)) {
            Ok(mrtr::testing::Reply::Complete(_)) => Outcome::Done,
            Ok(mrtr::testing::Reply::InputRequired(asked)) => Outcome::Asked(asked.request_state),
            Err(error) => Outcome::Error(error),
        }
    }
    match index {
        0 => on(harness, &machines::tally, index, token, answers),
        1 => on(harness, &machines::literals, index, token, answers),
        2 => on(harness, &machines::snapshot, index, token, answers),
        3 => on(harness, &machines::sizing, index, token, answers),
        4 => on(harness, &machines::summary, index, token, answers),
        _ => on(harness, &machines::vault, index, token, answers),
    }
}

fn descriptor(index: usize) -> &'static mrtr::machine::MachineDescriptor {
    match index {
        0 => machines::tally.descriptor(),
        1 => machines::literals.descriptor(),
        2 => machines::snapshot.descriptor(),
        3 => machines::sizing.descriptor(),
        4 => machines::summary.descriptor(),
        _ => machines::vault.descriptor(),
    }
}

fn binding(index: usize) -> BindingSpec {
    let arguments = arguments(index).as_object().cloned().unwrap_or_default();
    BindingSpec::for_harness(descriptor(index), arguments)
}

/// Valid answers to the pending requests the server rebuilds from `payload` of machine
/// `index` (none when they do not rebuild: the server refuses the token before any answer
/// is read).
fn answers_for(index: usize, payload: &[u8]) -> InputResponses {
    pending_requests(payload, descriptor(index).literals)
        .unwrap_or_default()
        .into_iter()
        .map(|(key, request)| {
            let answer = valid_answer(&request);
            (key, answer)
        })
        .collect()
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let keys = KeyRing::new(KeyId(1), SecretKey::from_bytes([0x44; 32]));
        let harness = Harness::with_keys(keys.clone());
        let sealer = FuzzSealer::new(keys, harness.clock().now_unix_seconds());
        let mut rounds = Vec::new();
        for index in 0..MACHINES {
            let mut token = None;
            let mut answers = None;
            // Every genuine flow ends within a few rounds when answered; one that does not
            // means the fixture cannot read its own questions.
            let mut done = false;
            for _ in 0..MAX_GENUINE_REQUESTS {
                match request(&harness, index, token.take(), answers.take()) {
                    Outcome::Done => {
                        done = true;
                        break;
                    }
                    Outcome::Asked(Some(next)) => {
                        let opened = sealer
                            .open(&next, &binding(index))
                            .expect("the fixture opens the server's own tokens");
                        answers = Some(answers_for(index, &opened.payload));
                        rounds.push((index, opened));
                        token = Some(next);
                    }
                    Outcome::Asked(None) => panic!("input_required without requestState"),
                    Outcome::Error(error) => panic!("genuine flow of machine {index}: {error:?}"),
                }
            }
            assert!(
                done,
                "the genuine flow of machine {index} did not finish in {MAX_GENUINE_REQUESTS} requests"
            );
        }
        Fixture {
            harness,
            sealer,
            rounds,
        }
    })
}

/// Runs one input.
///
/// ```
/// mrtr_fuzz::hostile_state::run(&[1, 0, 0, 7, 7, 7]);
/// ```
pub fn run(data: &[u8]) {
    let fixture = fixture();
    let mut input = Unstructured::new(data);
    let round = usize::from(input.arbitrary::<u8>().unwrap_or(0)) % fixture.rounds.len();
    let (index, genuine) = &fixture.rounds[round];
    let binding = binding(*index);
    let (genuine_pending, genuine_state) =
        split_payload(&genuine.payload).expect("the server's own payload splits");
    let mode = input.arbitrary::<u8>().unwrap_or(0) % 5;
    let (token, payload) = match mode {
        // The whole plaintext: envelope decoding behind the AEAD.
        0 => {
            let plaintext = input.take_rest();
            let token = fixture.sealer.seal_plaintext(&binding, plaintext, [9; 24]);
            (token, genuine.payload.clone())
        }
        // A genuine envelope: the machine's pending requests, then a hostile state.
        1 | 2 => {
            let round_number = if mode == 1 {
                genuine.round
            } else {
                input.arbitrary().unwrap_or(0)
            };
            let payload = [genuine_pending, input.take_rest()].concat();
            let token = fixture.sealer.seal_payload(
                &binding,
                genuine.fingerprint,
                round_number,
                payload.clone(),
                [9; 24],
            );
            (token, payload)
        }
        // Hostile pending requests as `(key, request JSON)` in front of the genuine state.
        3 => {
            let pending: Vec<(String, String)> = input.arbitrary().unwrap_or_default();
            let Ok(payload) = encode_json_payload(&pending, genuine_state) else {
                return;
            };
            let token = fixture.sealer.seal_payload(
                &binding,
                genuine.fingerprint,
                genuine.round,
                payload.clone(),
                [9; 24],
            );
            (token, payload)
        }
        // Raw bytes where the stored request recipes go, then the genuine state.
        _ => {
            let payload = [input.take_rest(), genuine_state].concat();
            let token = fixture.sealer.seal_payload(
                &binding,
                genuine.fingerprint,
                genuine.round,
                payload.clone(),
                [9; 24],
            );
            (token, payload)
        }
    };
    // A state too large to seal never reaches a server.
    let Ok(token) = token else { return };
    // The round the token opens at, whichever mode put it there (a whole hostile plaintext
    // names its own): the server holds a resumed round to its cap.
    let sealed_round = fixture
        .sealer
        .open(&token, &binding)
        .ok()
        .map(|opened| opened.round);
    let answers = answers_for(*index, &payload);
    match request(&fixture.harness, *index, Some(token), Some(answers)) {
        Outcome::Done | Outcome::Asked(Some(_)) => {}
        Outcome::Asked(None) => panic!("input_required without requestState"),
        // A state sealed at exactly the cap is one a server does seal (its last allowed
        // round): if the machine asks again, the call ends with the round-cap error.
        Outcome::Error(error)
            if sealed_round == Some(mrtr::server::DEFAULT_MAX_ROUNDS_PER_CALL)
                && error.code.0 == -32603
                && error.message.contains("max_rounds_per_call") => {}
        Outcome::Error(error) => assert_eq!(
            error.code.0, -32602,
            "hostile authentic state must be rejected as invalid params: {error:?}"
        ),
    }
}

/// The seed corpus: each genuine round's state and envelope, in the modes [`run`] reads.
///
/// ```
/// assert!(!mrtr_fuzz::hostile_state::seeds().is_empty());
/// ```
pub fn seeds() -> Vec<Vec<u8>> {
    let fixture = fixture();
    let mut seeds = Vec::new();
    for (round, (_, opened)) in fixture.rounds.iter().enumerate() {
        let Some((pending, state)) = split_payload(&opened.payload) else {
            continue;
        };
        seeds.push([&[round as u8, 1][..], state].concat());
        seeds.push(vec![round as u8, 3, 0]);
        seeds.push([&[round as u8, 4][..], pending].concat());
        // A whole plaintext: the genuine envelope, moved to the last round a server seals.
        let at_the_cap = Envelope {
            fingerprint: opened.fingerprint,
            expires_at: opened.expires_at,
            round: mrtr::server::DEFAULT_MAX_ROUNDS_PER_CALL,
            payload: opened.payload.clone(),
        };
        seeds.push([&[round as u8, 0][..], &at_the_cap.encode()].concat());
    }
    seeds
}
