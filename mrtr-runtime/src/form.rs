//! The runtime side of form elicitation: the [`Form`] trait that `#[derive(Form)]` implements.

use rmcp::model::ElicitationSchema;
use serde::de::DeserializeOwned;

/// A type that can be asked for as an elicitation form: a flat object of primitives whose
/// `requestedSchema` is fixed at compile time.
///
/// Usually derived with `#[derive(mrtr::Form)]`; implementing it by hand is fine too:
///
/// ```
/// use mrtr_runtime::form::Form;
/// #[derive(serde::Deserialize)]
/// struct Name { name: String }
/// impl Form for Name {
///     fn requested_schema() -> rmcp::model::ElicitationSchema {
///         serde_json::from_value(serde_json::json!({
///             "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]
///         })).unwrap()
///     }
/// }
/// assert!(Name::requested_schema().required.is_some());
/// ```
pub trait Form: DeserializeOwned {
    /// The restricted JSON Schema sent as `requestedSchema`.
    fn requested_schema() -> ElicitationSchema;
}
