//! The runtime side of form elicitation: the [`Form`] trait that `#[derive(Form)]` implements,
//! and [`RequestedForm`], the one validator for answers against a `requestedSchema`.

mod check;
pub(crate) mod registry;

pub use check::{Field, FieldKind, InvalidAnswer, RequestedForm, UnsupportedSchema};

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

    /// Where `#[derive(Form)]` registered the schema (not a public API). A form without one
    /// travels in `requestState` as its JSON; a registered one as an 8-byte key.
    #[doc(hidden)]
    fn __registered() -> Option<&'static registry::RegisteredForm> {
        None
    }
}

/// A fieldless enum offered as a single choice (`T`) or a multi-select (`Vec<T>`) inside a
/// [`Form`].
///
/// Usually derived with `#[derive(mrtr::FormChoice)]`, which honours serde's `rename` and
/// `rename_all` so each [`ChoiceOption::value`] is exactly what serde deserializes:
///
/// ```
/// use mrtr_runtime::form::{ChoiceOption, FormChoice};
/// #[derive(serde::Deserialize)]
/// #[serde(rename_all = "lowercase")]
/// enum Env { Staging, Prod }
/// impl FormChoice for Env {
///     const OPTIONS: &'static [ChoiceOption] = &[
///         ChoiceOption { value: "staging", title: None },
///         ChoiceOption { value: "prod", title: Some("Production") },
///     ];
///     fn value(&self) -> &'static str {
///         match self { Env::Staging => "staging", Env::Prod => "prod" }
///     }
/// }
/// assert_eq!(Env::Prod.value(), "prod");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a form choice",
    label = "not a form choice",
    note = "derive it on a fieldless enum: `#[derive(mrtr::FormChoice, serde::Deserialize)]`"
)]
pub trait FormChoice: DeserializeOwned {
    /// Every option in declaration order. When any option has a title, the schema uses the
    /// titled shape (`oneOf`/`anyOf` of `{const, title}`) and untitled options are titled by
    /// their value.
    const OPTIONS: &'static [ChoiceOption];

    /// The wire value of this option (what serde deserializes into it).
    ///
    /// ```
    /// # use mrtr_runtime::form::{ChoiceOption, FormChoice};
    /// # #[derive(serde::Deserialize)] enum Yes { Y }
    /// # impl FormChoice for Yes { const OPTIONS: &'static [ChoiceOption] = &[ChoiceOption { value: "Y", title: None }];
    /// #   fn value(&self) -> &'static str { "Y" } }
    /// assert_eq!(Yes::Y.value(), "Y");
    /// ```
    fn value(&self) -> &'static str;
}

/// One option of a [`FormChoice`]: its wire value and, optionally, the title shown to the user.
///
/// ```
/// let option = mrtr_runtime::form::ChoiceOption { value: "prod", title: Some("Production") };
/// assert_eq!(option.value, "prod");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChoiceOption {
    /// The string the client sends back, and that serde turns into the variant.
    pub value: &'static str,
    /// The label shown to the user, from the variant's doc comment or `#[form(title = "...")]`.
    pub title: Option<&'static str>,
}
