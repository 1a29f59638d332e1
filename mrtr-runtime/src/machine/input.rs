//! Builders for the input requests a machine can suspend on.
//!
//! Each builder returns an [`Input<O>`]: the protocol request plus, at the type level, the
//! [`Outcome`](super::Outcome) it resolves to once the client answers. `ask!`, `sample!` and
//! `roots!` take these values; hand-written machines pass them to
//! [`Suspend::ask`](super::Suspend::ask).

#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still part of 2026-07-28

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::marker::PhantomData;

use rmcp::model::{
    BooleanSchema, CreateMessageRequest, CreateMessageRequestParams, ElicitRequest,
    ElicitRequestParams, ElicitationSchema, EnumSchema, InputRequest, ListRootsRequest, ModelHint,
    ModelPreferences, MultiSelectEnumSchema, PrimitiveSchemaDefinition, Role, SamplingMessage,
    SamplingMessageContentBlock, SingleSelectEnumSchema, StringSchema, Tool,
};

use super::kind::InputKind;
use super::outcome::{Elicited, Roots, Sampled};
use super::recipe::{RebuildError, Recipe, SingleFieldBuilder, TitledField, Wording};
use crate::form::Form;
use crate::form::registry::RegisteredForm;

/// One input request that resolves to an outcome of type `O`.
///
/// ```
/// use mrtr_runtime::machine::{input, InputKind};
/// let question = input::choice("Which environment?", ["staging", "prod"]);
/// assert_eq!(question.kind(), InputKind::FormElicitation);
/// ```
#[derive(Debug, Clone)]
pub struct Input<O> {
    request: InputRequest,
    /// How the request is stored in `requestState` (see `recipe.rs`).
    recipe: Recipe,
    outcome: PhantomData<fn() -> O>,
}

impl<O> Input<O> {
    /// Wraps a protocol request. The caller vouches that `O` can decode its answer.
    ///
    /// ```
    /// use mrtr_runtime::machine::{Input, Roots};
    /// use rmcp::model::{InputRequest, ListRootsRequest};
    /// #[allow(deprecated)]
    /// let raw: Input<Roots> = Input::from_request(InputRequest::ListRoots(ListRootsRequest::default()));
    /// assert_eq!(raw.kind(), mrtr_runtime::machine::InputKind::Roots);
    /// ```
    pub fn from_request(request: InputRequest) -> Self {
        Self::with_recipe(request, Recipe::Unknown)
    }

    fn with_recipe(request: InputRequest, recipe: Recipe) -> Self {
        Input {
            request,
            recipe,
            outcome: PhantomData,
        }
    }

    #[cfg(test)]
    pub(crate) fn recipe(&self) -> &Recipe {
        &self.recipe
    }

    pub(crate) fn into_stored_parts(self) -> (InputRequest, Recipe) {
        (self.request, self.recipe)
    }

    /// The protocol request sent to the client.
    ///
    /// ```
    /// let q = mrtr_runtime::machine::input::roots();
    /// assert!(matches!(q.request(), rmcp::model::InputRequest::ListRoots(_)));
    /// ```
    pub fn request(&self) -> &InputRequest {
        &self.request
    }

    /// Takes the protocol request out.
    ///
    /// ```
    /// let request = mrtr_runtime::machine::input::roots().into_request();
    /// assert_eq!(serde_json::to_value(request).unwrap()["method"], "roots/list");
    /// ```
    pub fn into_request(self) -> InputRequest {
        self.request
    }

    /// Which capability the client must declare for this request.
    ///
    /// ```
    /// use mrtr_runtime::machine::{input, InputKind};
    /// assert_eq!(input::prompt("hi").kind(), InputKind::Sampling);
    /// ```
    pub fn kind(&self) -> InputKind {
        InputKind::of(&self.request)
    }
}

fn elicit_form(message: impl Into<String>, requested_schema: ElicitationSchema) -> InputRequest {
    InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.into(),
            requested_schema,
        },
    ))
}

/// The one field of [`text`]'s form and its property. The builders and the check of a
/// restored question's answer both take the field from here, so they cannot drift apart.
pub(crate) fn text_field() -> (&'static str, PrimitiveSchemaDefinition) {
    (
        "text",
        PrimitiveSchemaDefinition::String(StringSchema::new()),
    )
}

/// The one field of [`confirm`]'s form and its property.
pub(crate) fn confirm_field() -> (&'static str, PrimitiveSchemaDefinition) {
    (
        "confirm",
        PrimitiveSchemaDefinition::Boolean(BooleanSchema::new()),
    )
}

/// The one field of [`choice`]'s form and its property.
pub(crate) fn choice_field(options: Vec<String>) -> (&'static str, PrimitiveSchemaDefinition) {
    (
        "choice",
        PrimitiveSchemaDefinition::Enum(EnumSchema::builder(options).build()),
    )
}

/// The one field of [`multi_choice`]'s form and its property.
pub(crate) fn multi_choice_field(
    options: Vec<String>,
) -> (&'static str, PrimitiveSchemaDefinition) {
    (
        "choices",
        PrimitiveSchemaDefinition::Enum(EnumSchema::builder(options).multiselect().build()),
    )
}

/// `{"type": "object", "properties": {field: property}, "required": [field]}`, built from
/// rmcp's types: going through `serde_json::Value` cost more than the rest of a round (the
/// untagged property enum tries, and fails, variant after variant). The field is titled
/// with `title` (the question, unless the author set one), so hosts label it with words
/// rather than with the field's name (`choice`, `text`).
fn single_field_schema(
    field: &str,
    mut property: PrimitiveSchemaDefinition,
    title: &str,
) -> ElicitationSchema {
    set_title(&mut property, title);
    ElicitationSchema::new(BTreeMap::from([(field.to_owned(), property)]))
        .with_required(vec![field.to_owned()])
}

/// Sets the `title` of a property, whatever its kind.
fn set_title(property: &mut PrimitiveSchemaDefinition, title: &str) {
    let title = Some(Cow::Owned(title.to_owned()));
    match property {
        PrimitiveSchemaDefinition::String(schema) => schema.title = title,
        PrimitiveSchemaDefinition::Number(schema) => schema.title = title,
        PrimitiveSchemaDefinition::Integer(schema) => schema.title = title,
        PrimitiveSchemaDefinition::Boolean(schema) => schema.title = title,
        PrimitiveSchemaDefinition::Enum(EnumSchema::Single(SingleSelectEnumSchema::Untitled(
            schema,
        ))) => schema.title = title,
        PrimitiveSchemaDefinition::Enum(EnumSchema::Single(SingleSelectEnumSchema::Titled(
            schema,
        ))) => schema.title = title,
        PrimitiveSchemaDefinition::Enum(EnumSchema::Multi(MultiSelectEnumSchema::Untitled(
            schema,
        ))) => schema.title = title,
        PrimitiveSchemaDefinition::Enum(EnumSchema::Multi(MultiSelectEnumSchema::Titled(
            schema,
        ))) => schema.title = title,
        PrimitiveSchemaDefinition::Enum(EnumSchema::Legacy(schema)) => schema.title = title,
        // A kind of property a later rmcp adds: left untitled.
        _ => {}
    }
}

/// The one property of a form elicitation's schema, when it has exactly one.
fn single_property(request: &mut InputRequest) -> Option<&mut PrimitiveSchemaDefinition> {
    let InputRequest::Elicitation(elicit) = request else {
        return None;
    };
    let ElicitRequestParams::FormElicitationParams {
        requested_schema, ..
    } = &mut elicit.params
    else {
        return None;
    };
    match requested_schema.properties.len() {
        1 => requested_schema.properties.values_mut().next(),
        _ => None,
    }
}

/// A form elicitation whose fields come from a `#[derive(Form)]` type.
///
/// ```
/// use mrtr_runtime::machine::{input, Elicited};
/// use mrtr_runtime::form::Form;
/// # #[derive(serde::Deserialize)] struct Confirm { apply: bool }
/// # impl Form for Confirm { fn requested_schema() -> rmcp::model::ElicitationSchema {
/// #   serde_json::from_value(serde_json::json!({"type":"object","properties":{"apply":{"type":"boolean"}},"required":["apply"]})).unwrap() } }
/// let question: mrtr_runtime::machine::Input<Elicited<Confirm>> = input::form::<Confirm>("Apply the plan?");
/// let params = &serde_json::to_value(question.request()).unwrap()["params"];
/// assert_eq!(params["message"], "Apply the plan?");
/// assert_eq!(params["requestedSchema"]["properties"]["apply"]["type"], "boolean");
/// ```
pub fn form<T: Form>(message: impl Into<String>) -> Input<Elicited<T>> {
    match T::__registered().filter(|form| form.is_rebuildable()) {
        Some(form) => {
            let message = message.into();
            let request = registered_form(message.clone(), form);
            Input::with_recipe(
                request,
                Recipe::Form {
                    key: form.key(),
                    message: Wording::new(message),
                },
            )
        }
        None => Input::from_request(elicit_form(message, T::requested_schema())),
    }
}

fn wordings(strings: Vec<String>) -> Vec<Wording> {
    strings.into_iter().map(Wording::new).collect()
}

/// The request [`form`] sends for a registered form (its schema is built once per process).
pub(crate) fn registered_form(message: impl Into<String>, form: &RegisteredForm) -> InputRequest {
    elicit_form(message, form.schema().clone())
}

/// A single choice among `options`; the answer is the chosen option.
///
/// ```
/// use serde_json::json;
/// let q = mrtr_runtime::machine::input::choice("Which environment?", ["staging", "prod"]);
/// assert_eq!(serde_json::to_value(q.request()).unwrap(), json!({
///     "method": "elicitation/create",
///     "params": {
///         "mode": "form",
///         "message": "Which environment?",
///         "requestedSchema": {
///             "type": "object",
///             "properties": {"choice": {"type": "string", "title": "Which environment?", "enum": ["staging", "prod"]}},
///             "required": ["choice"],
///         },
///     },
/// }));
/// ```
pub fn choice<I, S>(message: impl Into<String>, options: I) -> Input<Elicited<String>>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let message = message.into();
    let options: Vec<String> = options.into_iter().map(Into::into).collect();
    let (field, property) = choice_field(options.clone());
    let schema = single_field_schema(field, property, &message);
    let request = elicit_form(message.clone(), schema);
    Input::with_recipe(
        request,
        Recipe::Choice(Wording::new(message), wordings(options)),
    )
}

/// Any number of choices among `options`; the answer is the chosen options.
///
/// ```
/// let q = mrtr_runtime::machine::input::multi_choice("Which regions?", ["eu", "us", "ap"]);
/// let schema = &serde_json::to_value(q.request()).unwrap()["params"]["requestedSchema"];
/// assert_eq!(schema["properties"]["choices"], serde_json::json!({
///     "type": "array",
///     "title": "Which regions?",
///     "items": {"type": "string", "enum": ["eu", "us", "ap"]},
/// }));
/// assert_eq!(schema["required"], serde_json::json!(["choices"]));
/// ```
pub fn multi_choice<I, S>(message: impl Into<String>, options: I) -> Input<Elicited<Vec<String>>>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let message = message.into();
    let options: Vec<String> = options.into_iter().map(Into::into).collect();
    let (field, property) = multi_choice_field(options.clone());
    let schema = single_field_schema(field, property, &message);
    let request = elicit_form(message.clone(), schema);
    Input::with_recipe(
        request,
        Recipe::MultiChoice(Wording::new(message), wordings(options)),
    )
}

/// A single line of text.
///
/// ```
/// let q = mrtr_runtime::machine::input::text("What is your name?");
/// let params = &serde_json::to_value(q.request()).unwrap()["params"];
/// assert_eq!(params["message"], "What is your name?");
/// assert_eq!(params["requestedSchema"]["properties"]["text"]["type"], "string");
/// assert_eq!(params["requestedSchema"]["required"], serde_json::json!(["text"]));
/// ```
pub fn text(message: impl Into<String>) -> Input<Elicited<String>> {
    let message = message.into();
    let (field, property) = text_field();
    let schema = single_field_schema(field, property, &message);
    let request = elicit_form(message.clone(), schema);
    Input::with_recipe(request, Recipe::Text(Wording::new(message)))
}

/// A yes/no question; the answer is the boolean.
///
/// ```
/// let q = mrtr_runtime::machine::input::confirm("Deploy now?");
/// let params = &serde_json::to_value(q.request()).unwrap()["params"];
/// assert_eq!(params["message"], "Deploy now?");
/// assert_eq!(params["requestedSchema"]["properties"]["confirm"]["type"], "boolean");
/// assert_eq!(params["requestedSchema"]["required"], serde_json::json!(["confirm"]));
/// ```
pub fn confirm(message: impl Into<String>) -> Input<Elicited<bool>> {
    let message = message.into();
    let (field, property) = confirm_field();
    let schema = single_field_schema(field, property, &message);
    let request = elicit_form(message.clone(), schema);
    Input::with_recipe(request, Recipe::Confirm(Wording::new(message)))
}

/// A URL-mode elicitation: the user is sent to `url` out of band. `Accept` means only that
/// the user consented to open it; correlate completion through your own state.
///
/// ```
/// use mrtr_runtime::machine::{input, InputKind};
/// let q = input::url("Sign in to continue", "https://example.com/login");
/// assert_eq!(q.kind(), InputKind::UrlElicitation);
/// let params = &serde_json::to_value(q.request()).unwrap()["params"];
/// assert_eq!(params["mode"], "url");
/// assert_eq!(params["message"], "Sign in to continue");
/// assert_eq!(params["url"], "https://example.com/login");
/// ```
pub fn url(message: impl Into<String>, url: impl Into<String>) -> Input<Elicited<()>> {
    let (message, url) = (message.into(), url.into());
    let request = InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: message.clone(),
            url: url.clone(),
            elicitation_id: String::new(),
        },
    ));
    Input::with_recipe(
        request,
        Recipe::Url(Wording::new(message), Wording::new(url)),
    )
}

/// A sampling request with one user message; refine it with the methods on
/// `Input<Sampled>` ([`Input::system`], [`Input::max_tokens`], ...).
///
/// ```
/// let q = mrtr_runtime::machine::input::prompt("Summarize the plan");
/// let params = &serde_json::to_value(q.request()).unwrap()["params"];
/// assert_eq!(params["messages"], serde_json::json!([
///     {"role": "user", "content": {"type": "text", "text": "Summarize the plan"}},
/// ]));
/// assert_eq!(params["maxTokens"], 512);
/// ```
pub fn prompt(text: impl Into<String>) -> Input<Sampled> {
    let text = text.into();
    let message = SamplingMessage::new(Role::User, SamplingMessageContentBlock::text(text.clone()));
    let mut prompt = sampling(CreateMessageRequestParams::new(vec![message], 512));
    prompt.recipe = Recipe::Prompt {
        text: Wording::new(text),
        system: None,
        max_tokens: 512,
    };
    prompt
}

/// A sampling request from fully specified parameters.
///
/// ```
/// use rmcp::model::{CreateMessageRequestParams, Role, SamplingMessage, SamplingMessageContentBlock};
/// #[allow(deprecated)]
/// let params = CreateMessageRequestParams::new(
///     vec![SamplingMessage::new(Role::User, SamplingMessageContentBlock::text("hi"))], 64);
/// let q = mrtr_runtime::machine::input::sampling(params);
/// assert_eq!(q.kind(), mrtr_runtime::machine::InputKind::Sampling);
/// assert_eq!(serde_json::to_value(q.request()).unwrap()["params"]["maxTokens"], 64);
/// ```
pub fn sampling(params: CreateMessageRequestParams) -> Input<Sampled> {
    Input::from_request(InputRequest::CreateMessage(CreateMessageRequest::new(
        params,
    )))
}

/// A `roots/list` request.
///
/// ```
/// let q = mrtr_runtime::machine::input::roots();
/// assert_eq!(q.kind(), mrtr_runtime::machine::InputKind::Roots);
/// ```
pub fn roots() -> Input<Roots> {
    Input::with_recipe(
        InputRequest::ListRoots(ListRootsRequest::default()),
        Recipe::Roots,
    )
}

impl Input<Sampled> {
    /// The sampling parameters; `None` only for an `Input<Sampled>` built by
    /// [`Input::from_request`] around another kind of request, which the modifiers leave
    /// alone (the runtime rejects the mismatch when the answer comes back).
    fn params_mut(&mut self) -> Option<&mut CreateMessageRequestParams> {
        match &mut self.request {
            InputRequest::CreateMessage(request) => Some(&mut request.params),
            _ => None,
        }
    }

    /// Sets the system prompt.
    ///
    /// ```
    /// let q = mrtr_runtime::machine::input::prompt("hi").system("Be brief.");
    /// let params = &serde_json::to_value(q.request()).unwrap()["params"];
    /// assert_eq!(params["systemPrompt"], "Be brief.");
    /// ```
    pub fn system(mut self, system_prompt: impl Into<String>) -> Self {
        let system_prompt = system_prompt.into();
        if let Recipe::Prompt { system, .. } = &mut self.recipe {
            *system = Some(Wording::new(system_prompt.clone()));
        }
        if let Some(params) = self.params_mut() {
            params.system_prompt = Some(system_prompt);
        }
        self
    }

    /// Sets the maximum number of tokens the client may sample.
    ///
    /// ```
    /// let q = mrtr_runtime::machine::input::prompt("hi").max_tokens(50);
    /// assert_eq!(serde_json::to_value(q.request()).unwrap()["params"]["maxTokens"], 50);
    /// ```
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        if let Recipe::Prompt {
            max_tokens: stored, ..
        } = &mut self.recipe
        {
            *stored = max_tokens;
        }
        if let Some(params) = self.params_mut() {
            params.max_tokens = max_tokens;
        }
        self
    }

    /// Adds a model hint (clients evaluate hints in order).
    ///
    /// ```
    /// let q = mrtr_runtime::machine::input::prompt("hi").model_hint("claude").model_hint("gpt");
    /// let preferences = &serde_json::to_value(q.request()).unwrap()["params"]["modelPreferences"];
    /// assert_eq!(preferences["hints"], serde_json::json!([{"name": "claude"}, {"name": "gpt"}]));
    /// ```
    pub fn model_hint(mut self, name: impl Into<String>) -> Self {
        self.recipe = Recipe::Unknown;
        if let Some(params) = self.params_mut() {
            params
                .model_preferences
                .get_or_insert_with(ModelPreferences::default)
                .hints
                .get_or_insert_with(Vec::new)
                .push(ModelHint::new(name));
        }
        self
    }

    /// Offers tools to the model; the client must declare `sampling.tools`.
    ///
    /// ```
    /// let q = mrtr_runtime::machine::input::prompt("hi").tools(Vec::new());
    /// assert_eq!(q.kind(), mrtr_runtime::machine::InputKind::SamplingWithTools);
    /// ```
    pub fn tools(mut self, tools: Vec<Tool>) -> Self {
        self.recipe = Recipe::Unknown;
        if let Some(params) = self.params_mut() {
            params.tools = Some(tools);
        }
        self
    }
}

impl<T> Input<Elicited<T>> {
    /// Labels the answer's field: hosts show it beside the input. The single-field builders
    /// ([`text`], [`confirm`], [`choice`], [`multi_choice`]) title it with the question
    /// unless you set a shorter label here; a form of several fields titles each field
    /// itself (a `#[derive(Form)]` field's first doc line), and is left as it is.
    ///
    /// ```
    /// let q = mrtr_runtime::machine::input::text("What should the release be called?").title("Release name");
    /// let schema = &serde_json::to_value(q.request()).unwrap()["params"]["requestedSchema"];
    /// assert_eq!(schema["properties"]["text"]["title"], "Release name");
    /// ```
    pub fn title(mut self, title: impl Into<String>) -> Self {
        let title = title.into();
        let Some(property) = single_property(&mut self.request) else {
            return self;
        };
        set_title(property, &title);
        let (builder, message, options) = match std::mem::replace(&mut self.recipe, Recipe::Unknown)
        {
            Recipe::Text(message) => (SingleFieldBuilder::Text, message, Vec::new()),
            Recipe::Confirm(message) => (SingleFieldBuilder::Confirm, message, Vec::new()),
            Recipe::Choice(message, options) => (SingleFieldBuilder::Choice, message, options),
            Recipe::MultiChoice(message, options) => {
                (SingleFieldBuilder::MultiChoice, message, options)
            }
            Recipe::Titled(field) => (field.builder, field.message, field.options),
            // Anything else is stored as its request's JSON text, title included.
            _ => return self,
        };
        self.recipe = Recipe::Titled(TitledField {
            builder,
            message,
            options,
            title: Wording::new(title),
        });
        self
    }
}

/// Rebuilding a stored request calls the builder that made it, so the rebuilt request is
/// the one that was sent: this lives beside the builders, and [`recipe`](super::recipe)
/// holds only what is stored.
impl Recipe {
    /// For a builder whose form has one field ([`text`], [`confirm`],
    /// [`choice`], [`multi_choice`]): that field and its property as the
    /// builder makes them, without building the request; every string it refers to is
    /// resolved, so it fails exactly where [`rebuild`](Self::rebuild) would. `None` for
    /// every other recipe.
    pub(crate) fn single_field(
        &self,
        literals: &[&'static str],
    ) -> Option<Result<(&'static str, PrimitiveSchemaDefinition), RebuildError>> {
        let options = |wordings: &[Wording]| {
            wordings
                .iter()
                .map(|wording| wording.resolve(literals).map(str::to_owned))
                .collect::<Result<Vec<_>, _>>()
        };
        Some(match self {
            Recipe::Text(message) => message.resolve(literals).map(|_| text_field()),
            Recipe::Confirm(message) => message.resolve(literals).map(|_| confirm_field()),
            Recipe::Choice(message, wordings) => message
                .resolve(literals)
                .and_then(|_| options(wordings))
                .map(choice_field),
            Recipe::MultiChoice(message, wordings) => message
                .resolve(literals)
                .and_then(|_| options(wordings))
                .map(multi_choice_field),
            Recipe::Titled(field) => field
                .message
                .resolve(literals)
                .and_then(|_| field.title.resolve(literals))
                .and_then(|_| options(&field.options))
                .map(|options| match field.builder {
                    SingleFieldBuilder::Text => text_field(),
                    SingleFieldBuilder::Confirm => confirm_field(),
                    SingleFieldBuilder::Choice => choice_field(options),
                    SingleFieldBuilder::MultiChoice => multi_choice_field(options),
                }),
            _ => return None,
        })
    }

    /// The request this recipe stands for, in a machine whose body has the string
    /// `literals`.
    pub(crate) fn rebuild(&self, literals: &[&'static str]) -> Result<InputRequest, RebuildError> {
        let resolved = |wording: &'_ Wording| wording.resolve(literals).map(str::to_owned);
        let all =
            |wordings: &[Wording]| wordings.iter().map(resolved).collect::<Result<Vec<_>, _>>();
        Ok(match self {
            Recipe::Json(json) => {
                serde_json::from_str(json).map_err(|e| RebuildError::Invalid(e.to_string()))?
            }
            Recipe::Text(message) => self::text(resolved(message)?).into_request(),
            Recipe::Confirm(message) => self::confirm(resolved(message)?).into_request(),
            Recipe::Choice(message, options) => {
                self::choice(resolved(message)?, all(options)?).into_request()
            }
            Recipe::MultiChoice(message, options) => {
                self::multi_choice(resolved(message)?, all(options)?).into_request()
            }
            Recipe::Url(message, url) => {
                self::url(resolved(message)?, resolved(url)?).into_request()
            }
            Recipe::Prompt {
                text: prompt_text,
                system,
                max_tokens,
            } => {
                let mut prompt = self::prompt(resolved(prompt_text)?).max_tokens(*max_tokens);
                if let Some(system) = system {
                    prompt = prompt.system(resolved(system)?);
                }
                prompt.into_request()
            }
            Recipe::Roots => self::roots().into_request(),
            Recipe::Unknown => {
                return Err(RebuildError::Invalid(
                    "a request without a recipe was stored".into(),
                ));
            }
            Recipe::Form { key, message } => {
                let form = crate::form::registry::lookup(*key).ok_or(RebuildError::UnknownForm)?;
                registered_form(resolved(message)?, form)
            }
            Recipe::Titled(field) => {
                let message = resolved(&field.message)?;
                let title = resolved(&field.title)?;
                match field.builder {
                    SingleFieldBuilder::Text => self::text(message).title(title).into_request(),
                    SingleFieldBuilder::Confirm => {
                        self::confirm(message).title(title).into_request()
                    }
                    SingleFieldBuilder::Choice => self::choice(message, all(&field.options)?)
                        .title(title)
                        .into_request(),
                    SingleFieldBuilder::MultiChoice => {
                        self::multi_choice(message, all(&field.options)?)
                            .title(title)
                            .into_request()
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn requested_schema<O>(input: Input<O>) -> ElicitationSchema {
        match input.into_request() {
            InputRequest::Elicitation(ElicitRequest {
                params:
                    ElicitRequestParams::FormElicitationParams {
                        requested_schema, ..
                    },
                ..
            }) => requested_schema,
            other => panic!("not a form elicitation: {other:?}"),
        }
    }

    /// The typed schemas are exactly what decoding the documented JSON gives (the same
    /// variant, not only the same text), and serialize back to that JSON.
    #[test]
    fn builder_schemas_are_the_ones_their_json_decodes_to() {
        let cases: [(ElicitationSchema, Value); 6] = [
            (
                requested_schema(text("Name?")),
                json!({"type": "object", "properties": {"text": {"type": "string", "title": "Name?"}}, "required": ["text"]}),
            ),
            (
                requested_schema(confirm("Sure?")),
                json!({"type": "object", "properties": {"confirm": {"type": "boolean", "title": "Sure?"}}, "required": ["confirm"]}),
            ),
            (
                requested_schema(choice("Where?", ["staging", "prod"])),
                json!({"type": "object", "properties": {"choice": {"type": "string", "title": "Where?", "enum": ["staging", "prod"]}}, "required": ["choice"]}),
            ),
            (
                requested_schema(multi_choice("Which?", ["eu", "us"])),
                json!({"type": "object", "properties": {"choices": {"type": "array", "title": "Which?", "items": {"type": "string", "enum": ["eu", "us"]}}}, "required": ["choices"]}),
            ),
            (
                requested_schema(
                    choice("Where should it go?", ["staging", "prod"]).title("Environment"),
                ),
                json!({"type": "object", "properties": {"choice": {"type": "string", "title": "Environment", "enum": ["staging", "prod"]}}, "required": ["choice"]}),
            ),
            (
                requested_schema(confirm("Ship it?").title("Go").title("Ship")),
                json!({"type": "object", "properties": {"confirm": {"type": "boolean", "title": "Ship"}}, "required": ["confirm"]}),
            ),
        ];
        for (built, expected) in cases {
            let decoded: ElicitationSchema = serde_json::from_value(expected.clone()).unwrap();
            assert_eq!(built, decoded);
            assert_eq!(serde_json::to_value(&built).unwrap(), expected);
        }
    }
}
