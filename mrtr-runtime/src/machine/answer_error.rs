//! What can be wrong with an answer ([`AnswerError`]), and how a stored question is shown
//! to an [`Outcome`](super::Outcome) that decodes its answer ([`StoredQuestion`]): the
//! vocabulary outcomes and answers share, so neither imports the other.

use std::borrow::Cow;

use rmcp::model::InputRequest;

use super::recipe::Recipe;
use crate::form::RequestedForm;

/// What is wrong with the answer to one asked key.
///
/// ```
/// use mrtr_runtime::machine::{AnswerError, AnswerProblem};
/// let error = AnswerError::new("env", AnswerProblem::Missing);
/// assert_eq!(error.key(), "env");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("answer for `{key}`: {problem}")]
pub struct AnswerError {
    key: String,
    problem: AnswerProblem,
}

/// Why an answer could not be used; either way the server asks again.
///
/// ```
/// use mrtr_runtime::machine::AnswerProblem;
/// assert_eq!(AnswerProblem::Missing.to_string(), "missing");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerProblem {
    /// The retry carried no answer for the key (or `null`).
    #[error("missing")]
    Missing,
    /// The answer does not have the shape the asked kind requires.
    #[error("malformed: {0}")]
    Malformed(String),
    /// The key was never asked in this round (a bug in the machine).
    #[error("not asked in this round")]
    NotAsked,
}

impl AnswerError {
    /// Builds an error for `key`.
    ///
    /// ```
    /// use mrtr_runtime::machine::{AnswerError, AnswerProblem};
    /// let e = AnswerError::new("env", AnswerProblem::Malformed("not a string".into()));
    /// assert_eq!(e.problem(), &AnswerProblem::Malformed("not a string".into()));
    /// assert_eq!(e.to_string(), "answer for `env`: malformed: not a string");
    /// ```
    pub fn new(key: impl Into<String>, problem: AnswerProblem) -> Self {
        AnswerError {
            key: key.into(),
            problem,
        }
    }

    /// The key whose answer is unusable.
    ///
    /// ```
    /// # let e = mrtr_runtime::machine::AnswerError::new("k", mrtr_runtime::machine::AnswerProblem::Missing);
    /// assert_eq!(e.key(), "k");
    /// ```
    pub fn key(&self) -> &str {
        &self.key
    }

    /// What is wrong with it.
    ///
    /// ```
    /// # use mrtr_runtime::machine::{AnswerError, AnswerProblem};
    /// # let e = AnswerError::new("k", AnswerProblem::Missing);
    /// assert_eq!(e.problem(), &AnswerProblem::Missing);
    /// ```
    pub fn problem(&self) -> &AnswerProblem {
        &self.problem
    }
}

/// A question restored from `requestState` as the arguments of the builder that asked it.
/// Only [`Outcome`] implementations see one (through [`Outcome::from_stored`]).
///
/// ```
/// use mrtr_runtime::machine::{Outcome, StoredQuestion, AnswerError};
/// struct Count(u64);
/// impl Outcome for Count {
///     fn from_response(key: &str, _: &rmcp::model::InputRequest, v: serde_json::Value) -> Result<Self, AnswerError> {
///         Ok(Count(v.as_u64().unwrap_or(0)))
///     }
///     // `from_stored` keeps its default: rebuild the request, then `from_response`.
/// }
/// fn shown(question: StoredQuestion<'_>) -> Result<rmcp::model::InputRequest, String> {
///     question.request()
/// }
/// ```
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct StoredQuestion<'a> {
    pub(super) recipe: &'a Recipe,
    pub(super) literals: &'static [&'static str],
}

impl StoredQuestion<'_> {
    /// The request as it was sent, built again from its builder's arguments.
    ///
    /// ```
    /// # fn show(question: mrtr_runtime::machine::StoredQuestion<'_>) {
    /// let request = question.request();
    /// # drop(request); }
    /// ```
    pub fn request(&self) -> Result<InputRequest, String> {
        self.recipe
            .rebuild(self.literals)
            .map_err(|error| error.to_string())
    }

    /// The form an answer is checked against, as
    /// [`RequestedForm::from_schema`] reads it from the rebuilt request, without rebuilding
    /// it: a one-field question's field, or a registered form's schema (read once per
    /// process). `None` for any other question, or when the schema does not read (the
    /// rebuilt request then reports why).
    pub(crate) fn form(&self) -> Option<Cow<'static, RequestedForm>> {
        if let Some(field) = self.recipe.single_field(self.literals) {
            let (name, property) = field.ok()?;
            return RequestedForm::single_field(name, &property).map(Cow::Owned);
        }
        let form = self.recipe.registered_form(self.literals)?.ok()?;
        form.requested_form().ok().map(Cow::Borrowed)
    }
}
