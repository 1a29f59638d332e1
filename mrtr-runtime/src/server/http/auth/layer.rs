//! The check in front of the MCP endpoint (the endpoint service runs it before the gate):
//! takes the bearer token, verifies it, and puts who it speaks for on the request as extensions ([`Principal`], [`GrantedScopes`],
//! [`VerifiedToken`]) for the server's principal resolver, the per-caller limits and the
//! tools. A tool refused for its scopes (in the round core, on every path) is answered
//! `403` here, from the refusal the core recorded on the request's [`GrantedScopes`].

use std::sync::Arc;

use std::future::Future;

use axum::extract::Request;
use axum::response::Response;
use http::{HeaderValue, StatusCode, header};

use super::challenge::Refusal;
use super::verifier::{TokenError, TokenVerifier, VerifiedToken};
use crate::server::{GrantedScopes, Principal};

/// What the check needs.
pub(in crate::server::http) struct Guard {
    pub(super) verifier: Arc<dyn TokenVerifier>,
    /// The URL every challenge names (`resource_metadata`).
    pub(super) metadata_url: String,
}

/// Lets a request through only with a valid bearer token.
pub(in crate::server::http) async fn authenticate<Served>(
    guard: &Guard,
    mut request: Request,
    next: impl FnOnce(Request) -> Served,
) -> Response
where
    Served: Future<Output = Response>,
{
    let verified = match bearer(request.headers()) {
        Err(refusal) => Err(refusal),
        Ok(token) => guard
            .verifier
            .verify(token)
            .await
            .map_err(|error| match error {
                TokenError::Invalid(why) => Refusal::InvalidToken(why),
                TokenError::Unavailable(why) => Refusal::Unavailable(why),
            }),
    };
    let verified: VerifiedToken = match verified {
        Ok(verified) => verified,
        Err(refusal) => {
            tracing::debug!(status = %refusal.status(), "refused an unauthorized request");
            return refusal.response(&guard.metadata_url);
        }
    };
    let granted = GrantedScopes::new(verified.scopes.iter().cloned());
    let extensions = request.extensions_mut();
    extensions.insert::<Principal>(verified.principal());
    extensions.insert(granted.clone());
    extensions.insert(verified);
    let mut response = next(request).await;
    if let Some(needed) = granted.refused() {
        // The body (the JSON-RPC error naming the scopes) stays; a stream already sent
        // (a legacy session's call) cannot change its status and keeps the error only.
        if response.status() == StatusCode::OK {
            *response.status_mut() = StatusCode::FORBIDDEN;
        }
        if let Some(challenge) =
            Refusal::InsufficientScope(needed.to_vec()).challenge(&guard.metadata_url)
            && let Ok(value) = HeaderValue::from_str(&challenge)
        {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
    }
    response
}

/// The token of the request's one `Authorization: Bearer <token>` header.
fn bearer(headers: &http::HeaderMap) -> Result<&str, Refusal> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(Refusal::Missing);
    };
    if values.next().is_some() {
        return Err(Refusal::InvalidRequest(
            "more than one Authorization header".into(),
        ));
    }
    let value = value
        .to_str()
        .map_err(|_| Refusal::InvalidRequest("not visible ASCII".into()))?;
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        // RFC 6750 §3.1: a request without a bearer token gets the bare challenge.
        return Err(Refusal::Missing);
    }
    let token = token.trim();
    if token.is_empty() || token.contains(' ') {
        return Err(Refusal::InvalidRequest("expected `Bearer <token>`".into()));
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> http::HeaderMap {
        let mut headers = http::HeaderMap::new();
        for value in values {
            headers.append(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn only_one_bearer_header_carries_a_token() {
        assert_eq!(bearer(&headers(&["Bearer abc"])), Ok("abc"));
        assert_eq!(bearer(&headers(&["bearer abc"])), Ok("abc"));
        assert_eq!(bearer(&headers(&[])), Err(Refusal::Missing));
        assert_eq!(bearer(&headers(&["Basic dTpw"])), Err(Refusal::Missing));
        assert!(matches!(
            bearer(&headers(&["Bearer"])),
            Err(Refusal::InvalidRequest(_))
        ));
        assert!(matches!(
            bearer(&headers(&["Bearer a", "Bearer b"])),
            Err(Refusal::InvalidRequest(_))
        ));
    }
}
