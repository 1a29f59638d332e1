//! Verifying an access token: the [`TokenVerifier`] trait (plug in introspection for opaque
//! tokens), and [`JwtVerifier`], the built-in one for JWT access tokens (RFC 9068) signed by
//! a key of the issuer's JWKS.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::{Algorithm, Validation};
use serde::Deserialize;

use super::jwks::KeyCache;

/// A boxed future, as [`TokenVerifier::verify`] returns it.
pub type VerifyFuture<'a> =
    Pin<Box<dyn Future<Output = Result<VerifiedToken, TokenError>> + Send + 'a>>;

/// Who a verified access token speaks for. Its issuer and subject together become the
/// request's [`Principal`](crate::server::Principal) (two issuers' same `sub` differ), and
/// its scopes the request's [`GrantedScopes`](crate::server::GrantedScopes).
///
/// ```
/// let token = mrtr_runtime::server::http::auth::VerifiedToken {
///     issuer: "https://auth.example.com".into(),
///     subject: "alice".into(),
///     scopes: vec!["deploy".into()],
/// };
/// assert_eq!(token.principal().0, "oauth:24:https://auth.example.com:alice");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedToken {
    /// The authorization server that issued the token (`iss`).
    pub issuer: String,
    /// The end user or client the token was issued to (`sub`).
    pub subject: String,
    /// The scopes the token grants (`scope`, space-separated, or `scp`).
    pub scopes: Vec<String>,
}

impl VerifiedToken {
    /// The principal that binds this caller's sealed states, tasks and sessions: the
    /// issuer's length, the issuer and the subject, so no two (issuer, subject) pairs meet.
    ///
    /// ```
    /// use mrtr_runtime::server::http::auth::VerifiedToken;
    /// let a = VerifiedToken { issuer: "https://a".into(), subject: "x".into(), scopes: vec![] };
    /// let b = VerifiedToken { issuer: "https://b".into(), subject: "x".into(), scopes: vec![] };
    /// assert_ne!(a.principal(), b.principal());
    /// ```
    pub fn principal(&self) -> crate::server::Principal {
        crate::server::Principal(format!(
            "oauth:{}:{}:{}",
            self.issuer.len(),
            self.issuer,
            self.subject
        ))
    }
}

/// Why a token was not accepted.
///
/// ```
/// let error = mrtr_runtime::server::http::auth::TokenError::Invalid("expired".into());
/// assert_eq!(error.to_string(), "expired");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// The token is not valid here (bad signature, expired, another audience or issuer,
    /// unknown key…): `401` with `error="invalid_token"`. The text goes to the client;
    /// never put the token in it.
    #[error("{0}")]
    Invalid(String),
    /// The token cannot be checked now (the issuer's keys or introspection endpoint are
    /// unreachable): `503`. Nobody is let in meanwhile.
    #[error("{0}")]
    Unavailable(String),
}

/// Checks an access token. The built-in [`JwtVerifier`] checks JWTs against the issuer's
/// keys; implement this for opaque tokens (e.g. RFC 7662 introspection) and pass it to
/// [`ResourceServer::verifier`](super::ResourceServer::verifier).
///
/// ```
/// use mrtr_runtime::server::http::auth::{TokenError, TokenVerifier, VerifiedToken, VerifyFuture};
/// struct Fixed;
/// impl TokenVerifier for Fixed {
///     fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
///         Box::pin(async move {
///             match token {
///                 "let-me-in" => Ok(VerifiedToken {
///                     issuer: "https://auth.example.com".into(),
///                     subject: "alice".into(),
///                     scopes: vec![],
///                 }),
///                 _ => Err(TokenError::Invalid("unknown token".into())),
///             }
///         })
///     }
/// }
/// # let verified = futures::executor::block_on(Fixed.verify("let-me-in")).unwrap();
/// # assert_eq!(verified.subject, "alice");
/// ```
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` (the bearer credential, without the `Bearer ` prefix).
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a>;
}

/// The algorithms a JWT may be signed with by default: asymmetric only (never `none`,
/// never an HMAC, which a public key must not verify).
///
/// ```
/// use mrtr_runtime::server::http::auth::DEFAULT_ALGORITHMS;
/// assert!(DEFAULT_ALGORITHMS.contains(&jsonwebtoken::Algorithm::ES256));
/// assert!(!DEFAULT_ALGORITHMS.contains(&jsonwebtoken::Algorithm::HS256));
/// ```
pub const DEFAULT_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Verifies JWT access tokens: signature by a key of the issuer's JWKS (found by `kid`,
/// refreshed on an unknown one at a bounded rate), `iss`, `aud` (this server's resource
/// URL, RFC 8707), `exp` and `nbf` with a small leeway, and the algorithm against an
/// allow-list of asymmetric ones. Built by [`ResourceServer`](super::ResourceServer); get
/// it with [`ResourceServer::token_verifier`](super::ResourceServer::token_verifier).
///
/// ```
/// # use mrtr_runtime::server::http::auth::{ResourceServer, TokenVerifier, TokenError};
/// let resource = ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
///     .authorization_server("https://auth.example.com")
///     .jwks(jsonwebtoken::jwk::JwkSet { keys: vec![] });
/// let verifier = resource.token_verifier();
/// let refused = futures::executor::block_on(verifier.verify("not.a.jwt")).unwrap_err();
/// assert!(matches!(refused, TokenError::Invalid(_)));
/// ```
pub struct JwtVerifier {
    pub(super) keys: Arc<KeyCache>,
    pub(super) issuer: String,
    pub(super) audiences: Vec<String>,
    pub(super) leeway: Duration,
    pub(super) algorithms: Vec<Algorithm>,
}

/// The claims read from a verified JWT (the registered ones are checked by the library).
#[derive(Deserialize)]
struct Claims {
    iss: String,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    scp: Option<Vec<String>>,
}

impl JwtVerifier {
    async fn verify_jwt(&self, token: &str) -> Result<VerifiedToken, TokenError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| TokenError::Invalid("the token is not a well-formed JWT".into()))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(TokenError::Invalid(format!(
                "the token's algorithm {:?} is not accepted",
                header.alg
            )));
        }
        let key = self.keys.key_for(header.kid.as_deref(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.aud = Some(self.audiences.iter().cloned().collect::<HashSet<_>>());
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let data = jsonwebtoken::decode::<Claims>(token, &key, &validation)
            .map_err(|error| TokenError::Invalid(describe(error.kind())))?;
        let Claims {
            iss,
            sub,
            scope,
            scp,
        } = data.claims;
        let sub = sub.ok_or_else(|| TokenError::Invalid("the token has no `sub` claim".into()))?;
        let scopes = match (scope, scp) {
            (Some(scope), _) => scope
                .split(' ')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
            (None, Some(scp)) => scp,
            (None, None) => Vec::new(),
        };
        Ok(VerifiedToken {
            issuer: iss,
            subject: sub,
            scopes,
        })
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.verify_jwt(token))
    }
}

/// What the client is told about a JWT the library refused (never the token itself).
fn describe(kind: &jsonwebtoken::errors::ErrorKind) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match kind {
        ErrorKind::InvalidSignature => "the token's signature does not verify".into(),
        ErrorKind::ExpiredSignature => "the token has expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".into(),
        ErrorKind::InvalidAudience => {
            "the token's audience is not this resource (RFC 8707: request it for this server's URL)"
                .into()
        }
        ErrorKind::InvalidIssuer => {
            "the token's issuer is not this resource's authorization server".into()
        }
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no `{claim}` claim"),
        ErrorKind::InvalidAlgorithm => "the token's algorithm does not fit its key".into(),
        _ => "the token is not valid".into(),
    }
}
