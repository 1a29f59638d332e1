//! The answers of one round: only the keys that were asked, decoded on demand.

use rmcp::model::InputRequest;
use serde_json::Value;

use super::Outcome;

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

/// The client's answers to the requests of the round being resumed.
///
/// Built by the server from the pending requests (from the sealed state) and the retry's
/// `inputResponses`; keys that were not asked are never visible here.
///
/// ```
/// use mrtr_runtime::machine::{input, Answers, Elicited};
/// let mut answers = Answers::new(
///     [("env".to_string(), input::choice("Where?", ["a", "b"]).into_request())],
///     [("env".to_string(), serde_json::json!({"action": "accept", "content": {"choice": "b"}}))],
/// );
/// let env: Elicited<String> = answers.take("env").unwrap();
/// assert_eq!(env, Elicited::Accept("b".to_string()));
/// ```
#[derive(Debug, Default)]
pub struct Answers {
    // Vectors, not maps: a round asks a handful of keys, and a B-tree node of 11
    // `InputRequest`s is a 2.8 KB allocation per round.
    asked: Vec<(String, InputRequest)>,
    responses: Vec<(String, Value)>,
}

impl Answers {
    /// Pairs the asked requests with the responses; responses to keys that were not asked
    /// are dropped.
    ///
    /// ```
    /// let answers = mrtr_runtime::machine::Answers::new([], [("stray".to_string(), serde_json::json!(1))]);
    /// assert!(answers.is_empty());
    /// ```
    pub fn new(
        asked: impl IntoIterator<Item = (String, InputRequest)>,
        responses: impl IntoIterator<Item = (String, Value)>,
    ) -> Self {
        let mut answers = Answers::default();
        for (key, request) in asked {
            insert_last_wins(&mut answers.asked, key, request);
        }
        for (key, response) in responses {
            if answers.asked.iter().any(|(asked, _)| *asked == key) {
                insert_last_wins(&mut answers.responses, key, response);
            }
        }
        answers
    }

    /// Whether no request was asked in this round.
    ///
    /// ```
    /// assert!(mrtr_runtime::machine::Answers::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.asked.is_empty()
    }

    /// Decodes the answer to `key` as `O`. A missing, `null` or malformed answer is an
    /// [`AnswerError`]; the server turns it into a fresh request for the same input.
    ///
    /// ```
    /// use mrtr_runtime::machine::{input, Answers, Elicited, AnswerProblem};
    /// let mut answers = Answers::new([("ok".to_string(), input::confirm("Sure?").into_request())], []);
    /// let missing = answers.take::<Elicited<bool>>("ok").unwrap_err();
    /// assert_eq!(missing.problem(), &AnswerProblem::Missing);
    /// ```
    pub fn take<O: Outcome>(&mut self, key: &str) -> Result<O, AnswerError> {
        let request = self
            .asked
            .iter()
            .find_map(|(asked, request)| (asked == key).then_some(request))
            .ok_or_else(|| AnswerError::new(key, AnswerProblem::NotAsked))?;
        let response = self
            .responses
            .iter()
            .position(|(answered, _)| answered == key)
            .map(|at| self.responses.swap_remove(at).1);
        match response {
            None | Some(Value::Null) => Err(AnswerError::new(key, AnswerProblem::Missing)),
            Some(response) => O::from_response(key, request, response),
        }
    }
}

/// Inserts `value` under `key`, replacing an earlier value (as collecting into a map does).
fn insert_last_wins<V>(entries: &mut Vec<(String, V)>, key: String, value: V) {
    match entries.iter_mut().find(|(existing, _)| *existing == key) {
        Some((_, slot)) => *slot = value,
        None => entries.push((key, value)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::machine::{Elicited, input};

    fn accept(text: &str) -> Value {
        json!({"action": "accept", "content": {"text": text}})
    }

    #[test]
    fn a_key_given_twice_keeps_its_last_request_and_its_last_response() {
        let mut answers = Answers::new(
            [
                ("q".to_string(), input::confirm("First?").into_request()),
                ("q".to_string(), input::text("Last?").into_request()),
            ],
            [
                ("q".to_string(), accept("first")),
                ("stray".to_string(), accept("dropped")),
                ("q".to_string(), accept("last")),
            ],
        );
        assert_eq!(
            answers.take::<Elicited<String>>("q"),
            Ok(Elicited::Accept("last".to_string()))
        );
        // Taken once: a second take finds no answer; the stray key was never asked.
        assert_eq!(
            answers.take::<Elicited<String>>("q").unwrap_err().problem(),
            &AnswerProblem::Missing
        );
        assert_eq!(
            answers
                .take::<Elicited<String>>("stray")
                .unwrap_err()
                .problem(),
            &AnswerProblem::NotAsked
        );
    }

    #[test]
    fn each_key_takes_its_own_answer() {
        let mut answers = Answers::new(
            [
                ("a".to_string(), input::text("A?").into_request()),
                ("b".to_string(), input::text("B?").into_request()),
                ("c".to_string(), input::text("C?").into_request()),
            ],
            [
                ("c".to_string(), accept("3")),
                ("a".to_string(), accept("1")),
                ("b".to_string(), Value::Null),
            ],
        );
        assert_eq!(
            answers.take::<Elicited<String>>("a"),
            Ok(Elicited::Accept("1".into()))
        );
        assert_eq!(
            answers.take::<Elicited<String>>("c"),
            Ok(Elicited::Accept("3".into()))
        );
        assert_eq!(
            answers.take::<Elicited<String>>("b").unwrap_err().problem(),
            &AnswerProblem::Missing
        );
    }
}
