//! The answers of one round: only the keys that were asked, decoded on demand.

use rmcp::model::InputRequest;
use serde_json::Value;

pub use super::answer_error::{AnswerError, AnswerProblem, StoredQuestion};
use super::outcome::Outcome;
use super::recipe::Recipe;

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
    asked: Vec<(String, Question)>,
    responses: Vec<(String, Value)>,
}

/// How an asked key is held.
// Unboxed: a round holds a handful of these in one vector, and boxing the sent request
// would cost an allocation per question for a few hundred bytes saved.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Question {
    /// The request as it was sent.
    Sent(InputRequest),
    /// A one-field question or a registered form, restored from `requestState` as its
    /// builder's arguments: its answer is checked against its form, and the request is
    /// rebuilt only for an outcome that needs it (see [`Outcome::from_stored`]).
    Stored {
        recipe: Recipe,
        literals: &'static [&'static str],
    },
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
        Self::from_asked(
            asked
                .into_iter()
                .map(|(key, request)| (key, Question::Sent(request))),
            responses,
        )
    }

    /// Like [`new`](Self::new), with questions held as [`Question`].
    pub(crate) fn from_asked(
        asked: impl IntoIterator<Item = (String, Question)>,
        responses: impl IntoIterator<Item = (String, Value)>,
    ) -> Self {
        let asked = asked.into_iter();
        let mut answers = Answers::default();
        // Room for what is asked, not the four a vector's first growth makes room for.
        answers.asked.reserve_exact(asked.size_hint().0);
        answers.responses.reserve_exact(asked.size_hint().0);
        for (key, question) in asked {
            insert_last_wins(&mut answers.asked, key, question);
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
        let asked = self
            .asked
            .iter()
            .find_map(|(asked, question)| (asked == key).then_some(question))
            .ok_or_else(|| AnswerError::new(key, AnswerProblem::NotAsked))?;
        let response = self
            .responses
            .iter()
            .position(|(answered, _)| answered == key)
            .map(|at| self.responses.swap_remove(at).1);
        match response {
            None | Some(Value::Null) => Err(AnswerError::new(key, AnswerProblem::Missing)),
            Some(response) => match asked {
                Question::Sent(request) => O::from_response(key, request, response),
                Question::Stored { recipe, literals } => {
                    O::from_stored(key, StoredQuestion { recipe, literals }, response)
                }
            },
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

    /// A form registered the way `#[derive(Form)]` registers one.
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Profile {
        name: String,
        age: u32,
        news: Option<bool>,
    }

    impl crate::form::Form for Profile {
        fn requested_schema() -> rmcp::model::ElicitationSchema {
            serde_json::from_value(json!({"type": "object", "properties": {
                "name": {"type": "string", "minLength": 1, "title": "Name"},
                "age": {"type": "integer", "minimum": 18, "maximum": 130},
                "news": {"type": "boolean", "default": false}},
                "required": ["name", "age"]}))
            .unwrap()
        }
        fn __registered() -> Option<&'static crate::form::registry::RegisteredForm> {
            Some(&PROFILE)
        }
    }

    static PROFILE: crate::form::registry::RegisteredForm =
        crate::form::registry::RegisteredForm::new(
            <Profile as crate::form::Form>::requested_schema,
        );
    inventory::submit!(crate::form::registry::FormEntry(&PROFILE));

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

    /// Every answer taken through a question restored as its recipe is the answer taken
    /// through the rebuilt request: same value, same error.
    #[test]
    fn a_stored_question_takes_answers_exactly_as_its_rebuilt_request() {
        const LITERALS: &[&str] = &["Which?", "prod", "staging"];
        let questions = [
            input::form::<Profile>("Tell us").into_stored_parts(),
            input::text("Name?").into_stored_parts(),
            input::confirm("Sure?").into_stored_parts(),
            input::choice("Which?", ["staging", "prod", "qa"]).into_stored_parts(),
            input::multi_choice("Which?", ["staging", "prod"]).into_stored_parts(),
        ];
        let responses = [
            json!({"action": "accept", "content": {"text": "Ada"}}),
            json!({"action": "accept", "content": {"text": 7}}),
            json!({"action": "accept", "content": {"text": "Ada", "extra": 1}}),
            json!({"action": "accept", "content": {"confirm": true}}),
            json!({"action": "accept", "content": {"confirm": "yes"}}),
            json!({"action": "accept", "content": {"choice": "prod"}}),
            json!({"action": "accept", "content": {"choice": "dev"}}),
            json!({"action": "accept", "content": {"choices": ["prod", "staging"]}}),
            json!({"action": "accept", "content": {"choices": ["nope"]}}),
            json!({"action": "accept", "content": {}}),
            json!({"action": "accept", "content": {"name": "Ada", "age": 36}}),
            json!({"action": "accept", "content": {"name": "Ada", "age": 12}}),
            json!({"action": "accept", "content": {"name": "", "age": 36, "news": true}}),
            json!({"action": "accept", "content": {"name": "Ada"}}),
            json!({"action": "accept", "content": {"name": "Ada", "age": "36"}}),
            json!({"action": "accept", "content": "Ada"}),
            json!({"action": "accept"}),
            json!({"action": "decline"}),
            json!({"action": "cancel"}),
            json!({"action": "maybe"}),
            json!({"content": {"text": "Ada"}}),
            json!([1, 2]),
        ];
        fn both<O: Outcome + std::fmt::Debug>(
            request: &InputRequest,
            recipe: &Recipe,
            response: &Value,
        ) -> (String, String) {
            let mut sent = Answers::new(
                [("k".to_string(), request.clone())],
                [("k".to_string(), response.clone())],
            );
            let mut stored = Answers::from_asked(
                [(
                    "k".to_string(),
                    Question::Stored {
                        recipe: recipe.clone(),
                        literals: LITERALS,
                    },
                )],
                [("k".to_string(), response.clone())],
            );
            (
                format!("{:?}", sent.take::<O>("k")),
                format!("{:?}", stored.take::<O>("k")),
            )
        }
        for (request, recipe) in &questions {
            let recipe = recipe.stored(request, LITERALS).unwrap();
            assert!(
                StoredQuestion {
                    recipe: &recipe,
                    literals: LITERALS
                }
                .form()
                .is_some(),
                "{recipe:?}"
            );
            for response in &responses {
                for (sent, stored) in [
                    both::<Elicited<String>>(request, &recipe, response),
                    both::<Elicited<bool>>(request, &recipe, response),
                    both::<Elicited<Vec<String>>>(request, &recipe, response),
                    both::<Elicited<Value>>(request, &recipe, response),
                    both::<Elicited<Profile>>(request, &recipe, response),
                    both::<crate::machine::Sampled>(request, &recipe, response),
                    both::<crate::machine::Roots>(request, &recipe, response),
                ] {
                    assert_eq!(sent, stored, "{recipe:?} answered {response}");
                }
            }
        }
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
