//! The sealed payload of a `requestState`: what a suspension keeps for its retry, and the
//! one place that encodes, decodes and sizes it.
//!
//! ```text
//! payload = postcard([(key, recipe)])   the pending questions, as their builders' arguments
//!        || state                       the machine's postcard-encoded locals
//! ```
//!
//! postcard is self-delimiting, so the state needs no length prefix. The token layer wraps
//! the payload in its envelope and seals it; it never looks inside.

use rmcp::model::InputRequest;

use crate::machine::{Question, RebuildError, Recipe};

/// The keyed recipes of a sealed payload.
pub(crate) type Recipes = Vec<(String, Recipe)>;

/// Encodes the pending questions and the machine's state bytes.
pub(crate) fn encode_payload(
    recipes: &[(String, Recipe)],
    state: &[u8],
) -> Result<Vec<u8>, postcard::Error> {
    let mut payload = postcard::to_allocvec(recipes)?;
    payload.extend_from_slice(state);
    Ok(payload)
}

/// The length of the `requestState` that would carry these questions and state at `round`,
/// without encrypting anything: every carrier holds a suspension to the same size limit.
pub(crate) fn sealed_size(round: u32, recipes: &[(String, Recipe)], state: &[u8]) -> usize {
    let recipes_len = postcard::experimental::serialized_size(recipes).unwrap_or(usize::MAX / 2);
    crate::token::sealed_len(round, recipes_len.saturating_add(state.len()))
}

/// Why a sealed payload does not give back its pending requests.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PayloadError {
    /// It does not decode, or a request does not rebuild: only a forged token does that.
    #[error("{0}")]
    Undecodable(String),
    /// It asks a form this build does not have: sealed by another version of the code.
    #[error("{0}")]
    UnknownForm(String),
}

/// The pending requests (rebuilt from their recipes), the keyed recipes, and the state.
#[cfg(feature = "fuzzing")]
type Decoded = (Vec<(String, InputRequest)>, Recipes, Vec<u8>);

/// Decodes a payload and rebuilds every pending request (the fuzz targets' view).
#[cfg(feature = "fuzzing")]
pub(crate) fn decode_payload(
    payload: &[u8],
    literals: &[&'static str],
) -> Result<Decoded, PayloadError> {
    let (recipes, state) = decode_recipes(payload)?;
    let requests = rebuild_requests(&recipes, literals)?;
    Ok((requests, recipes, state.to_vec()))
}

/// The questions a resumed round's answers are taken against, the keyed recipes, and the
/// state.
pub(crate) type Resumable = (Vec<(String, Question)>, Recipes, Vec<u8>);

/// Decodes a payload for resuming: a one-field question or a registered form is checked
/// (its form is known and every string it refers to resolves, as a rebuild would check) but
/// kept as its recipe, since its answer is checked against its form alone; any other
/// request is rebuilt.
pub(crate) fn decode_for_resume(
    payload: &[u8],
    literals: &'static [&'static str],
) -> Result<Resumable, PayloadError> {
    let (recipes, state) = decode_recipes(payload)?;
    let mut asked = Vec::with_capacity(recipes.len());
    for (key, recipe) in &recipes {
        let checked = match recipe.single_field(literals) {
            Some(field) => Some(field.map(drop)),
            None => recipe.registered_form(literals).map(|form| form.map(drop)),
        };
        let question = match checked {
            Some(Ok(())) => Question::Stored {
                recipe: recipe.clone(),
                literals,
            },
            Some(Err(error)) => return Err(rebuild_error(key, error)),
            None => Question::Sent(
                recipe
                    .rebuild(literals)
                    .map_err(|error| rebuild_error(key, error))?,
            ),
        };
        asked.push((key.clone(), question));
    }
    Ok((asked, recipes, state.to_vec()))
}

/// The keyed recipes of a payload, and the machine's state bytes after them.
fn decode_recipes(payload: &[u8]) -> Result<(Recipes, &[u8]), PayloadError> {
    postcard::take_from_bytes::<Recipes>(payload)
        .map_err(|e| PayloadError::Undecodable(format!("sealed input requests do not decode: {e}")))
}

/// Rebuilds the requests a payload's recipes describe, in order.
pub(crate) fn rebuild_requests(
    recipes: &[(String, Recipe)],
    literals: &[&'static str],
) -> Result<Vec<(String, InputRequest)>, PayloadError> {
    recipes
        .iter()
        .map(|(key, recipe)| {
            let request = recipe
                .rebuild(literals)
                .map_err(|error| rebuild_error(key, error))?;
            Ok((key.clone(), request))
        })
        .collect()
}

/// A sealed request that does not rebuild: from another version of the code (an unknown
/// form), or forged.
fn rebuild_error(key: &str, error: RebuildError) -> PayloadError {
    let detail = format!("sealed input request `{key}` does not rebuild: {error}");
    match error {
        RebuildError::UnknownForm => PayloadError::UnknownForm(detail),
        RebuildError::Invalid(_) => PayloadError::Undecodable(detail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{Suspend, input};

    #[test]
    fn the_computed_size_is_the_sealed_size() {
        let suspend = Suspend::new(&("some state".to_string(), 7u32))
            .unwrap()
            .ask("go", input::confirm("Proceed?"))
            .unwrap();
        let (requests, recipes, state) = suspend.into_stored_parts();
        let recipes: Recipes = recipes
            .iter()
            .zip(&requests)
            .map(|(recipe, (key, request))| (key.clone(), recipe.stored(request, &[]).unwrap()))
            .collect();
        let keys = crate::token::KeyRing::generate_process_local().unwrap();
        let sealer = crate::token::StateSealer::new(keys);
        let binding =
            crate::token::Binding::new("aud", crate::machine::Method::CallTool, "t", None, None);
        for round in [1, 127, 128, 70_000] {
            let payload = encode_payload(&recipes, &state).unwrap();
            let token = sealer
                .seal(
                    &binding,
                    crate::token::SealInput {
                        fingerprint: 1,
                        round,
                        payload,
                    },
                )
                .unwrap();
            assert_eq!(
                sealed_size(round, &recipes, &state),
                token.len(),
                "round {round}"
            );
        }
    }
}
