//! The server as an OAuth 2.1 resource server, as the MCP authorization spec asks of an
//! HTTP server that requires auth (feature `auth`). Every request to the MCP endpoint
//! needs a valid bearer access token; its issuer and subject become the request's
//! [`Principal`](crate::server::Principal), which binds every sealed `requestState`, task
//! and legacy session, and its scopes the request's
//! [`GrantedScopes`](crate::server::GrantedScopes), which tools read through
//! [`RequestCx::scopes`](crate::machine::RequestCx::scopes) and which
//! `#[mrtr::tool(scopes = ["deploy"])]` is checked against before any of the tool's code runs.
//!
//! ```no_run
//! # async fn run(server: mrtr_runtime::server::McpServer) -> std::io::Result<()> {
//! use mrtr_runtime::server::http::{HttpServing, auth::ResourceServer};
//! HttpServing::new(server)
//!     .auth(
//!         ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
//!             .authorization_server("https://auth.example.com"),
//!     )
//!     .serve("127.0.0.1:8080".parse().unwrap())
//!     .await
//! # }
//! ```
//!
//! - **Protected Resource Metadata** (RFC 9728) at `/.well-known/oauth-protected-resource`
//!   and at its path-suffixed form (`/.well-known/oauth-protected-resource/mcp`), naming
//!   the resource and its authorization servers.
//! - **No token**: `401` with `WWW-Authenticate: Bearer resource_metadata="…"`. **A token
//!   refused** (bad signature, expired, not yet valid, another audience or issuer, a key the
//!   issuer does not publish, an algorithm not allowed — never `none`, never an HMAC —, a
//!   `typ` header of another kind of JWT than an access token):
//!   `401` with `error="invalid_token"` too. **A tool's scopes missing**: `403` with
//!   `error="insufficient_scope", scope="…"`. **The issuer's keys unreachable**: `503`;
//!   nobody is let in.
//! - **Keys**: the issuer's JWKS, found through its metadata (RFC 8414, else OpenID Connect
//!   discovery) and fetched over HTTPS, cached for [`jwks_ttl`](ResourceServer::jwks_ttl)
//!   and refreshed on an unknown `kid` at most once per
//!   [`min_refresh_interval`](ResourceServer::min_refresh_interval); or given statically
//!   ([`jwks`](ResourceServer::jwks)). Opaque tokens: plug in a [`TokenVerifier`].

mod challenge;
mod jwks;
mod layer;
mod metadata;
mod verifier;

use std::sync::Arc;
use std::time::Duration;

pub(super) use layer::{Guard, authenticate};

pub use jsonwebtoken::Algorithm;
pub use jsonwebtoken::jwk::JwkSet;
use url::Url;
pub use verifier::{
    DEFAULT_ALGORITHMS, JwtVerifier, TokenError, TokenVerifier, VerifiedToken, VerifyFuture,
};

/// How long a fetched JWKS is used before it is fetched again, by default.
///
/// ```
/// assert_eq!(mrtr_runtime::server::http::auth::DEFAULT_JWKS_TTL.as_secs(), 600);
/// ```
pub const DEFAULT_JWKS_TTL: Duration = Duration::from_secs(600);

/// The least time between two fetches of the JWKS (on an unknown `kid`, or after a failed
/// fetch), by default.
///
/// ```
/// assert_eq!(mrtr_runtime::server::http::auth::DEFAULT_MIN_REFRESH_INTERVAL.as_secs(), 10);
/// ```
pub const DEFAULT_MIN_REFRESH_INTERVAL: Duration = Duration::from_secs(10);

/// The clock skew allowed on `exp` and `nbf`, by default.
///
/// ```
/// assert_eq!(mrtr_runtime::server::http::auth::DEFAULT_LEEWAY.as_secs(), 30);
/// ```
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);

/// This server as an OAuth 2.1 protected resource: its URL (the audience its tokens must
/// name, RFC 8707), its authorization server, and how tokens are verified. Pass it to
/// [`HttpServing::auth`](super::HttpServing::auth).
///
/// ```
/// use mrtr_runtime::server::http::auth::ResourceServer;
/// let resource = ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
///     .authorization_server("https://auth.example.com")
///     .scopes_supported(["read", "deploy"]);
/// assert_eq!(
///     resource.metadata_url(),
///     "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// ```
pub struct ResourceServer {
    resource: Url,
    issuer: Option<String>,
    jwks: Option<JwkSet>,
    jwks_uri: Option<Url>,
    verifier: Option<Arc<dyn TokenVerifier>>,
    scopes_supported: Vec<String>,
    resource_name: Option<String>,
    allow_http: bool,
    leeway: Duration,
    algorithms: Vec<Algorithm>,
    jwks_ttl: Duration,
    min_refresh_interval: Duration,
    require_at_jwt: bool,
}

impl ResourceServer {
    /// The resource at `resource`: the public URL of the MCP endpoint, as clients reach
    /// it (e.g. `https://mcp.example.com/mcp`). Tokens must name it in `aud`.
    ///
    /// ```
    /// let resource = mrtr_runtime::server::http::auth::ResourceServer::new(
    ///     "https://mcp.example.com/mcp".parse().unwrap(),
    /// );
    /// assert_eq!(resource.resource(), "https://mcp.example.com/mcp");
    /// ```
    pub fn new(resource: Url) -> Self {
        ResourceServer {
            resource,
            issuer: None,
            jwks: None,
            jwks_uri: None,
            verifier: None,
            scopes_supported: Vec::new(),
            resource_name: None,
            allow_http: false,
            leeway: DEFAULT_LEEWAY,
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            jwks_ttl: DEFAULT_JWKS_TTL,
            min_refresh_interval: DEFAULT_MIN_REFRESH_INTERVAL,
            require_at_jwt: false,
        }
    }

    /// The authorization server (its issuer identifier, e.g. `https://auth.example.com`):
    /// listed in the metadata, the only `iss` accepted, and where the JWKS is discovered
    /// (its RFC 8414 metadata, else OpenID Connect discovery) unless given.
    ///
    /// ```
    /// # use mrtr_runtime::server::http::auth::ResourceServer;
    /// let resource = ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
    ///     .authorization_server("https://auth.example.com");
    /// ```
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Verifies with these keys instead of fetching the issuer's (never refetched).
    ///
    /// ```
    /// # use mrtr_runtime::server::http::auth::{JwkSet, ResourceServer};
    /// let keys: JwkSet = serde_json::from_str(r#"{"keys": []}"#).unwrap();
    /// let resource = ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
    ///     .authorization_server("https://auth.example.com")
    ///     .jwks(keys);
    /// ```
    pub fn jwks(mut self, keys: JwkSet) -> Self {
        self.jwks = Some(keys);
        self
    }

    /// Fetches the JWKS from this URL instead of discovering it from the issuer's metadata.
    ///
    /// ```
    /// # use mrtr_runtime::server::http::auth::ResourceServer;
    /// let resource = ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
    ///     .authorization_server("https://auth.example.com")
    ///     .jwks_uri("https://auth.example.com/keys".parse().unwrap());
    /// ```
    pub fn jwks_uri(mut self, uri: Url) -> Self {
        self.jwks_uri = Some(uri);
        self
    }

    /// Verifies tokens with `verifier` instead of as JWTs (e.g. RFC 7662 introspection of
    /// opaque tokens).
    ///
    /// ```
    /// # use mrtr_runtime::server::http::auth::*;
    /// struct Nobody;
    /// impl TokenVerifier for Nobody {
    ///     fn verify<'a>(&'a self, _: &'a str) -> VerifyFuture<'a> {
    ///         Box::pin(async { Err(TokenError::Invalid("nobody gets in".into())) })
    ///     }
    /// }
    /// let resource = ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
    ///     .authorization_server("https://auth.example.com")
    ///     .verifier(Nobody);
    /// ```
    pub fn verifier(mut self, verifier: impl TokenVerifier) -> Self {
        self.verifier = Some(Arc::new(verifier));
        self
    }

    /// The scopes listed in the metadata's `scopes_supported`.
    ///
    /// ```
    /// # use mrtr_runtime::server::http::auth::ResourceServer;
    /// let resource = ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
    ///     .scopes_supported(["read", "deploy"]);
    /// ```
    pub fn scopes_supported(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The human-readable `resource_name` of the metadata.
    ///
    /// ```
    /// # use mrtr_runtime::server::http::auth::ResourceServer;
    /// let resource = ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
    ///     .resource_name("Deployments");
    /// ```
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// Lets the issuer's metadata and keys be fetched over plain `http://` (default: only
    /// `https://`). For tests against an authorization server on loopback only.
    ///
    /// ```
    /// # use mrtr_runtime::server::http::auth::ResourceServer;
    /// let resource = ResourceServer::new("http://127.0.0.1:8080/mcp".parse().unwrap())
    ///     .authorization_server("http://127.0.0.1:9000")
    ///     .allow_insecure_http(true);
    /// ```
    pub fn allow_insecure_http(mut self, allow: bool) -> Self {
        self.allow_http = allow;
        self
    }

    /// The clock skew allowed on `exp` and `nbf` (default [`DEFAULT_LEEWAY`], 30 s).
    ///
    /// ```
    /// # use mrtr_runtime::server::http::auth::ResourceServer;
    /// let resource = ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
    ///     .leeway(std::time::Duration::from_secs(5));
    /// ```
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The signature algorithms accepted (default [`DEFAULT_ALGORITHMS`]). HMAC algorithms
    /// are dropped: a public key set must never verify a shared-secret signature.
    ///
    /// ```
    /// # use mrtr_runtime::server::http::auth::{Algorithm, ResourceServer};
    /// let resource = ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
    ///     .algorithms([Algorithm::ES256]);
    /// ```
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = algorithms
            .into_iter()
            .filter(|alg| !matches!(alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512))
            .collect();
        self
    }

    /// How long fetched keys are used before they are fetched again (default
    /// [`DEFAULT_JWKS_TTL`], 10 min). A failed refetch after it lets nobody in.
    ///
    /// ```
    /// # use mrtr_runtime::server::http::auth::ResourceServer;
    /// let resource = ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
    ///     .jwks_ttl(std::time::Duration::from_secs(300));
    /// ```
    pub fn jwks_ttl(mut self, ttl: Duration) -> Self {
        self.jwks_ttl = ttl;
        self
    }

    /// The least time between two fetches of the keys (default
    /// [`DEFAULT_MIN_REFRESH_INTERVAL`], 10 s): a token with an unknown `kid` refreshes
    /// them at most this often, so made-up key ids cannot hammer the issuer.
    ///
    /// ```
    /// # use mrtr_runtime::server::http::auth::ResourceServer;
    /// let resource = ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
    ///     .min_refresh_interval(std::time::Duration::from_secs(30));
    /// ```
    pub fn min_refresh_interval(mut self, interval: Duration) -> Self {
        self.min_refresh_interval = interval;
        self
    }

    /// Accepts only JWTs whose `typ` header is `at+jwt` (RFC 9068 access tokens); by
    /// default `typ: JWT` and no `typ` pass too, as many authorization servers sign their
    /// access tokens so (Microsoft Entra ID, Keycloak, Auth0's default profile: `JWT`;
    /// Okta, Amazon Cognito: none). Any other `typ` (a DPoP proof's, a logout token's…) is
    /// always refused. Turn this on when your authorization server issues RFC 9068 tokens.
    ///
    /// ```
    /// # use mrtr_runtime::server::http::auth::ResourceServer;
    /// let resource = ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
    ///     .authorization_server("https://auth.example.com")
    ///     .require_at_jwt_typ(true);
    /// ```
    pub fn require_at_jwt_typ(mut self, require: bool) -> Self {
        self.require_at_jwt = require;
        self
    }

    /// The resource identifier tokens must name in `aud` (the metadata's `resource`).
    ///
    /// ```
    /// # use mrtr_runtime::server::http::auth::ResourceServer;
    /// let resource = ResourceServer::new("https://mcp.example.com".parse().unwrap());
    /// assert_eq!(resource.resource(), "https://mcp.example.com");
    /// ```
    pub fn resource(&self) -> String {
        metadata::resource_id(&self.resource)
    }

    /// The URL of the metadata, as the challenges name it (RFC 9728 §3.1).
    ///
    /// ```
    /// # use mrtr_runtime::server::http::auth::ResourceServer;
    /// let resource = ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap());
    /// assert!(resource.metadata_url().ends_with("/.well-known/oauth-protected-resource/mcp"));
    /// ```
    pub fn metadata_url(&self) -> String {
        metadata::metadata_url(&self.resource)
    }

    /// The verifier the layer uses: the one given to [`verifier`](Self::verifier), else a
    /// [`JwtVerifier`] for this resource (a new key cache each call).
    ///
    /// A JWT verifier needs the issuer it accepts: without an
    /// [`authorization_server`](Self::authorization_server) (or with a blank one) none is
    /// built, even from static [`jwks`](Self::jwks) — it would take tokens naming no
    /// issuer. The verifier returned then refuses every token as unverifiable (`503`,
    /// nobody is let in) and the misconfiguration is logged at ERROR.
    ///
    /// ```
    /// # use mrtr_runtime::server::http::auth::{ResourceServer, TokenError};
    /// let verifier = ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
    ///     .authorization_server("https://auth.example.com")
    ///     .token_verifier();
    /// let unconfigured = ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
    ///     .jwks(jsonwebtoken::jwk::JwkSet { keys: vec![] })
    ///     .token_verifier();
    /// let refused = futures::executor::block_on(unconfigured.verify("a.b.c")).unwrap_err();
    /// assert!(matches!(refused, TokenError::Unavailable(_)));
    /// ```
    pub fn token_verifier(&self) -> Arc<dyn TokenVerifier> {
        if let Some(verifier) = &self.verifier {
            return verifier.clone();
        }
        let Some(issuer) = self
            .issuer
            .clone()
            .filter(|issuer| !issuer.trim().is_empty())
        else {
            tracing::error!(
                resource = %self.resource,
                "no authorization server is configured (ResourceServer::authorization_server): no token is accepted"
            );
            return Arc::new(NoIssuer);
        };
        let source = match &self.jwks {
            Some(keys) => jwks::KeySource::Static(keys.clone()),
            None => jwks::KeySource::Remote(jwks::Remote {
                issuer: issuer.clone(),
                jwks_uri: self.jwks_uri.clone(),
                client: jwks::client(),
                allow_http: self.allow_http,
                ttl: self.jwks_ttl,
                min_refresh_interval: self.min_refresh_interval,
            }),
        };
        let resource = self.resource();
        let mut audiences = vec![resource.clone()];
        if self.resource.as_str() != resource {
            audiences.push(self.resource.as_str().to_string());
        }
        Arc::new(JwtVerifier {
            keys: Arc::new(jwks::KeyCache::new(source)),
            issuer,
            audiences,
            leeway: self.leeway,
            algorithms: self.algorithms.clone(),
            require_at_jwt: self.require_at_jwt,
        })
    }
}

/// The verifier of a resource server that names no authorization server: every token is
/// refused as unverifiable, whatever it claims.
struct NoIssuer;

impl TokenVerifier for NoIssuer {
    fn verify<'a>(&'a self, _: &'a str) -> VerifyFuture<'a> {
        Box::pin(async {
            Err(TokenError::Unavailable(
                "this server names no authorization server (ResourceServer::authorization_server)"
                    .into(),
            ))
        })
    }
}

/// The token check for the MCP endpoint, and the metadata routes to serve beside it.
pub(super) fn guard(
    resource: Option<ResourceServer>,
) -> (Option<Arc<Guard>>, Option<axum::Router>) {
    let Some(resource) = resource else {
        return (None, None);
    };
    let guard = Arc::new(layer::Guard {
        verifier: resource.token_verifier(),
        metadata_url: resource.metadata_url(),
    });
    let document = metadata::document(
        &resource.resource,
        resource.issuer.as_slice(),
        &resource.scopes_supported,
        resource.resource_name.as_deref(),
    );
    (
        Some(guard),
        Some(metadata::routes(&resource.resource, document)),
    )
}
