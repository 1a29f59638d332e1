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
/// URL, RFC 8707), `exp` and `nbf` with a small leeway, the algorithm against an
/// allow-list of asymmetric ones, and the `typ` header (see
/// [`ResourceServer::require_at_jwt_typ`](super::ResourceServer::require_at_jwt_typ)).
/// Built by [`ResourceServer`](super::ResourceServer); get it with
/// [`ResourceServer::token_verifier`](super::ResourceServer::token_verifier).
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
    /// Only `typ: at+jwt` is accepted (not `JWT`, nor no `typ`).
    pub(super) require_at_jwt: bool,
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
        check_typ(header.typ.as_deref(), self.require_at_jwt)?;
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

/// The `typ` header of an access token. RFC 9068 §4 has a resource server refuse any
/// `typ` but `at+jwt` (or `application/at+jwt`; media types compare case-insensitively,
/// RFC 7515 §4.1.9), so that another kind of JWT the issuer signs — a DPoP proof, a logout
/// or security event token — is never taken for an access token. Many authorization
/// servers still sign their access tokens `typ: JWT` (Microsoft Entra ID, Keycloak, Auth0's
/// default profile) or without a `typ` (Okta, Amazon Cognito), so those two pass too unless
/// `strict` (only `at+jwt`); every other value is refused. The value is not echoed: it
/// comes from the client.
fn check_typ(typ: Option<&str>, strict: bool) -> Result<(), TokenError> {
    let typ = typ.map(str::to_ascii_lowercase);
    let typ = typ.as_deref();
    let typ = typ.map(|typ| typ.strip_prefix("application/").unwrap_or(typ));
    match typ {
        Some("at+jwt") => Ok(()),
        None | Some("jwt") if !strict => Ok(()),
        _ => Err(TokenError::Invalid(if strict {
            "the token's `typ` header is not `at+jwt` (an RFC 9068 access token)".into()
        } else {
            "the token's `typ` header names another kind of JWT than an access token (`at+jwt`, RFC 9068)".into()
        })),
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

#[cfg(test)]
mod tests {
    use super::super::{JwkSet, ResourceServer};
    use super::*;
    use base64::Engine as _;
    use jsonwebtoken::{EncodingKey, Header};
    use ring::signature::{Ed25519KeyPair, KeyPair as _};

    const RESOURCE: &str = "https://mcp.example.com/mcp";
    const ISSUER: &str = "https://auth.example.com";

    /// An Ed25519 signing key and the JWKS that publishes it (`kid` "k").
    fn key() -> (EncodingKey, JwkSet) {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&ring::rand::SystemRandom::new()).unwrap();
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        let x = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(pair.public_key());
        let jwks = serde_json::from_value(serde_json::json!({"keys": [
            {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": "k", "use": "sig"}
        ]}))
        .unwrap();
        (EncodingKey::from_ed_der(pkcs8.as_ref()), jwks)
    }

    /// A token for alice from `issuer`, with header `typ`.
    fn token(key: &EncodingKey, issuer: &str, typ: Option<&str>) -> String {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let claims = serde_json::json!({
            "iss": issuer, "sub": "alice", "aud": RESOURCE, "exp": now + 300, "scope": "read",
        });
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some("k".into());
        header.typ = typ.map(String::from);
        jsonwebtoken::encode(&header, &claims, key).unwrap()
    }

    fn verify(resource: &ResourceServer, token: &str) -> Result<VerifiedToken, TokenError> {
        futures::executor::block_on(resource.token_verifier().verify(token))
    }

    #[test]
    fn typ_is_an_access_tokens_or_the_generic_jwt_unless_strict() {
        let (signing, jwks) = key();
        let resource = ResourceServer::new(RESOURCE.parse().unwrap())
            .authorization_server(ISSUER)
            .jwks(jwks);
        let strict = |resource: ResourceServer| resource.require_at_jwt_typ(true);
        for typ in [Some("at+jwt"), Some("application/at+jwt"), Some("AT+JWT")] {
            let token = token(&signing, ISSUER, typ);
            assert!(verify(&resource, &token).is_ok(), "{typ:?}");
        }
        for typ in [Some("JWT"), Some("jwt"), Some("application/jwt"), None] {
            let token = token(&signing, ISSUER, typ);
            assert!(verify(&resource, &token).is_ok(), "{typ:?}");
        }
        for typ in [
            Some("dpop+jwt"),
            Some("logout+jwt"),
            Some("secevent+jwt"),
            Some("JOSE"),
            Some(""),
        ] {
            let token = token(&signing, ISSUER, typ);
            let refused = verify(&resource, &token).unwrap_err();
            assert!(
                matches!(&refused, TokenError::Invalid(why) if why.contains("`typ`")),
                "{typ:?}: {refused:?}"
            );
        }
        let (signing, jwks) = key();
        let resource = strict(
            ResourceServer::new(RESOURCE.parse().unwrap())
                .authorization_server(ISSUER)
                .jwks(jwks),
        );
        assert!(verify(&resource, &token(&signing, ISSUER, Some("at+jwt"))).is_ok());
        for typ in [Some("JWT"), None] {
            let refused = verify(&resource, &token(&signing, ISSUER, typ)).unwrap_err();
            assert!(
                matches!(&refused, TokenError::Invalid(why) if why.contains("at+jwt")),
                "{typ:?}: {refused:?}"
            );
        }
    }

    #[test]
    fn static_keys_without_an_issuer_verify_no_token() {
        let (signing, jwks) = key();
        let unnamed = || ResourceServer::new(RESOURCE.parse().unwrap()).jwks(jwks.clone());
        for resource in [
            unnamed(),
            unnamed().authorization_server(""),
            unnamed().authorization_server("  "),
        ] {
            // A token that names no issuer, signed by a published key: it once passed.
            for issuer in ["", "  ", ISSUER] {
                let refused = verify(&resource, &token(&signing, issuer, None)).unwrap_err();
                assert!(
                    matches!(&refused, TokenError::Unavailable(why) if why.contains("authorization_server")),
                    "{issuer:?}: {refused:?}"
                );
            }
        }
        let named = unnamed().authorization_server(ISSUER);
        assert!(verify(&named, &token(&signing, ISSUER, None)).is_ok());
        assert!(verify(&named, &token(&signing, "", None)).is_err());
    }
}
