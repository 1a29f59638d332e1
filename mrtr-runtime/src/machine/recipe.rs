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

use crate::form::registry::RegisteredForm;

/// The arguments of the builder that made a request (postcard-encoded in the state).
///
/// postcard writes the variant's index, so the order of the variants is part of the token
/// format: add variants at the end only; anything else needs a new envelope
/// `FORMAT_VERSION` (an old token then fails closed instead of rebuilding another question).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Recipe {
    /// Not made by a builder below (or changed afterwards): the request's JSON text.
    Json(String),
    /// [`input::text`](super::input::text).
    Text(Wording),
    /// [`input::confirm`](super::input::confirm).
    Confirm(Wording),
    /// [`input::choice`](super::input::choice).
    Choice(Wording, Vec<Wording>),
    /// [`input::multi_choice`](super::input::multi_choice).
    MultiChoice(Wording, Vec<Wording>),
    /// [`input::url`](super::input::url).
    Url(Wording, Wording),
    /// [`input::prompt`](super::input::prompt), optionally with [`system`](super::Input::system) and
    /// [`max_tokens`](super::Input::max_tokens).
    Prompt {
        text: Wording,
        system: Option<Wording>,
        max_tokens: u32,
    },
    /// [`input::roots`](super::input::roots).
    Roots,
    /// Not yet known: the request is turned into [`Recipe::Json`] when it is stored.
    Unknown,
    /// [`input::form`](super::input::form) of a `#[derive(Form)]` type: the schema's registry key (see
    /// `form/registry.rs`) and the message.
    Form { key: [u8; 8], message: Wording },
    /// A single-field builder ([`input::text`](super::input::text), `confirm`, `choice`,
    /// `multi_choice`) whose field the author titled with `Input::title`. Kept flat (not a
    /// boxed recipe) so that a hostile state cannot nest it.
    Titled(TitledField),
}

/// What [`Recipe::Titled`] stores: the builder, its arguments and the field's title.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TitledField {
    pub(crate) builder: SingleFieldBuilder,
    pub(crate) message: Wording,
    /// The options of `choice` and `multi_choice`; empty for the others.
    pub(crate) options: Vec<Wording>,
    pub(crate) title: Wording,
}

/// The builders whose form has one field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum SingleFieldBuilder {
    /// [`input::text`](super::input::text).
    Text,
    /// [`input::confirm`](super::input::confirm).
    Confirm,
    /// [`input::choice`](super::input::choice).
    Choice,
    /// [`input::multi_choice`](super::input::multi_choice).
    MultiChoice,
}

/// A string a builder was given (a message, an option, a URL): inline, or — when it is one
/// of the string literals of the machine's body, as fixed questions are — that literal's
/// index in [`MachineDescriptor::literals`](super::MachineDescriptor::literals), so a
/// fixed question costs two bytes of state however long it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Wording {
    /// The string itself.
    Inline(String),
    /// The index of a literal of the machine's body.
    Literal(u32),
}

impl Wording {
    /// As the builder was given it.
    pub(crate) fn new(text: impl Into<String>) -> Self {
        Wording::Inline(text.into())
    }

    /// Refers to `literals` (sorted) when it is one of them.
    fn stored(&mut self, literals: &[&str]) {
        if let Wording::Inline(text) = self
            && let Ok(index) = literals.binary_search(&text.as_str())
            && let Ok(index) = u32::try_from(index)
        {
            *self = Wording::Literal(index);
        }
    }

    pub(super) fn resolve<'a>(
        &'a self,
        literals: &'a [&'static str],
    ) -> Result<&'a str, RebuildError> {
        match self {
            Wording::Inline(text) => Ok(text),
            Wording::Literal(index) => usize::try_from(*index)
                .ok()
                .and_then(|index| literals.get(index))
                .copied()
                .ok_or_else(|| {
                    RebuildError::Invalid(format!("no string literal #{index} in this machine"))
                }),
        }
    }
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
    /// What to store for `request`, made by the builder this recipe names, in a machine
    /// whose body has the string `literals` (sorted).
    pub(crate) fn stored(
        &self,
        request: &InputRequest,
        literals: &[&str],
    ) -> Result<Recipe, serde_json::Error> {
        let mut stored = match self {
            Recipe::Unknown => return serde_json::to_string(request).map(Recipe::Json),
            known => known.clone(),
        };
        for wording in stored.wordings_mut() {
            wording.stored(literals);
        }
        Ok(stored)
    }

    fn wordings_mut(&mut self) -> Vec<&mut Wording> {
        match self {
            Recipe::Text(message) | Recipe::Confirm(message) | Recipe::Form { message, .. } => {
                vec![message]
            }
            Recipe::Choice(message, options) | Recipe::MultiChoice(message, options) => {
                std::iter::once(message).chain(options).collect()
            }
            Recipe::Url(message, url) => vec![message, url],
            Recipe::Prompt { text, system, .. } => std::iter::once(text).chain(system).collect(),
            Recipe::Titled(field) => std::iter::once(&mut field.message)
                .chain(&mut field.options)
                .chain(std::iter::once(&mut field.title))
                .collect(),
            Recipe::Json(_) | Recipe::Roots | Recipe::Unknown => Vec::new(),
        }
    }

    /// For [`input::form`](super::input::form) of a registered `#[derive(Form)]` type: that form, found and its
    /// message resolved in the order `rebuild` does, so it fails where a
    /// rebuild would. `None` for every other recipe.
    pub(crate) fn registered_form(
        &self,
        literals: &[&'static str],
    ) -> Option<Result<&'static RegisteredForm, RebuildError>> {
        let Recipe::Form { key, message } = self else {
            return None;
        };
        Some(
            crate::form::registry::lookup(*key)
                .ok_or(RebuildError::UnknownForm)
                .and_then(|form| message.resolve(literals).map(|_| form)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::input;
    use super::*;
    use crate::form::registry::{FormEntry, RegisteredForm};
    use crate::machine::Input;

    /// The string literals of a machine that asks the questions below.
    const LITERALS: &[&str] = &["Be brief", "Sign in", "Where?", "prod", "staging"];

    fn stored_and_rebuilt<O>(input: Input<O>) -> (Recipe, InputRequest) {
        stored_and_rebuilt_with(input, &[])
    }

    fn stored_and_rebuilt_with<O>(
        input: Input<O>,
        literals: &'static [&'static str],
    ) -> (Recipe, InputRequest) {
        let recipe = input.recipe().stored(input.request(), literals).unwrap();
        let bytes = postcard::to_allocvec(&recipe).unwrap();
        let decoded: Recipe = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(decoded, recipe);
        let rebuilt = decoded.rebuild(literals).unwrap();
        assert_eq!(
            serde_json::to_value(&rebuilt).unwrap(),
            serde_json::to_value(input.request()).unwrap()
        );
        (recipe, rebuilt)
    }

    #[test]
    fn every_builder_rebuilds_the_request_it_sent() {
        for literals in [&[][..], LITERALS] {
            let (recipe, _) = stored_and_rebuilt_with(input::text("Name?"), literals);
            assert_eq!(recipe, Recipe::Text(Wording::new("Name?")));
            stored_and_rebuilt_with(input::confirm("Sure?"), literals);
            stored_and_rebuilt_with(input::confirm("Sure?").title("Where?"), literals);
            stored_and_rebuilt_with(input::text("Name?").title("Name"), literals);
            stored_and_rebuilt_with(
                input::choice("Where?", ["staging", "prod"]).title("Target"),
                literals,
            );
            stored_and_rebuilt_with(
                input::multi_choice("Which?", ["a", "prod"]).title("Sign in"),
                literals,
            );
            stored_and_rebuilt_with(input::choice("Where?", ["staging", "prod"]), literals);
            stored_and_rebuilt_with(input::multi_choice("Which?", ["a", "prod", "c"]), literals);
            stored_and_rebuilt_with(input::url("Sign in", "https://example.com/auth"), literals);
            stored_and_rebuilt_with(input::prompt("Summarise"), literals);
            stored_and_rebuilt_with(
                input::prompt("Summarise").max_tokens(64).system("Be brief"),
                literals,
            );
            stored_and_rebuilt_with(
                input::prompt("Summarise").system("Be brief").max_tokens(64),
                literals,
            );
            stored_and_rebuilt_with(input::roots(), literals);
        }
    }

    #[test]
    fn strings_that_are_literals_of_the_body_are_stored_as_their_index() {
        let (recipe, _) =
            stored_and_rebuilt_with(input::choice("Where?", ["staging", "prod", "qa"]), LITERALS);
        assert_eq!(
            recipe,
            Recipe::Choice(
                Wording::Literal(2),
                vec![Wording::Literal(4), Wording::Literal(3), Wording::new("qa")]
            )
        );
        let (recipe, _) =
            stored_and_rebuilt_with(input::prompt("Summarise").system("Be brief"), LITERALS);
        assert!(
            matches!(
                &recipe,
                Recipe::Prompt {
                    text: Wording::Inline(_),
                    system: Some(Wording::Literal(0)),
                    ..
                }
            ),
            "{recipe:?}"
        );
        // An index this machine does not have is a forged state, whether the question is
        // rebuilt or only its field is read (as a resumed round does).
        let forged = Recipe::Text(Wording::Literal(5));
        assert!(matches!(
            forged.rebuild(LITERALS),
            Err(RebuildError::Invalid(_))
        ));
        assert!(matches!(
            forged.single_field(LITERALS),
            Some(Err(RebuildError::Invalid(_)))
        ));
        let forged_option = Recipe::Choice(Wording::new("Where?"), vec![Wording::Literal(9)]);
        assert!(matches!(
            forged_option.single_field(LITERALS),
            Some(Err(RebuildError::Invalid(_)))
        ));
        assert!(Recipe::Roots.single_field(LITERALS).is_none());
        assert!(matches!(
            Recipe::Text(Wording::Literal(0)).rebuild(&[]),
            Err(RebuildError::Invalid(_))
        ));
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
    fn a_text_question_costs_its_message_and_three_bytes_or_three_bytes_if_fixed() {
        let recipe = input::text("Question 3?");
        let stored = recipe.recipe().stored(recipe.request(), &[]).unwrap();
        assert_eq!(
            postcard::to_allocvec(&stored).unwrap().len(),
            3 + "Question 3?".len()
        );
        let fixed = recipe
            .recipe()
            .stored(recipe.request(), &["Question 3?"])
            .unwrap();
        assert_eq!(postcard::to_allocvec(&fixed).unwrap().len(), 3);
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
        assert_eq!(message, &Wording::new("Apply the plan?"));
        assert_eq!(
            postcard::to_allocvec(&recipe).unwrap().len(),
            1 + key.len() + 2 + "Apply the plan?".len()
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
            message: Wording::new("Apply?"),
        }
        .rebuild(&[])
        .unwrap_err();
        assert_eq!(error, RebuildError::UnknownForm);
    }

    #[test]
    fn malformed_json_does_not_rebuild() {
        assert!(Recipe::Json("{".into()).rebuild(&[]).is_err());
        assert!(Recipe::Unknown.rebuild(&[]).is_err());
    }
}
