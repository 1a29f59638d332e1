//! Drives a machine through all its rounds with scripted answers: `drive` through the
//! real server pipeline (`mrtr::testing::Harness`: a token sealed and opened every
//! round), `drive_raw` by stepping the machine directly to measure raw state sizes.
#![allow(dead_code)]

use mrtr::machine::{Answers, Machine, RequestCx, Resume, Run, Step, StepError};
use mrtr::testing::{Harness, Reply};
use rmcp::model::{InputRequest, InputResponses};
use serde_json::{Value, json};

/// Runs `machine` through the real sealing pipeline; `answer(key, request, round)`
/// answers each request. Rounds list their keys in key order; `state_sizes` holds the
/// `requestState` token lengths.
pub async fn drive<M: Machine>(
    machine: &M,
    arguments: Value,
    answer: impl FnMut(&str, &InputRequest, usize) -> Value,
) -> Result<Flow<M::Output>, rmcp::ErrorData> {
    drive_with(&Harness::new(), machine, arguments, answer).await
}

/// Like [`drive`] with a given harness.
pub async fn drive_with<M: Machine>(
    harness: &Harness,
    machine: &M,
    arguments: Value,
    mut answer: impl FnMut(&str, &InputRequest, usize) -> Value,
) -> Result<Flow<M::Output>, rmcp::ErrorData> {
    let mut rounds = Vec::new();
    let mut state_sizes = Vec::new();
    let mut request_state = None;
    let mut input_responses = None;
    loop {
        assert!(rounds.len() < 1000, "too many rounds");
        match harness
            .request(
                machine,
                arguments.clone(),
                request_state.take(),
                input_responses.take(),
            )
            .await?
        {
            Reply::Complete(output) => {
                return Ok(Flow {
                    output,
                    rounds,
                    state_sizes,
                });
            }
            Reply::InputRequired(result) => {
                let round = rounds.len();
                let requests: Vec<(String, InputRequest)> = result
                    .input_requests
                    .unwrap_or_default()
                    .into_iter()
                    .collect();
                rounds.push(requests.iter().map(|(key, _)| key.clone()).collect());
                state_sizes.push(result.request_state.as_ref().map_or(0, String::len));
                let responses: InputResponses = requests
                    .iter()
                    .map(|(key, request)| (key.clone(), answer(key, request, round)))
                    .collect();
                request_state = result.request_state;
                input_responses = Some(responses);
            }
        }
    }
}

/// One finished flow.
pub struct Flow<O> {
    /// The final output.
    pub output: O,
    /// The keys asked in each round.
    pub rounds: Vec<Vec<String>>,
    /// The encoded state size of each suspension.
    pub state_sizes: Vec<usize>,
}

/// Steps `machine` directly, round-tripping the state through its encoded bytes;
/// `state_sizes` holds the raw (unsealed) state sizes.
pub async fn drive_raw<M: Machine>(
    machine: &M,
    arguments: Value,
    mut answer: impl FnMut(&str, &InputRequest, usize) -> Value,
) -> Result<Flow<M::Output>, StepError> {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    let mut resume = None;
    let mut rounds = Vec::new();
    let mut state_sizes = Vec::new();
    loop {
        let cx = RequestCx::new(Default::default(), None, rounds.len() as u32);
        let step = machine
            .step(Run {
                arguments: &arguments,
                resume: resume.take(),
                cx: &cx,
            })
            .await?;
        match step {
            Step::Done(output) => {
                return Ok(Flow {
                    output,
                    rounds,
                    state_sizes,
                });
            }
            Step::Suspend(suspend) => {
                assert!(rounds.len() < 1000, "too many rounds");
                let (requests, state) = suspend.into_parts();
                state_sizes.push(state.len());
                let round = rounds.len();
                rounds.push(requests.iter().map(|(key, _)| key.clone()).collect());
                let responses: Vec<(String, Value)> = requests
                    .iter()
                    .map(|(key, request)| (key.clone(), answer(key, request, round)))
                    .collect();
                resume = Some(Resume::new(state, Answers::new(requests, responses)));
            }
        }
    }
}

/// The text of a tool result.
pub fn text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|content| content.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("")
}

/// An accepted form answer.
pub fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// A declined elicitation.
pub fn decline() -> Value {
    json!({"action": "decline"})
}

/// A cancelled elicitation.
pub fn cancel() -> Value {
    json!({"action": "cancel"})
}

/// A sampled assistant message.
pub fn sampled(text: &str) -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": text}, "model": "test-model"})
}

/// A roots answer.
pub fn roots(uris: &[&str]) -> Value {
    json!({"roots": uris.iter().map(|uri| json!({"uri": uri})).collect::<Vec<_>>()})
}

/// The message of an elicitation request.
pub fn message(request: &InputRequest) -> String {
    match request {
        InputRequest::Elicitation(elicit) => match &elicit.params {
            rmcp::model::ElicitRequestParams::FormElicitationParams { message, .. } => {
                message.clone()
            }
            rmcp::model::ElicitRequestParams::UrlElicitationParams { message, .. } => {
                message.clone()
            }
            _ => String::new(),
        },
        #[allow(deprecated)]
        InputRequest::CreateMessage(create) => format!("{:?}", create.params.messages),
        _ => String::from("roots"),
    }
}
