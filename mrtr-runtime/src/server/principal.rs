//! Who the flow belongs to. The principal goes into the token's associated data, so a
//! state issued to one principal never resumes for another.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use sha2::{Digest, Sha256};

/// An authenticated subject, set by your authentication middleware as an HTTP request
/// extension (e.g. an axum layer inserting it into `http::Request::extensions_mut()`).
/// When present it is what the token binds.
///
/// ```
/// let who = mrtr_runtime::server::Principal("user-42".into());
/// assert_eq!(who.0, "user-42");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal(pub String);

/// Decides the principal of a request; see [`McpServerBuilder::principal`](super::McpServerBuilder::principal).
pub type PrincipalResolver =
    Arc<dyn Fn(&RequestContext<RoleServer>) -> Option<String> + Send + Sync>;

/// The default resolver: a [`Principal`] extension set by auth middleware; otherwise a
/// salted hash of the `Authorization` header, so a state minted for one bearer does not
/// resume for another (the raw credential is never kept); otherwise none (stdio).
pub(crate) fn default_principal(context: &RequestContext<RoleServer>) -> Option<String> {
    default_principal_of(context.extensions.get::<http::request::Parts>()?)
}

/// The default resolver, shared, so that [`is_default_resolver`] can tell it from a server's
/// own.
pub(crate) fn default_resolver() -> PrincipalResolver {
    static DEFAULT: std::sync::OnceLock<PrincipalResolver> = std::sync::OnceLock::new();
    DEFAULT.get_or_init(|| Arc::new(default_principal)).clone()
}

/// Whether `resolver` is [`default_resolver`]: then the HTTP gate runs it on a request's
/// parts as they are, without lending them to a request context first.
#[cfg(feature = "server-http")]
pub(crate) fn is_default_resolver(resolver: &PrincipalResolver) -> bool {
    Arc::ptr_eq(resolver, &default_resolver())
}

/// [`default_principal`] of a request's HTTP parts.
pub(crate) fn default_principal_of(parts: &http::request::Parts) -> Option<String> {
    if let Some(Principal(subject)) = parts.extensions.get::<Principal>() {
        return Some(format!("subject:{subject}"));
    }
    let authorization = parts.headers.get(http::header::AUTHORIZATION)?;
    Some(format!(
        "{CREDENTIAL_PREFIX}{}",
        salted_digest(authorization.as_bytes())
    ))
}

/// The principal the server's resolver found for an HTTP request, kept on its parts by
/// the HTTP gate (which needs it first, for the per-caller limits) so the resolver runs
/// once per request. Only this crate can put it there.
#[derive(Debug, Clone)]
pub(crate) struct Resolved(pub(crate) Option<String>);

/// The principal of a request: the one the HTTP gate resolved already, else `resolver`'s.
pub(crate) fn principal_of(
    resolver: &PrincipalResolver,
    context: &RequestContext<RoleServer>,
) -> Option<String> {
    let resolved = context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Resolved>());
    match resolved {
        Some(Resolved(principal)) => principal.clone(),
        None => resolver(context),
    }
}

/// Whether `principal` is the default resolver's hash of an `Authorization` header that
/// nothing verified: any client can send a fresh one per request, so per-caller limits
/// count such a caller by its client address where there is one.
pub(crate) fn is_unverified_credential(principal: &str) -> bool {
    principal.starts_with(CREDENTIAL_PREFIX)
}

/// What the default resolver puts before the hash of an unverified `Authorization` header.
const CREDENTIAL_PREFIX: &str = "credential:";

/// The client's IP address as the HTTP server saw it, set on each request by
/// [`BoundHttp`](super::http::BoundHttp) when that address is counted against per-address
/// limits (any address but loopback, unless
/// [`per_address_includes_loopback`](super::http::HttpServing::per_address_includes_loopback)).
/// Anonymous callers (no principal) are held to per-caller quotas by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClientAddress(pub(crate) std::net::IpAddr);

/// The counted client address of a request, if its transport set one.
pub(crate) fn client_address(context: &RequestContext<RoleServer>) -> Option<std::net::IpAddr> {
    let parts = context.extensions.get::<http::request::Parts>()?;
    parts
        .extensions
        .get::<ClientAddress>()
        .map(|ClientAddress(ip)| *ip)
}

fn salted_digest(secret: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"mrtr principal v1\0");
    hasher.update(secret);
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_hides_the_credential_and_is_stable() {
        let a = salted_digest(b"Bearer secret-token");
        assert_eq!(a, salted_digest(b"Bearer secret-token"));
        assert_ne!(a, salted_digest(b"Bearer other-token"));
        assert!(!a.contains("secret"));
        assert_eq!(a.len(), 64);
    }
}
