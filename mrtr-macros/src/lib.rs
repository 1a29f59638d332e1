//! Procedural macros for `mrtr`. Use them through the `mrtr` facade crate.
//!
//! The attribute and derive macros live here as thin shims; the work happens in plain,
//! unit-tested modules:
//!
//! - `machine/`: `#[mrtr::tool]`, `#[mrtr::prompt]`, `#[mrtr::resource]`, one stage per
//!   module: parse → check → lower → analyze → expand;
//! - `form/`: `#[derive(Form)]`, `#[derive(FormChoice)]`;
//! - `internals/`: what both share — the error accumulator, every attribute's parsing, serde's
//!   rename rules and doc-comment text.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod form;
mod internals;
mod machine;

/// Compiles an `async fn` (or `fn`) that may suspend with `ask!`, `sample!`, `roots!` and
/// `join!` into a resumable MCP tool: a unit struct of the same name implementing
/// `mrtr::machine::Machine<Output = CallToolResult>`, registered with `.tool(name)`.
///
/// # Arguments
///
/// All optional, as `#[mrtr::tool(key = value, ..)]`:
///
/// | argument | value | meaning |
/// | --- | --- | --- |
/// | `name` | `"..."` | the listed name (default: the function's name) |
/// | `description` | `"..."` | the listed description (default: the doc comment) |
/// | `compat` | `"..."` | declares an edit layout-compatible: the state's fingerprint is taken from this tag instead of the body, so flows in flight keep working across the edit; change the tag when the layout changes |
/// | `replay` | `"rerun_after_lease"` (default), `"at_most_once"`, `"unprotected"` | how the server's round ledger protects a resumed round: run again once the lease of a dead instance lapses; never run again (the flow fails closed and starts over); or not claimed at all (for rounds without side effects) |
/// | `task` | `"optional"`, `"required"` | the tool may, or must, run as an MCP task (tasks extension) |
/// | `task_after` | a number `N` (default 0) | with `task`: the first `N` rounds are answered as MRTR, then the call continues as a task |
/// | `crate` | `"path"` | where the `mrtr` facade is, when the dependency is renamed or re-exported (default `::mrtr`, as `#[serde(crate = "...")]` does) |
///
/// `rounds = "..."` and `mrtr_rounds = N`, the old names of `replay` and `task_after`,
/// still work for one release, with a deprecation warning at the key.
///
/// ```
/// /// Charges a card: a round that dies mid-way must never run twice.
/// #[mrtr::tool(name = "charge_card", replay = "at_most_once", task = "optional", task_after = 1)]
/// async fn charge(amount: u32) -> String {
///     let card = ask!(text("Which card?")).ok().unwrap_or_default();
///     format!("charged {amount} to {card}")
/// }
///
/// use mrtr::machine::Machine;
/// assert_eq!(charge.descriptor().name(), "charge_card");
/// ```
///
/// `crate = "..."`:
///
/// ```
/// mod deps {
///     pub use ::mrtr as facade;
/// }
///
/// #[mrtr::tool(crate = "crate::deps::facade")]
/// async fn ping() -> String {
///     "pong".to_string()
/// }
///
/// fn main() {
///     use mrtr::machine::Machine;
///     assert_eq!(ping.descriptor().name(), "ping");
/// }
/// ```
///
///
/// ```
/// use mrtr::machine::ToolError;
///
/// /// Greets someone by name.
/// #[mrtr::tool]
/// async fn greet(greeting: String) -> Result<String, ToolError> {
///     let name = ask!(text("Your name?")).accepted()?;
///     Ok(format!("{greeting}, {name}!"))
/// }
///
/// use mrtr::machine::Machine;
/// assert_eq!(greet.descriptor().name(), "greet");
/// ```
#[proc_macro_attribute]
pub fn tool(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    machine::expand_attribute(machine::Kind::Tool, attr.into(), item.into()).into()
}

/// Like [`macro@tool`], for `prompts/get`: the function returns prompt messages
/// (`Vec<PromptMessage>`, `String`, `GetPromptResult`, ...). Parameters are the prompt's
/// arguments (an `Option<..>` one is not required; its doc comment describes it).
///
/// # Arguments
///
/// All optional, as `#[mrtr::prompt(key = value, ..)]`; as for [`macro@tool`]:
///
/// | argument | value | meaning |
/// | --- | --- | --- |
/// | `name` | `"..."` | the listed name (default: the function's name) |
/// | `description` | `"..."` | the listed description (default: the doc comment) |
/// | `compat` | `"..."` | declares an edit layout-compatible (see [`macro@tool`]) |
/// | `replay` | `"rerun_after_lease"` (default), `"at_most_once"`, `"unprotected"` | how the round ledger protects a resumed round (see [`macro@tool`]) |
/// | `crate` | `"path"` | where the `mrtr` facade is (default `::mrtr`) |
///
/// A prompt cannot run as a task: `task` and `task_after` are tools' arguments. `rounds`,
/// the old name of `replay`, still works for one release, with a deprecation warning.
///
/// ```
/// /// Brainstorm on a topic.
/// #[mrtr::prompt(name = "ideas", replay = "unprotected")]
/// async fn brainstorm(topic: String) -> String {
///     let tone = ask!(choice("Tone?", ["serious", "playful"])).ok().unwrap_or_default();
///     format!("Give three {tone} ideas about {topic}.")
/// }
///
/// use mrtr::machine::{InputKind, Machine, Method};
/// let listed = brainstorm.descriptor();
/// assert_eq!((listed.name(), listed.method()), ("ideas", Method::GetPrompt));
/// assert_eq!(listed.input_kinds, [InputKind::FormElicitation]);
/// ```
#[proc_macro_attribute]
pub fn prompt(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    machine::expand_attribute(machine::Kind::Prompt, attr.into(), item.into()).into()
}

/// Like [`macro@tool`], for `resources/read` of a fixed `uri = "..."` (optionally
/// `mime_type = "..."`): the function returns the contents.
///
/// # Arguments
///
/// As `#[mrtr::resource(key = value, ..)]`; only `uri` is required:
///
/// | argument | value | meaning |
/// | --- | --- | --- |
/// | `uri` | `"scheme://..."` | the resource's URI (required) |
/// | `name` | `"..."` | the listed name (default: the function's name) |
/// | `mime_type` | `"..."` | the listed MIME type of the contents |
/// | `description` | `"..."` | the listed description (default: the doc comment) |
/// | `compat` | `"..."` | declares an edit layout-compatible (see [`macro@tool`]) |
/// | `replay` | `"rerun_after_lease"` (default), `"at_most_once"`, `"unprotected"` | how the round ledger protects a resumed round (see [`macro@tool`]) |
/// | `crate` | `"path"` | where the `mrtr` facade is (default `::mrtr`) |
///
/// A resource cannot run as a task: `task` and `task_after` are tools' arguments. `rounds`,
/// the old name of `replay`, still works for one release, with a deprecation warning.
///
/// ```
/// /// Today's notes.
/// #[mrtr::resource(uri = "notes://today", name = "notes", mime_type = "text/plain", compat = "v1")]
/// async fn notes() -> String {
///     let roots = roots!();
///     format!("{} workspace roots", roots.len())
/// }
///
/// use mrtr::machine::{InputKind, Listing, Machine};
/// let Listing::Resource(resource) = &notes.descriptor().listing else { unreachable!() };
/// assert_eq!(resource.uri, "notes://today");
/// assert_eq!(resource.mime_type.as_deref(), Some("text/plain"));
/// assert_eq!(notes.descriptor().input_kinds, [InputKind::Roots]);
/// ```
#[proc_macro_attribute]
pub fn resource(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    machine::expand_attribute(machine::Kind::Resource, attr.into(), item.into()).into()
}

/// Derives `mrtr::form::Form`: the type becomes an elicitation form whose
/// `requestedSchema` — a flat object of primitive properties, as MCP requires — is computed
/// at compile time from the struct's fields.
///
/// ```
/// use mrtr::form::Form;
///
/// #[derive(mrtr::Form, serde::Deserialize)]
/// struct Confirm {
///     /// Apply the plan now?
///     apply: bool,
///     #[form(max_length = 200)]
///     reason: Option<String>,
/// }
///
/// let schema = serde_json::to_value(Confirm::requested_schema()).unwrap();
/// assert_eq!(schema, serde_json::json!({
///     "type": "object",
///     "properties": {
///         "apply": {"type": "boolean", "title": "Apply the plan now?"},
///         "reason": {"type": "string", "maxLength": 200}
///     },
///     "required": ["apply"]
/// }));
/// ```
///
/// # Field types
///
/// | Rust type | schema |
/// | --- | --- |
/// | `String` | `{"type": "string"}` |
/// | `i8` `i16` `i32` `i64` `isize` | `{"type": "integer"}` |
/// | `u8` `u16` `u32` `u64` `usize` | `{"type": "integer", "minimum": 0}` (unless `minimum` is given) |
/// | `f32` `f64` | `{"type": "number"}` |
/// | `bool` | `{"type": "boolean"}` |
/// | an enum deriving [`FormChoice`](derive@FormChoice) | single-select: `enum`, or `oneOf: [{const, title}]` when any option has a title |
/// | `Vec<Choice>` | multi-select: `{"type": "array", "items": {"type": "string", "enum": [..]}}`, or `items: {anyOf: [{const, title}]}` |
/// | `Option<T>` of any of these | the same, but not listed in `required` |
///
/// Every field that is not an `Option` (and has no `#[serde(default)]`) is `required`.
/// Properties keep the declaration order. serde's `rename`, `rename_all`, `default` and
/// `skip`/`skip_deserializing` are honoured, so the property names are the ones serde reads.
///
/// A macro sees only syntax, so types are recognised by the last segment of their path
/// (`std::string::String` is a `String`). Any other plain path, such as `Env` or
/// `crate::Env`, is taken to be a choice enum; if it does not implement `FormChoice`, the
/// compiler says so on the field, naming it. Everything else — nested structs, maps,
/// `Vec<String>`, tuples, references, arrays, `serde_json::Value`, `Option<Option<_>>` — is a
/// compile error on the field's type. All bad fields are reported at once.
///
/// # Field attributes: `#[form(...)]`
///
/// | key | applies to | schema keyword |
/// | --- | --- | --- |
/// | `title = "..."` | every field | `title`, the label hosts put on the input (default: the first paragraph of the field's doc comment) |
/// | `description = "..."` | every field | `description`, its help text (default: the doc comment's paragraphs after the first; all of it when `title` is given) |
/// | `default = ...` | every field | `default`: a literal of the field's type; a variant for a choice (`default = Env::Prod`); an array of variants for a multi-select (`default = [Tag::A, Tag::B]`) |
/// | `format = "email" \| "uri" \| "date" \| "date-time"` | `String` | `format` |
/// | `min_length = N`, `max_length = N` | `String` | `minLength`, `maxLength` |
/// | `minimum = N`, `maximum = N` | integers, floats | `minimum`, `maximum` (checked against the Rust type's range) |
/// | `min_items = N`, `max_items = N` | `Vec<Choice>` | `minItems`, `maxItems` |
///
/// Defaults are checked against the bounds at compile time. Answers are checked against the
/// schema (bounds, options, formats) by the runtime before they are deserialized.
///
/// The struct must also derive `serde::Deserialize` (that is what reads the answer), and cannot
/// be generic. The generated code names the facade crate as `::mrtr`; if you renamed or
/// re-export it, say where it is with `#[form(crate = "::my_mrtr")]` on the struct (and on
/// choice enums). No other `#[form(...)]` key is accepted on the struct itself: the spec's
/// `requestedSchema` has no title or description.
///
/// ```
/// use mrtr::form::Form;
///
/// #[derive(mrtr::FormChoice, serde::Deserialize)]
/// #[serde(rename_all = "lowercase")]
/// enum Env { Staging, Prod }
///
/// #[derive(mrtr::Form, serde::Deserialize)]
/// #[serde(rename_all = "camelCase")]
/// struct Deploy {
///     #[form(default = Env::Staging)]
///     target_env: Env,
///     #[form(minimum = 1, maximum = 10, default = 2)]
///     replicas: u8,
///     #[form(format = "email", title = "Notify")]
///     notify: Option<String>,
/// }
///
/// let schema = serde_json::to_value(Deploy::requested_schema()).unwrap();
/// assert_eq!(schema["properties"]["targetEnv"], serde_json::json!(
///     {"type": "string", "enum": ["staging", "prod"], "default": "staging"}));
/// assert_eq!(schema["required"], serde_json::json!(["targetEnv", "replicas"]));
/// ```
#[proc_macro_derive(Form, attributes(form))]
pub fn derive_form(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    form::derive_form(input.into()).into()
}

/// Derives `mrtr::form::FormChoice` for a fieldless enum: its variants become the options of
/// a single-select (a field of this type) or multi-select (`Vec` of it) in a
/// [`Form`](derive@Form).
///
/// Option values are what serde reads (honouring `rename` and `rename_all`); variants with
/// `#[serde(skip)]`, `skip_deserializing` or `other` are not offered. A variant's title comes
/// from `#[form(title = "...")]` or its doc comment; once any option has a title the titled
/// schema shape (`oneOf`/`anyOf` of `{const, title}`) is used, and untitled options are titled
/// with their value.
///
/// ```
/// use mrtr::form::FormChoice;
///
/// #[derive(mrtr::FormChoice, serde::Deserialize)]
/// #[serde(rename_all = "kebab-case")]
/// enum Strategy {
///     /// Blue/green
///     BlueGreen,
///     #[form(title = "Canary release")]
///     Canary,
/// }
///
/// assert_eq!(Strategy::OPTIONS[0].value, "blue-green");
/// assert_eq!(Strategy::OPTIONS[1].title, Some("Canary release"));
/// assert_eq!(Strategy::Canary.value(), "canary");
/// ```
#[proc_macro_derive(FormChoice, attributes(form))]
pub fn derive_form_choice(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    form::derive_form_choice(input.into()).into()
}
