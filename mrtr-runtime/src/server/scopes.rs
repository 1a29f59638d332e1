//! The OAuth scopes a request's access token grants, and the check a tool that declares
//! scopes (`#[mrtr::tool(scopes = ["deploy"])]`) is held to before any of its code runs.

use std::sync::{Arc, OnceLock};

use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// The `_meta` key under which a listed tool names the OAuth scopes it needs, so a client
/// can ask for them when it is authorized (e.g. `["deploy"]`).
///
/// ```
/// assert_eq!(mrtr_runtime::server::REQUIRED_SCOPES_META_KEY, "io.github.mrtr/requiredScopes");
/// ```
pub const REQUIRED_SCOPES_META_KEY: &str = "io.github.mrtr/requiredScopes";

/// The scopes a verified access token grants, set as an HTTP request extension by the
/// authentication layer (`server::http::auth` with the `auth` feature, or your own
/// middleware next to a [`Principal`](super::Principal)). Tools read it through
/// [`RequestCx::scopes`](crate::machine::RequestCx::scopes).
///
/// Over HTTP a tool that declares scopes runs only for a request carrying this extension
/// with every one of them; otherwise the request gets a JSON-RPC error naming them (and,
/// behind the `auth` layer, HTTP `403` with `error="insufficient_scope"`). A request that
/// comes without HTTP (over stdio, or any other transport that carries no HTTP request)
/// has no access token: it is granted only the scopes the server's author names with
/// [`McpServerBuilder::local_scopes`](super::McpServerBuilder::local_scopes) (none by
/// default), and a tool that declares others is refused, as over HTTP.
///
/// ```
/// let granted = mrtr_runtime::server::GrantedScopes::new(["read", "deploy"]);
/// assert!(granted.contains("deploy"));
/// assert!(!granted.contains("admin"));
/// assert_eq!(granted.iter().collect::<Vec<_>>(), ["read", "deploy"]);
/// ```
#[derive(Clone, Debug)]
pub struct GrantedScopes(Arc<Granted>);

#[derive(Debug)]
struct Granted {
    scopes: Vec<String>,
    /// The scopes a tool needed and this request lacked, once refused: the HTTP layer
    /// that inserted the extension answers `403 insufficient_scope` naming them.
    refused: OnceLock<Vec<String>>,
}

impl GrantedScopes {
    /// The scopes a token grants (e.g. its `scope` claim split on spaces).
    ///
    /// ```
    /// let granted = mrtr_runtime::server::GrantedScopes::new(Vec::<String>::new());
    /// assert_eq!(granted.iter().count(), 0);
    /// ```
    pub fn new(scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        GrantedScopes(Arc::new(Granted {
            scopes: scopes.into_iter().map(Into::into).collect(),
            refused: OnceLock::new(),
        }))
    }

    /// Whether `scope` is granted.
    ///
    /// ```
    /// assert!(mrtr_runtime::server::GrantedScopes::new(["a"]).contains("a"));
    /// ```
    pub fn contains(&self, scope: &str) -> bool {
        self.0.scopes.iter().any(|granted| granted == scope)
    }

    /// The granted scopes, in the token's order.
    ///
    /// ```
    /// let granted = mrtr_runtime::server::GrantedScopes::new(["a", "b"]);
    /// assert_eq!(granted.iter().last(), Some("b"));
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.scopes.iter().map(String::as_str)
    }

    /// The scopes a tool needed that this request lacked, when the server refused it:
    /// what an authentication layer names in its `403` challenge.
    ///
    /// ```
    /// let granted = mrtr_runtime::server::GrantedScopes::new(["read"]);
    /// assert_eq!(granted.refused(), None); // nothing refused yet
    /// ```
    pub fn refused(&self) -> Option<&[String]> {
        self.0.refused.get().map(Vec::as_slice)
    }

    /// Records a refusal for [`refused`](Self::refused) (the first one wins).
    pub(crate) fn refuse(&self, needed: &[String]) {
        let _ = self.0.refused.set(needed.to_vec());
    }
}

/// What the scope check holds a request to.
#[derive(Debug, Clone)]
pub(crate) enum ScopeCheck {
    /// A task's background rounds (checked when the task was created), and the test kit:
    /// declared scopes are not checked.
    Unchecked,
    /// An HTTP request: what its token granted (`None`: no verified token, nothing granted).
    Http(Option<GrantedScopes>),
    /// A request without HTTP (stdio): what the server grants such requests
    /// ([`McpServerBuilder::local_scopes`](super::McpServerBuilder::local_scopes); `None`:
    /// nothing).
    Local(Option<GrantedScopes>),
}

/// Declared scopes a request was refused for lacking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MissingScopes {
    /// Every scope the machine declares, in its order.
    pub(crate) scopes: Vec<String>,
    /// The request came without HTTP (stdio): no token could have granted them; only the
    /// server's `local_scopes` can.
    pub(crate) without_http: bool,
}

impl ScopeCheck {
    /// What `context` grants: the [`GrantedScopes`] extension of its HTTP request, or
    /// `local` when it came without HTTP.
    pub(crate) fn of(context: &RequestContext<RoleServer>, local: Option<&GrantedScopes>) -> Self {
        match context.extensions.get::<http::request::Parts>() {
            Some(parts) => ScopeCheck::Http(parts.extensions.get::<GrantedScopes>().cloned()),
            None => ScopeCheck::Local(local.cloned()),
        }
    }

    /// The granted scopes, for the tool's `RequestCx`.
    pub(crate) fn granted(&self) -> Option<&GrantedScopes> {
        match self {
            ScopeCheck::Http(granted) | ScopeCheck::Local(granted) => granted.as_ref(),
            ScopeCheck::Unchecked => None,
        }
    }

    /// `Err` with the scopes in `needed` (all of them, in its order) when any is not
    /// granted; over HTTP the refusal is recorded on the request for its HTTP layer.
    pub(crate) fn check(&self, needed: &[String]) -> Result<(), MissingScopes> {
        let (granted, without_http) = match self {
            ScopeCheck::Unchecked => return Ok(()),
            ScopeCheck::Http(granted) => (granted, false),
            ScopeCheck::Local(granted) => (granted, true),
        };
        let missing = needed
            .iter()
            .any(|scope| !granted.as_ref().is_some_and(|g| g.contains(scope)));
        if !missing {
            return Ok(());
        }
        // The server's local grant is shared by every request: nothing to record on it.
        if let (Some(granted), false) = (granted, without_http) {
            granted.refuse(needed);
        }
        Err(MissingScopes {
            scopes: needed.to_vec(),
            without_http,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_requests_need_every_declared_scope() {
        let needed = vec!["deploy".to_string(), "read".to_string()];
        let over_http = Err(MissingScopes {
            scopes: needed.clone(),
            without_http: false,
        });
        let partial = GrantedScopes::new(["read"]);
        let check = ScopeCheck::Http(Some(partial.clone()));
        assert_eq!(check.check(&needed), over_http);
        assert_eq!(partial.refused(), Some(needed.as_slice()));
        let full = ScopeCheck::Http(Some(GrantedScopes::new(["read", "deploy", "x"])));
        assert_eq!(full.check(&needed), Ok(()));
        assert_eq!(ScopeCheck::Http(None).check(&needed), over_http);
        assert_eq!(ScopeCheck::Http(None).check(&[]), Ok(()));
        assert_eq!(ScopeCheck::Unchecked.check(&needed), Ok(()));
    }

    #[test]
    fn requests_without_http_get_only_the_local_grant() {
        let needed = vec!["deploy".to_string(), "read".to_string()];
        let without_http = Err(MissingScopes {
            scopes: needed.clone(),
            without_http: true,
        });
        assert_eq!(ScopeCheck::Local(None).check(&needed), without_http);
        assert_eq!(ScopeCheck::Local(None).check(&[]), Ok(()));
        let partial = GrantedScopes::new(["read"]);
        assert_eq!(
            ScopeCheck::Local(Some(partial.clone())).check(&needed),
            without_http
        );
        // The grant is the server's, shared by every request: no refusal is kept on it.
        assert_eq!(partial.refused(), None);
        let full = ScopeCheck::Local(Some(GrantedScopes::new(["deploy", "read"])));
        assert_eq!(full.check(&needed), Ok(()));
        assert!(full.granted().is_some_and(|g| g.contains("deploy")));
    }
}
