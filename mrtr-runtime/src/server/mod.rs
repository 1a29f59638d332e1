//! Serving machines through rmcp: an [`McpServer`] is an rmcp `ServerHandler` that lists
//! and runs `#[mrtr::tool]`/`prompt`/`resource` machines and hands every other request to
//! an optional fallback handler (your existing rmcp server), so both mix in one server.
//!
//! Per request it resolves the principal, reads the capabilities from that request's
//! `_meta`, opens the `requestState`, resumes the machine, gates what it asks on the
//! declared capabilities (`-32021` otherwise), and seals the next state.
//!
//! ```no_run
//! # async fn run(my_tool: impl mrtr_runtime::machine::Machine<Output = rmcp::model::CallToolResult>) -> Result<(), Box<dyn std::error::Error>> {
//! use mrtr_runtime::server::McpServer;
//! use rmcp::ServiceExt;
//!
//! let server = McpServer::builder("deploy-server").tool(my_tool).build().unwrap();
//! server.serve(rmcp::transport::stdio()).await?.waiting().await?;
//! # Ok(()) }
//! ```

// The reply that asks, written in one pass: by the HTTP writer and for the ledger's record.
#[cfg(feature = "server-http")]
mod asking;
mod build_error;
mod builder;
mod errors;
mod handler;
#[cfg(feature = "server-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "server-http")))]
pub mod http;
pub mod ledger;
mod legacy;
mod listing;
mod mcp_server;
pub(crate) mod mrtr;
pub(crate) mod payload;
mod principal;
mod ratelimit;
mod registry;
pub(crate) mod round;
mod scopes;
pub(crate) mod stamp;
pub mod tasks;
mod unwind;

/// `tracing` filter directives that keep rmcp's per-request lines out of a server's log;
/// add them to your filter (`EnvFilter` or `Targets` syntax, comma-separated).
///
/// rmcp, which serves the protocol underneath, logs every request: an INFO line as each
/// stateless request's service starts (with the client's `clientInfo` and capabilities)
/// and two as it ends, and a WARN line, `response error`, with the whole JSON-RPC error
/// for every request answered with one (the native 2026-07-28 path of
/// [`http`] writes its request, result and `response error` lines
/// under the same target, without the INFO lines). A client sending bad input fills a WARN-level log
/// with one line per request (and the INFO lines carry what the client wrote). These
/// directives keep rmcp's service and HTTP-transport targets at ERROR; mrtr's own lines
/// (rate-limited, without client text) are unaffected. The examples apply them unless
/// `RUST_LOG` names rmcp or asks for `debug`/`trace` (then you get everything).
///
/// ```
/// assert!(mrtr_runtime::server::RMCP_LOG_DIRECTIVES.contains("rmcp::service=error"));
/// // e.g. tracing_subscriber::EnvFilter::new(format!("info,{RMCP_LOG_DIRECTIVES}"))
/// ```
pub const RMCP_LOG_DIRECTIVES: &str =
    "rmcp::service=error,rmcp::transport::streamable_http_server=error";

pub use build_error::BuildError;
pub use builder::McpServerBuilder;
pub use legacy::DEFAULT_LEGACY_REQUEST_TIMEOUT;
pub use listing::INPUT_KINDS_META_KEY;
pub use mcp_server::{McpServer, NoFallback};
pub use mrtr::StaleStatePolicy;
pub use principal::{Principal, PrincipalResolver};
pub use round::{DEFAULT_MAX_ROUNDS_PER_CALL, DEFAULT_ROUND_TIMEOUT};
pub use scopes::{GrantedScopes, REQUIRED_SCOPES_META_KEY};
pub(crate) use scopes::{MissingScopes, ScopeCheck};

#[cfg(test)]
mod tests {
    use super::builder::check_states;
    use super::*;
    use crate::machine::{AppStates, MachineDescriptor, StateRequirement};
    use crate::token::KeyRing;
    use rmcp::model::Tool;

    fn purge_needing_a_u8() -> MachineDescriptor {
        let schema = serde_json::json!({"type": "object"})
            .as_object()
            .unwrap()
            .clone();
        let mut descriptor = MachineDescriptor::tool(Tool::new("purge", "d", schema), [], 1);
        descriptor.states = vec![StateRequirement::of::<u8>()];
        descriptor
    }

    #[test]
    fn a_machine_whose_state_is_not_registered_is_named_in_the_error() {
        let descriptor = purge_needing_a_u8();
        let mut states = AppStates::default();
        states.insert(String::from("not the u8"));
        let error = check_states([&descriptor].into_iter(), &states).unwrap_err();
        assert!(
            matches!(&error, BuildError::MissingState { machine, state } if machine == "purge" && state.contains("u8")),
            "{error:?}"
        );
        states.insert(7u8);
        assert!(check_states([&descriptor].into_iter(), &states).is_ok());
    }

    #[test]
    fn the_audience_is_the_server_name_unless_set() {
        let keys = KeyRing::generate_process_local().unwrap();
        let named = McpServer::builder("billing")
            .keys(keys.clone())
            .build()
            .unwrap();
        assert_eq!(named.audience(), "billing");
        let set = McpServer::builder("billing")
            .audience("billing.example.com")
            .keys(keys)
            .build()
            .unwrap();
        assert_eq!(set.audience(), "billing.example.com");
    }
}
