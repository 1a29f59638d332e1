//! How a pending input request is kept in `requestState`.
//!
//! The server must be able to ask exactly the same question again (a missing or malformed
//! answer) and to check answers against it, without running the tool's code a second time,
//! so every pending request travels inside the sealed state. Storing it as JSON cost about
//! 170 bytes for a one-line text question; a request made by one of the builders in
//! [`input`](super::input) is stored as the builder's arguments instead (the message and
//! the options), and rebuilt by calling the same builder, so the rebuilt request is the
//! one that was sent. Anything else is stored as its JSON text.

use rmcp::model::InputRequest;
use serde::{Deserialize, Serialize};

use super::input;

/// The arguments of the builder that made a request (postcard-encoded in the state).
///
/// postcard writes the variant's index, so the order of the variants is part of the token
/// format: add variants at the end only; anything else needs a new envelope
/// `FORMAT_VERSION` (an old token then fails closed instead of rebuilding another question).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Recipe {
    /// Not made by a builder below (or changed afterwards): the request's JSON text.
    Json(String),
    /// [`input::text`].
    Text(String),
    /// [`input::confirm`].
    Confirm(String),
    /// [`input::choice`].
    Choice(String, Vec<String>),
    /// [`input::multi_choice`].
    MultiChoice(String, Vec<String>),
    /// [`input::url`].
    Url(String, String),
    /// [`input::prompt`], optionally with [`system`](super::Input::system) and
    /// [`max_tokens`](super::Input::max_tokens).
    Prompt {
        text: String,
        system: Option<String>,
        max_tokens: u32,
    },
    /// [`input::roots`].
    Roots,
    /// Not yet known: the request is turned into [`Recipe::Json`] when it is stored.
    Unknown,
    /// [`input::form`] of a `#[derive(Form)]` type: the schema's registry key (see
    /// `form/registry.rs`) and the message.
    Form { key: [u8; 8], message: String },
}

/// Why a stored recipe does not give back its request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RebuildError {
    /// A form whose schema this build does not have (the form changed since it was asked).
    #[error("the form it asks is not one this build knows (its schema changed?)")]
    UnknownForm,
    /// Not a request (only a forged token holds one).
    #[error("{0}")]
    Invalid(String),
}

impl Recipe {
    /// What to store for `request`, made by the builder this recipe names.
    pub(crate) fn stored(&self, request: &InputRequest) -> Result<Recipe, serde_json::Error> {
        match self {
            Recipe::Unknown => serde_json::to_string(request).map(Recipe::Json),
            known => Ok(known.clone()),
        }
    }

    /// The request this recipe stands for.
    pub(crate) fn rebuild(&self) -> Result<InputRequest, RebuildError> {
        Ok(match self {
            Recipe::Json(text) => {
                serde_json::from_str(text).map_err(|e| RebuildError::Invalid(e.to_string()))?
            }
            Recipe::Text(message) => input::text(message.as_str()).into_request(),
            Recipe::Confirm(message) => input::confirm(message.as_str()).into_request(),
            Recipe::Choice(message, options) => {
                input::choice(message.as_str(), options.iter().map(String::as_str)).into_request()
            }
            Recipe::MultiChoice(message, options) => {
                input::multi_choice(message.as_str(), options.iter().map(String::as_str))
                    .into_request()
            }
            Recipe::Url(message, url) => input::url(message.as_str(), url.as_str()).into_request(),
            Recipe::Prompt {
                text,
                system,
                max_tokens,
            } => {
                let mut prompt = input::prompt(text.as_str()).max_tokens(*max_tokens);
                if let Some(system) = system {
                    prompt = prompt.system(system.as_str());
                }
                prompt.into_request()
            }
            Recipe::Roots => input::roots().into_request(),
            Recipe::Unknown => {
                return Err(RebuildError::Invalid(
                    "a request without a recipe was stored".into(),
                ));
            }
            Recipe::Form { key, message } => {
                let form = crate::form::registry::lookup(*key).ok_or(RebuildError::UnknownForm)?;
                input::registered_form(message.as_str(), form)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::form::Form;
    use crate::form::registry::{FormEntry, RegisteredForm};
    use crate::machine::Input;

    fn stored_and_rebuilt<O>(input: Input<O>) -> (Recipe, InputRequest) {
        let recipe = input.recipe().stored(input.request()).unwrap();
        let bytes = postcard::to_allocvec(&recipe).unwrap();
        let decoded: Recipe = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(decoded, recipe);
        let rebuilt = decoded.rebuild().unwrap();
        assert_eq!(
            serde_json::to_value(&rebuilt).unwrap(),
            serde_json::to_value(input.request()).unwrap()
        );
        (recipe, rebuilt)
    }

    #[test]
    fn every_builder_rebuilds_the_request_it_sent() {
        let (recipe, _) = stored_and_rebuilt(input::text("Name?"));
        assert_eq!(recipe, Recipe::Text("Name?".into()));
        stored_and_rebuilt(input::confirm("Sure?"));
        stored_and_rebuilt(input::choice("Where?", ["staging", "prod"]));
        stored_and_rebuilt(input::multi_choice("Which?", ["a", "b", "c"]));
        stored_and_rebuilt(input::url("Sign in", "https://example.com/auth"));
        stored_and_rebuilt(input::prompt("Summarise"));
        stored_and_rebuilt(input::prompt("Summarise").max_tokens(64).system("Be brief"));
        stored_and_rebuilt(input::prompt("Summarise").system("Be brief").max_tokens(64));
        stored_and_rebuilt(input::roots());
    }

    #[test]
    fn changed_or_raw_requests_are_stored_as_json() {
        let (recipe, _) = stored_and_rebuilt(input::prompt("Summarise").model_hint("small"));
        assert!(matches!(recipe, Recipe::Json(_)), "{recipe:?}");
        let raw: Input<crate::machine::Roots> = Input::from_request(input::roots().into_request());
        let (recipe, _) = stored_and_rebuilt(raw);
        assert!(matches!(recipe, Recipe::Json(_)));
    }

    #[test]
    fn a_text_question_costs_its_message_and_two_bytes() {
        let recipe = input::text("Question 3?");
        let stored = recipe.recipe().stored(recipe.request()).unwrap();
        assert_eq!(
            postcard::to_allocvec(&stored).unwrap().len(),
            2 + "Question 3?".len()
        );
    }

    /// A form registered the way `#[derive(Form)]` registers one.
    #[derive(serde::Deserialize)]
    struct Apply {
        #[allow(dead_code)]
        apply: bool,
    }

    impl crate::form::Form for Apply {
        fn requested_schema() -> rmcp::model::ElicitationSchema {
            serde_json::from_value(serde_json::json!({"type": "object",
                "properties": {"apply": {"type": "boolean", "title": "Apply?"}}, "required": ["apply"]}))
            .unwrap()
        }
        fn __registered() -> Option<&'static RegisteredForm> {
            Some(&APPLY)
        }
    }

    static APPLY: RegisteredForm =
        RegisteredForm::new(<Apply as crate::form::Form>::requested_schema);
    inventory::submit!(FormEntry(&APPLY));

    /// The same form, not registered (as a hand-written `Form` impl is).
    #[derive(serde::Deserialize)]
    struct Unregistered {}

    impl crate::form::Form for Unregistered {
        fn requested_schema() -> rmcp::model::ElicitationSchema {
            Apply::requested_schema()
        }
    }

    #[test]
    fn a_registered_form_is_stored_as_its_key_and_message() {
        let (recipe, _) = stored_and_rebuilt(input::form::<Apply>("Apply the plan?"));
        let Recipe::Form { key, message } = &recipe else {
            panic!("{recipe:?}")
        };
        assert_eq!(message, "Apply the plan?");
        assert_eq!(
            postcard::to_allocvec(&recipe).unwrap().len(),
            1 + key.len() + 1 + message.len()
        );
        let (recipe, _) = stored_and_rebuilt(input::form::<Unregistered>("Apply the plan?"));
        assert!(matches!(recipe, Recipe::Json(_)), "{recipe:?}");
    }

    #[test]
    fn a_form_this_build_does_not_know_does_not_rebuild() {
        let Recipe::Form { key, .. } = input::form::<Apply>("Apply?").recipe().clone() else {
            panic!("registered")
        };
        let mut other = key;
        other[0] ^= 1;
        let error = Recipe::Form {
            key: other,
            message: "Apply?".into(),
        }
        .rebuild()
        .unwrap_err();
        assert_eq!(error, RebuildError::UnknownForm);
    }

    #[test]
    fn malformed_json_does_not_rebuild() {
        assert!(Recipe::Json("{".into()).rebuild().is_err());
        assert!(Recipe::Unknown.rebuild().is_err());
    }
}
