//! The answers of a refused request, worded as the MCP authorization spec and RFC 6750 §3
//! word them: `401` with `WWW-Authenticate: Bearer resource_metadata="…"` (plus
//! `error="invalid_token"` when a token was given and refused), `403` with
//! `error="insufficient_scope", scope="…"`, and `503` when tokens cannot be verified now.
//! Every body is a JSON-RPC error, as the rest of the endpoint's refusals are.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};

/// What a refused request is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    /// No bearer token: `401`, the challenge naming the metadata only.
    Missing,
    /// A token was given and refused: `401 error="invalid_token"`.
    InvalidToken(String),
    /// The `Authorization` header is not one `Bearer <token>`: `400 error="invalid_request"`.
    InvalidRequest(String),
    /// A tool needs scopes the token lacks: `403 error="insufficient_scope"`.
    InsufficientScope(Vec<String>),
    /// Tokens cannot be verified now (the issuer's keys are unreachable): `503`, fail closed.
    Unavailable(String),
}

impl Refusal {
    /// The `WWW-Authenticate` value, if the refusal has one.
    pub(super) fn challenge(&self, resource_metadata: &str) -> Option<String> {
        let metadata = format!("resource_metadata=\"{}\"", quoted(resource_metadata));
        match self {
            Refusal::Missing => Some(format!("Bearer {metadata}")),
            Refusal::InvalidToken(why) => Some(format!(
                "Bearer error=\"invalid_token\", error_description=\"{}\", {metadata}",
                quoted(why)
            )),
            Refusal::InvalidRequest(why) => Some(format!(
                "Bearer error=\"invalid_request\", error_description=\"{}\", {metadata}",
                quoted(why)
            )),
            Refusal::InsufficientScope(scopes) => Some(format!(
                "Bearer error=\"insufficient_scope\", scope=\"{}\", {metadata}, error_description=\"{}\"",
                quoted(&scopes.join(" ")),
                quoted(&format!("this tool needs the scopes: {}", scopes.join(" ")))
            )),
            Refusal::Unavailable(_) => None,
        }
    }

    /// The HTTP status.
    pub(super) fn status(&self) -> StatusCode {
        match self {
            Refusal::Missing | Refusal::InvalidToken(_) => StatusCode::UNAUTHORIZED,
            Refusal::InvalidRequest(_) => StatusCode::BAD_REQUEST,
            Refusal::InsufficientScope(_) => StatusCode::FORBIDDEN,
            Refusal::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// What the JSON-RPC error body says.
    fn message(&self) -> String {
        match self {
            Refusal::Missing => {
                "authorization required: send an OAuth access token (`Authorization: Bearer …`); the WWW-Authenticate header names this resource's metadata".into()
            }
            Refusal::InvalidToken(why) => format!("invalid access token: {why}"),
            Refusal::InvalidRequest(why) => format!("invalid Authorization header: {why}"),
            Refusal::InsufficientScope(scopes) => {
                format!("insufficient_scope: this request needs the OAuth scopes {:?}", scopes.join(" "))
            }
            Refusal::Unavailable(why) => format!(
                "access tokens cannot be verified now ({why}); nobody is let in until they can, retry later"
            ),
        }
    }

    /// The whole response.
    pub(super) fn response(&self, resource_metadata: &str) -> Response {
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": { "code": -32600, "message": self.message() },
        });
        let mut response = (
            self.status(),
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response();
        if let Some(challenge) = self.challenge(resource_metadata)
            && let Ok(value) = HeaderValue::from_str(&challenge)
        {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        if matches!(self, Refusal::Unavailable(_)) {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        }
        response
    }
}

/// `value` as the inside of an RFC 9110 quoted-string: quotes and backslashes escaped,
/// control characters (never valid in a header) replaced.
fn quoted(value: &str) -> String {
    value
        .chars()
        .map(|c| match c {
            '"' | '\\' => format!("\\{c}"),
            c if c.is_control() || !c.is_ascii() => "?".into(),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";

    #[test]
    fn challenges_are_worded_as_the_spec_words_them() {
        assert_eq!(
            Refusal::Missing.challenge(META).unwrap(),
            format!("Bearer resource_metadata=\"{META}\"")
        );
        let invalid = Refusal::InvalidToken("expired \"x\"".into())
            .challenge(META)
            .unwrap();
        assert!(
            invalid.starts_with(
                "Bearer error=\"invalid_token\", error_description=\"expired \\\"x\\\"\""
            ),
            "{invalid}"
        );
        let scope = Refusal::InsufficientScope(vec!["deploy".into(), "read".into()])
            .challenge(META)
            .unwrap();
        assert!(
            scope.starts_with(
                "Bearer error=\"insufficient_scope\", scope=\"deploy read\", resource_metadata="
            ),
            "{scope}"
        );
        assert_eq!(Refusal::Unavailable("down".into()).challenge(META), None);
        assert_eq!(
            Refusal::Unavailable("down".into()).status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
    }
}
