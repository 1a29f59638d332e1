//! The same tools written by hand on rmcp, as an expert would without `mrtr`: a
//! `ServerHandler` whose `call_tool` keeps an explicit state struct per tool, sealed with
//! rmcp's `RequestStateCodec` (HMAC-SHA256, readable but signed), bound to the method, the
//! tool and the canonical arguments, with a 600 s TTL.
//!
//! It keeps the guarantees the `mrtr` side gives, so the comparison is fair: a missing or
//! malformed answer gets the same question again with the same state (and so the same
//! expiry), answers are checked against the asked schema, a request kind the client did not
//! declare is refused with `-32021`, and a state that does not open is `-32602`.
#![allow(deprecated)] // sampling is deprecated by SEP-2577 but still part of 2026-07-28

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock,
    CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult, ElicitRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, ErrorCode,
    Implementation, InputRequest, InputRequests, InputRequiredResult, InputResponses, JsonObject,
    ListToolsResult, PaginatedRequestParams, RequestStateCodec, Role, SamplingMessage,
    SamplingMessageContentBlock, SealOptions, ServerCapabilities, ServerInfo, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Where 2026-07-28 puts the server's identity in every result.
const SERVER_INFO_META_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// How long a sealed state may be echoed back.
const STATE_TTL: Duration = Duration::from_secs(600);

/// The profile form's age bounds (the same as `macro_tools::Profile`).
const AGE_RANGE: std::ops::RangeInclusive<u32> = 18..=130;

/// The hand-written server: the three tools on one `RequestStateCodec`.
///
/// ```
/// use mrtr_bench::hand_written::HandWritten;
/// use rmcp::model::{CallToolRequestParams, CallToolResponse, ClientCapabilities};
/// let server = HandWritten::new().unwrap();
/// let everything: ClientCapabilities =
///     serde_json::from_value(serde_json::json!({"elicitation": {}, "sampling": {}})).unwrap();
/// let first = server.call(&CallToolRequestParams::new("profile"), &everything).unwrap();
/// assert!(matches!(first, CallToolResponse::InputRequired(_)));
/// ```
#[derive(Clone)]
pub struct HandWritten {
    inner: Arc<Inner>,
}

struct Inner {
    codec: RequestStateCodec,
    tools: Vec<Tool>,
    /// `serverInfo` serialized once, stamped into every result's `_meta` when set.
    server_info: Option<Value>,
}

#[derive(Deserialize, JsonSchema)]
struct WizardArgs {
    /// The service to deploy.
    service: String,
}

#[derive(Deserialize, JsonSchema)]
struct SurveyArgs {
    /// How many questions to ask.
    n: u32,
}

#[derive(Deserialize, JsonSchema)]
struct ProfileArgs {}

#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Debug)]
#[serde(rename_all = "lowercase")]
enum Env {
    Staging,
    Prod,
}

impl Env {
    fn name(self) -> &'static str {
        match self {
            Env::Staging => "staging",
            Env::Prod => "prod",
        }
    }
}

/// Where a wizard flow stands; what each later round needs and nothing else.
#[derive(Serialize, Deserialize, Debug)]
enum WizardStep {
    ChooseEnv,
    Confirm { env: Env },
    Summarize { env: Env },
}

/// The answers so far; the next question's number is one more than their count.
#[derive(Serialize, Deserialize, Debug)]
struct SurveyStep {
    answers: Vec<String>,
}

/// The only round of the profile tool, sealed so an answer is taken only when asked.
#[derive(Serialize, Deserialize, Debug)]
enum ProfileStep {
    AskProfile,
}

#[derive(Deserialize)]
struct ChoiceAnswer {
    choice: Env,
}

#[derive(Deserialize)]
struct ConfirmAnswer {
    confirm: bool,
}

#[derive(Deserialize)]
struct TextAnswer {
    text: String,
}

#[derive(Deserialize)]
struct ProfileAnswer {
    name: String,
    age: u32,
    newsletter: bool,
}

/// A decoded elicitation answer.
enum Elicited<T> {
    Accept(T),
    Declined,
}

/// What one request of a flow yields: the next question, or the tool's result.
type Reply = Result<CallToolResponse, ErrorData>;

impl HandWritten {
    /// A server sealing with a fresh random 32-byte key (key id `1`).
    ///
    /// ```
    /// assert!(mrtr_bench::hand_written::HandWritten::new().is_ok());
    /// ```
    pub fn new() -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|error| format!("no random key: {error}"))?;
        let codec = RequestStateCodec::new_with_keyring("1", [("1", key.to_vec())])?;
        let tools = vec![
            Tool::new(
                "wizard",
                "Deploy a service: choose the environment, confirm it, and let the client's model summarize the deployment.",
                input_schema::<WizardArgs>(),
            ),
            Tool::new(
                "survey",
                "Ask `n` questions one after the other; the result is the answers joined by \",\".",
                input_schema::<SurveyArgs>(),
            ),
            Tool::new(
                "profile",
                "Ask for a profile in one form and echo it.",
                input_schema::<ProfileArgs>(),
            ),
        ];
        Ok(HandWritten {
            inner: Arc::new(Inner {
                codec,
                tools,
                server_info: None,
            }),
        })
    }

    /// The same server, also putting `_meta["io.modelcontextprotocol/serverInfo"]` in every
    /// result as 2026-07-28 asks (a SHOULD) and `mrtr` does: the same wire obligations.
    ///
    /// ```
    /// use mrtr_bench::hand_written::HandWritten;
    /// use rmcp::model::{CallToolRequestParams, CallToolResponse, ClientCapabilities};
    /// let server = HandWritten::new().unwrap().stamping_server_info();
    /// let forms: ClientCapabilities =
    ///     serde_json::from_value(serde_json::json!({"elicitation": {}})).unwrap();
    /// let Ok(CallToolResponse::InputRequired(asked)) =
    ///     server.call(&CallToolRequestParams::new("profile"), &forms)
    /// else {
    ///     panic!("profile asks first");
    /// };
    /// let meta = asked.meta.unwrap();
    /// assert_eq!(meta.0["io.modelcontextprotocol/serverInfo"]["name"], "mrtr-bench-hand-written");
    /// ```
    pub fn stamping_server_info(self) -> Self {
        let info = Implementation::new("mrtr-bench-hand-written", env!("CARGO_PKG_VERSION"));
        let inner = Inner {
            codec: self.inner.codec.clone(),
            tools: self.inner.tools.clone(),
            server_info: Some(serde_json::to_value(info).expect("an Implementation serializes")),
        };
        HandWritten {
            inner: Arc::new(inner),
        }
    }

    /// Puts `serverInfo` in the result's `_meta` when this server stamps it.
    fn stamp(&self, mut reply: CallToolResponse) -> CallToolResponse {
        let Some(info) = &self.inner.server_info else {
            return reply;
        };
        let meta = match &mut reply {
            CallToolResponse::Complete(result) => &mut result.meta,
            CallToolResponse::InputRequired(result) => &mut result.meta,
            _ => return reply,
        };
        meta.get_or_insert_default()
            .0
            .insert(SERVER_INFO_META_KEY.to_string(), info.clone());
        reply
    }

    /// Serves one `tools/call` (a first call or a retry) for a client that declared
    /// `capabilities` on this request.
    ///
    /// ```
    /// # use mrtr_bench::hand_written::HandWritten;
    /// # use rmcp::model::{CallToolRequestParams, ClientCapabilities};
    /// let server = HandWritten::new().unwrap();
    /// let error = server.call(&CallToolRequestParams::new("nope"), &ClientCapabilities::default()).unwrap_err();
    /// assert_eq!(error.code.0, -32602);
    /// ```
    pub fn call(&self, params: &CallToolRequestParams, capabilities: &ClientCapabilities) -> Reply {
        let arguments = params.arguments.clone().unwrap_or_default();
        // serde_json's map is ordered by key, so this text is canonical.
        let bound = format!(
            "tools/call\n{}\n{}",
            params.name,
            Value::Object(arguments.clone())
        );
        let call = Call {
            codec: &self.inner.codec,
            bound: bound.as_bytes(),
            token: params.request_state.as_deref(),
            responses: params.input_responses.as_ref(),
            capabilities,
        };
        let reply = match params.name.as_ref() {
            "wizard" => call.wizard(parse_arguments(arguments)?),
            "survey" => call.survey(parse_arguments(arguments)?),
            "profile" => call.profile(parse_arguments(arguments)?),
            other => Err(ErrorData::invalid_params(
                format!("unknown tool `{other}`"),
                None,
            )),
        };
        reply.map(|reply| self.stamp(reply))
    }
}

fn input_schema<T: JsonSchema>() -> Arc<JsonObject> {
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    Arc::new(schema.as_object().cloned().unwrap_or_default())
}

fn parse_arguments<T: DeserializeOwned>(arguments: JsonObject) -> Result<T, ErrorData> {
    serde_json::from_value(Value::Object(arguments))
        .map_err(|error| ErrorData::invalid_params(format!("invalid arguments: {error}"), None))
}

/// One request being served: the codec, the bound context and what the client sent.
struct Call<'a> {
    codec: &'a RequestStateCodec,
    bound: &'a [u8],
    token: Option<&'a str>,
    responses: Option<&'a InputResponses>,
    capabilities: &'a ClientCapabilities,
}

impl Call<'_> {
    fn wizard(&self, WizardArgs { service }: WizardArgs) -> Reply {
        let question = |step: &WizardStep| match step {
            WizardStep::ChooseEnv => (
                "env",
                choice(format!("Where should {service} go?"), &["staging", "prod"]),
            ),
            WizardStep::Confirm { env } => (
                "confirm",
                confirm(format!("Deploy {service} to {}?", env.name())),
            ),
            WizardStep::Summarize { env } => (
                "summary",
                sampling(
                    format!(
                        "Summarize the deployment of {service} to {} in one sentence.",
                        env.name()
                    ),
                    100,
                ),
            ),
        };
        let Some(token) = self.token else {
            return self.ask(&WizardStep::ChooseEnv, question);
        };
        let step: WizardStep = self.open(token)?;
        match step {
            WizardStep::ChooseEnv => match self.elicited::<ChoiceAnswer>("env") {
                None => self.ask_again(token, &step, question),
                Some(Elicited::Declined) => Ok(not_accepted()),
                Some(Elicited::Accept(ChoiceAnswer { choice: env })) => {
                    self.ask(&WizardStep::Confirm { env }, question)
                }
            },
            WizardStep::Confirm { env } => match self.elicited::<ConfirmAnswer>("confirm") {
                None => self.ask_again(token, &step, question),
                Some(Elicited::Declined) => Ok(not_accepted()),
                Some(Elicited::Accept(ConfirmAnswer { confirm: false })) => Ok(done(format!(
                    "Deployment of {service} to {} called off.",
                    env.name()
                ))),
                Some(Elicited::Accept(ConfirmAnswer { confirm: true })) => {
                    self.ask(&WizardStep::Summarize { env }, question)
                }
            },
            WizardStep::Summarize { env } => match self.sampled("summary") {
                None => self.ask_again(token, &step, question),
                Some(summary) => Ok(done(format!("{service} → {}: {summary}", env.name()))),
            },
        }
    }

    fn survey(&self, SurveyArgs { n }: SurveyArgs) -> Reply {
        let question = |step: &SurveyStep| {
            let number = step.answers.len() + 1;
            ("answer", text(format!("Question {number} of {n}?")))
        };
        let Some(token) = self.token else {
            if n == 0 {
                return Ok(done(String::new()));
            }
            return self.ask(
                &SurveyStep {
                    answers: Vec::new(),
                },
                question,
            );
        };
        let mut step: SurveyStep = self.open(token)?;
        match self.elicited::<TextAnswer>("answer") {
            None => self.ask_again(token, &step, question),
            Some(Elicited::Declined) => Ok(not_accepted()),
            Some(Elicited::Accept(TextAnswer { text })) => {
                step.answers.push(text);
                if step.answers.len() >= n as usize {
                    Ok(done(step.answers.join(",")))
                } else {
                    self.ask(&step, question)
                }
            }
        }
    }

    fn profile(&self, ProfileArgs {}: ProfileArgs) -> Reply {
        let question = |_: &ProfileStep| ("profile", profile_form());
        let Some(token) = self.token else {
            return self.ask(&ProfileStep::AskProfile, question);
        };
        let step: ProfileStep = self.open(token)?;
        match self.elicited::<ProfileAnswer>("profile") {
            Some(Elicited::Accept(profile)) if AGE_RANGE.contains(&profile.age) => {
                Ok(done(format!(
                    "{}, {}, newsletter: {}",
                    profile.name, profile.age, profile.newsletter
                )))
            }
            Some(Elicited::Declined) => Ok(not_accepted()),
            // Missing, malformed or out of bounds: the same question again.
            _ => self.ask_again(token, &step, question),
        }
    }

    fn open<T: DeserializeOwned>(&self, token: &str) -> Result<T, ErrorData> {
        self.codec.open_json_with(token, self.bound).map_err(|_| {
            ErrorData::invalid_params(
                "Invalid or expired requestState; retry the request without requestState to start over",
                None,
            )
        })
    }

    /// Seals `step` and asks its question.
    fn ask<S: Serialize>(
        &self,
        step: &S,
        question: impl Fn(&S) -> (&'static str, InputRequest),
    ) -> Reply {
        let (key, request) = question(step);
        self.check_declared(&request)?;
        let options = SealOptions::new()
            .associated_data(self.bound)
            .ttl(STATE_TTL);
        let token = self
            .codec
            .seal_json_with(step, &options)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        Ok(input_required(key, request, token.to_string()))
    }

    /// Asks `step`'s question again with the state it came with (and so its expiry).
    fn ask_again<S>(
        &self,
        token: &str,
        step: &S,
        question: impl Fn(&S) -> (&'static str, InputRequest),
    ) -> Reply {
        let (key, request) = question(step);
        self.check_declared(&request)?;
        Ok(input_required(key, request, token.to_string()))
    }

    /// Refuses a request kind this request's capabilities do not declare.
    fn check_declared(&self, request: &InputRequest) -> Result<(), ErrorData> {
        let (declared, required) = match request {
            InputRequest::Elicitation(_) => (
                self.capabilities.elicitation.is_some(),
                json!({"elicitation": {"form": {}}}),
            ),
            InputRequest::CreateMessage(_) => (
                self.capabilities.sampling.is_some(),
                json!({"sampling": {}}),
            ),
            _ => (self.capabilities.roots.is_some(), json!({"roots": {}})),
        };
        if declared {
            return Ok(());
        }
        Err(ErrorData::new(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "the client did not declare a capability this tool needs",
            Some(json!({"requiredCapabilities": required})),
        ))
    }

    /// The elicitation answer under `key`, typed; `None` when missing or malformed.
    fn elicited<T: DeserializeOwned>(&self, key: &str) -> Option<Elicited<T>> {
        let answer = self.responses?.get(key)?;
        let result = ElicitResult::deserialize(answer).ok()?;
        match result.action {
            ElicitationAction::Accept => T::deserialize(result.content.as_ref()?)
                .ok()
                .map(Elicited::Accept),
            _ => Some(Elicited::Declined),
        }
    }

    /// The sampled text under `key`; `None` when missing or malformed.
    fn sampled(&self, key: &str) -> Option<String> {
        let answer = self.responses?.get(key)?;
        let result = CreateMessageResult::deserialize(answer).ok()?;
        if result.message.role != Role::Assistant {
            return None;
        }
        Some(
            result
                .message
                .content
                .into_vec()
                .iter()
                .filter_map(|block| block.as_text().map(|text| text.text.as_str()))
                .collect(),
        )
    }
}

fn input_required(key: &str, request: InputRequest, token: String) -> CallToolResponse {
    let mut requests = InputRequests::new();
    requests.insert(key.to_string(), request);
    InputRequiredResult::new(Some(requests), Some(token)).into()
}

fn done(text: String) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(text)]).into()
}

fn not_accepted() -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text("The user did not accept.")]).into()
}

fn form(message: String, schema: ElicitationSchema) -> InputRequest {
    InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: schema,
        },
    ))
}

/// A one-field form whose field is titled with the question, as hosts label it.
fn single_field(field: &str, mut schema: Value, title: &str) -> ElicitationSchema {
    schema["title"] = json!(title);
    let schema = json!({"type": "object", "properties": {field: schema}, "required": [field]});
    serde_json::from_value(schema).expect("a one-field form schema")
}

fn choice(message: String, options: &[&str]) -> InputRequest {
    let field = single_field(
        "choice",
        json!({"type": "string", "enum": options}),
        &message,
    );
    form(message, field)
}

fn confirm(message: String) -> InputRequest {
    let field = single_field("confirm", json!({"type": "boolean"}), &message);
    form(message, field)
}

fn text(message: String) -> InputRequest {
    let field = single_field("text", json!({"type": "string"}), &message);
    form(message, field)
}

fn sampling(prompt: String, max_tokens: u32) -> InputRequest {
    let message = SamplingMessage::new(Role::User, SamplingMessageContentBlock::text(prompt));
    InputRequest::CreateMessage(CreateMessageRequest::new(CreateMessageRequestParams::new(
        vec![message],
        max_tokens,
    )))
}

/// The profile form, built once per process: it never changes.
fn profile_form() -> InputRequest {
    static SCHEMA: std::sync::OnceLock<ElicitationSchema> = std::sync::OnceLock::new();
    let schema = SCHEMA.get_or_init(|| {
        serde_json::from_value(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Your name"},
                "age": {"type": "integer", "title": "Your age", "minimum": 18, "maximum": 130},
                "newsletter": {"type": "boolean", "title": "Subscribe to the newsletter?"},
            },
            "required": ["name", "age", "newsletter"],
        }))
        .expect("the profile schema")
    });
    form("Tell us about yourself.".to_string(), schema.clone())
}

impl ServerHandler for HandWritten {
    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Reply {
        self.call(&request, &context.client_capabilities().unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn everything() -> ClientCapabilities {
        serde_json::from_value(json!({"elicitation": {"form": {}}, "sampling": {}})).unwrap()
    }

    fn call(tool: &str, arguments: Value) -> CallToolRequestParams {
        CallToolRequestParams::new(tool.to_string())
            .with_arguments(arguments.as_object().cloned().unwrap_or_default())
    }

    fn asked(reply: Reply) -> InputRequiredResult {
        match reply.unwrap() {
            CallToolResponse::InputRequired(asked) => asked,
            other => panic!("expected a question, got {other:?}"),
        }
    }

    fn retry(
        mut params: CallToolRequestParams,
        state: &InputRequiredResult,
        answers: Value,
    ) -> CallToolRequestParams {
        params.request_state = state.request_state.clone();
        params.input_responses = serde_json::from_value(answers).unwrap();
        params
    }

    #[test]
    fn a_missing_or_malformed_answer_gets_the_same_question_and_state() {
        let server = HandWritten::new().unwrap();
        let first = asked(server.call(&call("survey", json!({"n": 2})), &everything()));
        for answers in [
            json!({}),
            json!({"answer": {"action": "accept", "content": {"text": 7}}}),
            json!({"other": {"action": "accept", "content": {"text": "x"}}}),
        ] {
            let again = asked(server.call(
                &retry(call("survey", json!({"n": 2})), &first, answers),
                &everything(),
            ));
            assert_eq!(again.request_state, first.request_state);
            assert_eq!(
                serde_json::to_value(&again.input_requests).unwrap(),
                serde_json::to_value(&first.input_requests).unwrap()
            );
        }
    }

    #[test]
    fn an_age_out_of_bounds_is_asked_again() {
        let server = HandWritten::new().unwrap();
        let first = asked(server.call(&call("profile", json!({})), &everything()));
        let too_young = json!({"profile": {"action": "accept", "content": {"name": "a", "age": 17, "newsletter": false}}});
        let again = asked(server.call(
            &retry(call("profile", json!({})), &first, too_young),
            &everything(),
        ));
        assert_eq!(again.request_state, first.request_state);
    }

    #[test]
    fn a_state_bound_to_other_arguments_or_tampered_is_refused() {
        let server = HandWritten::new().unwrap();
        let first = asked(server.call(&call("survey", json!({"n": 2})), &everything()));
        let answer = json!({"answer": {"action": "accept", "content": {"text": "x"}}});
        let other_arguments = retry(call("survey", json!({"n": 3})), &first, answer.clone());
        assert_eq!(
            server
                .call(&other_arguments, &everything())
                .unwrap_err()
                .code,
            ErrorCode::INVALID_PARAMS
        );
        let mut tampered = retry(call("survey", json!({"n": 2})), &first, answer);
        tampered.request_state = tampered.request_state.map(|s| s.replace('.', ".x"));
        assert_eq!(
            server.call(&tampered, &everything()).unwrap_err().code,
            ErrorCode::INVALID_PARAMS
        );
    }

    #[test]
    fn a_kind_the_client_did_not_declare_is_refused() {
        let server = HandWritten::new().unwrap();
        let error = server
            .call(
                &call("wizard", json!({"service": "api"})),
                &ClientCapabilities::default(),
            )
            .unwrap_err();
        assert_eq!(error.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
        let error = server
            .call(&call("wizard", json!({})), &everything())
            .unwrap_err();
        assert!(error.message.contains("service"), "{}", error.message);
    }
}
