//! Serving an [`McpServer`] over Streamable HTTP with production defaults: one call
//! instead of wiring rmcp, axum and hyper by hand.
//!
//! ```no_run
//! # async fn run(server: mrtr_runtime::server::McpServer) -> std::io::Result<()> {
//! // Serves http://127.0.0.1:8080/mcp until SIGTERM or ctrl-c, then finishes in-flight requests.
//! mrtr_runtime::server::http::serve(server, "127.0.0.1:8080".parse().unwrap()).await
//! # }
//! ```
//!
//! # Defaults, and why
//!
//! | knob | default | what it bounds |
//! | --- | --- | --- |
//! | [`header_read_timeout`](HttpServing::header_read_timeout) | 10 s | a client that sends its request head slowly or not at all (slowloris); hyper runs this clock whenever a connection waits for a request head, so it is also the **idle keep-alive timeout** |
//! | [`body_timeout`](HttpServing::body_timeout) | 30 s | the whole request body must arrive within this deadline (not per chunk), else `408` and the connection closes: a stalled upload cannot pin its buffer |
//! | [`max_body_bytes`](HttpServing::max_body_bytes) | 1 MiB | a larger body gets `413` before it is buffered (rmcp's own default is 4 MiB); room for a 64 KiB `requestState` plus large arguments and answers |
//! | [`max_buffered_body_bytes`](HttpServing::max_buffered_body_bytes) | 64 MiB | the bytes all request bodies being read may hold at once, process-wide: a declared `Content-Length` is reserved before the body is read, a chunked body as it grows, and given back when the body is dropped. A body that does not fit gets `503` at once (JSON-RPC error naming `max_buffered_body_bytes`, `Retry-After: 1`, connection closed) instead of waiting for room, so stalled uploads cannot hold more than this; a small body (up to 64 KiB) that arrives whole within 100 ms is still read when the budget is spent, counted beyond it, so fast clients are served while slow ones hold the budget. Read live by [`HttpStats::buffered_body_bytes`]; never below `max_body_bytes` |
//! | [`max_connections`](HttpServing::max_connections) | 1024, at most half the process's open-file limit | past it, new connections wait in the kernel's backlog instead of exhausting file descriptors |
//! | [`max_connections_per_address`](HttpServing::max_connections_per_address) | 64 | connections one client IP address may hold open (loopback peers are not counted unless [`per_address_includes_loopback`](HttpServing::per_address_includes_loopback): a loopback peer is this machine, e.g. a same-host proxy); past it a new connection from that address is answered `503` naming `max_connections_per_address` and closed, without taking one of the `max_connections` slots, so one address's slow or idle connections (slowloris) cannot take them all. **Behind a reverse proxy every client shares the proxy's address**: raise it to about `max_connections`, or disable it with `usize::MAX` (which also stops counting anonymous callers' requests, tasks and streams by address). An IPv6 client counts as its /64 |
//! | [`max_in_flight_per_principal`](HttpServing::max_in_flight_per_principal) | 64 | POST requests one caller may have in flight at once (from its body read until its response starts): a principal, or an anonymous caller (or an `Authorization` header nothing verified, which a client could vary per request) by its client address (counted as for `max_connections_per_address`); past it `429` with `Retry-After: 1` and a JSON-RPC error naming `max_in_flight_per_principal`, so one caller's slow tools cannot take every worker |
//! | [`allowed_origins`](HttpServing::allowed_origins) | loopback (`http(s)://localhost`, `127.0.0.1`, `[::1]`, any port) | a request with any other `Origin` gets `403` (DNS rebinding; the transport spec's MUST); requests without `Origin` (non-browser clients) pass |
//! | [`allowed_hosts`](HttpServing::allowed_hosts) | loopback | the `Host` header; set your public name when behind a proxy |
//! | [`shutdown_grace`](HttpServing::shutdown_grace) | 30 s | after SIGTERM/ctrl-c no new connection is accepted; in-flight requests get this long to finish |
//! | [`max_sessions`](HttpServing::max_sessions) | 4096 | live legacy sessions in the process; an `initialize` past it gets `503` with a JSON-RPC error naming `max_sessions` (an idle session costs about 52 KiB of RSS, most of it rmcp's session worker and service task, so the default bounds them near 210 MiB; measured by `tests/legacy_sessions.rs`, which also shows the memory returned after they expire) |
//! | [`max_sessions_per_principal`](HttpServing::max_sessions_per_principal) | 64 | live legacy sessions one principal (the server's principal resolver: a `Principal` extension or a salted hash of `Authorization`) may hold; past it `429` naming `max_sessions_per_principal`. Anonymous callers (no principal) are bounded by `max_sessions` only |
//! | [`session_idle_timeout`](HttpServing::session_idle_timeout) | 5 min | a legacy session with no traffic for this long ends, and its pending calls with it (their streams close, their machines are cancelled); its id then gets `404`. Pending calls waiting for a person count as idle: keep it longer than [`legacy_request_timeout`](super::McpServerBuilder::legacy_request_timeout) (240 s by default), so an unanswered question ends its call with a clear error first |
//! | [`max_streams`](HttpServing::max_streams) | 512, at most a quarter of the open-file limit | long-lived streams (legacy GET streams and legacy `tools/call`/`prompts/get`/`resources/read` streams) open at once; past it `503` naming `max_streams`. A stream **gives its connection slot back**: it never counts against `max_connections`, and its connection closes when it ends |
//! | [`max_streams_per_session`](HttpServing::max_streams_per_session) | 16 | long-lived streams one legacy session may hold (its pending calls plus GET streams); past it `429` naming `max_streams_per_session` |
//! | [`max_streams_per_principal`](HttpServing::max_streams_per_principal) | 64 | the same across one principal's sessions (an anonymous caller's: across its client address's, counted as for `max_connections_per_address`), so it bounds one caller's **pending legacy calls**; `429` naming `max_streams_per_principal` |
//! | [`session_node`](HttpServing::session_node) | none | a name prefixed to session ids (`n1.…`) so a balancer can route a session back to its node (see the README's scale-out section) |
//!
//! A 2026-07-28 request the server answers itself is served natively (`stateless.rs`): its
//! body is parsed once, checked on the parsed value, handed straight to the server's own
//! request handling and answered as one plain JSON body, with no rmcp session or service
//! machinery per request. Requests a fallback handler answers (they may stream), browser
//! requests (an `Origin` to check), malformed or mismatched ones and legacy sessions go
//! through rmcp's Streamable HTTP service behind the same gate and limits.
//!
//! Always on: `TCP_NODELAY` on accepted sockets (without it a reply's last small write
//! waits ~40 ms for a delayed ACK), JSON responses for results that stream nothing first
//! (rmcp's SSE framing costs more CPU), HTTP/1.1 only, stateless 2026-07-28 serving beside
//! Streamable HTTP sessions for clients that open with `initialize` (2025-11-25 and older;
//! unless [`McpServerBuilder::legacy_sessions`](super::McpServerBuilder::legacy_sessions)
//! is off — then the discovery result advertises only 2026-07-28), and every error as a JSON-RPC
//! error body: `-32700` for a body that is not JSON (or not UTF-8), `-32600` for a batch,
//! a wrong `jsonrpc`, an id that is not a string or integer, more than one
//! `Authorization` header, or more than one `Mcp-Session-Id` header, with HTTP 400.
//!
//! Legacy sessions are bound to the principal that opened them: a request on a session
//! from any other principal gets exactly what an unknown session gets (`404`, "Session not
//! found"). Session ids never reach the logs: rmcp is given a 12-digit hash of each
//! (`sessions::tag`), which is all its INFO lines show. `DELETE` of a session answers
//! `204` (python-sdk 1.x accepts only 200 or 204; rmcp answers 202).
//!
//! [`HttpServing::into_router`] gives the endpoint as an [`axum::Router`] to merge with
//! your own routes (an approval page, health checks) or wrap in your auth layer; serve
//! it with [`HttpServing::serve`]/[`HttpServing::bind`] to get the connection-level
//! limits too.

#[cfg(feature = "auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub mod auth;
mod budget;
mod connections;
mod detach;
mod endpoint;
mod envelope;
mod gate;
mod inflight;
mod posting;
mod reading;
mod responding;
mod sessions;
mod shared_rmcp;
mod stateless;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::principal::ClientAddress;
use super::{McpServer, NoFallback};
use budget::{BodyBudget, PerAddress};
pub use budget::{DEFAULT_MAX_BUFFERED_BODY_BYTES, DEFAULT_MAX_CONNECTIONS_PER_ADDRESS};
use connections::{
    Connection, ConnectionSlot, Stopping, default_max_connections, default_max_streams,
};
pub use connections::{DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_STREAMS};
pub use inflight::DEFAULT_MAX_IN_FLIGHT_PER_PRINCIPAL;
use shared_rmcp::SharedRmcp;

/// Default [`HttpServing::header_read_timeout`].
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Default [`HttpServing::body_timeout`].
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// Default [`HttpServing::max_body_bytes`].
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// Default [`HttpServing::shutdown_grace`].
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// Default [`HttpServing::max_sessions`].
pub const DEFAULT_MAX_SESSIONS: usize = 4096;
/// Default [`HttpServing::max_sessions_per_principal`].
pub const DEFAULT_MAX_SESSIONS_PER_PRINCIPAL: usize = 64;
/// Default [`HttpServing::session_idle_timeout`].
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// Default [`HttpServing::max_streams_per_session`].
pub const DEFAULT_MAX_STREAMS_PER_SESSION: usize = 16;
/// Default [`HttpServing::max_streams_per_principal`].
pub const DEFAULT_MAX_STREAMS_PER_PRINCIPAL: usize = 64;
/// The path the MCP endpoint is served at unless [`HttpServing::path`] says otherwise.
pub const DEFAULT_PATH: &str = "/mcp";

/// Origins a local server accepts by default: loopback, any port, http or https.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// Serves `server` at `http://{addr}/mcp` with the defaults of [`HttpServing`] until
/// SIGTERM or ctrl-c, then finishes in-flight requests.
///
/// ```no_run
/// # async fn run(server: mrtr_runtime::server::McpServer) -> std::io::Result<()> {
/// mrtr_runtime::server::http::serve(server, "127.0.0.1:8080".parse().unwrap()).await
/// # }
/// ```
pub async fn serve<F>(server: McpServer<F>, addr: SocketAddr) -> std::io::Result<()>
where
    F: ServerHandler + Send + Sync + 'static,
{
    HttpServing::new(server).serve(addr).await
}

/// How an [`McpServer`] is served over HTTP: the knobs, with safe defaults (see the
/// [module docs](self) for each default and what it bounds).
///
/// ```no_run
/// # async fn run(server: mrtr_runtime::server::McpServer) -> std::io::Result<()> {
/// use std::time::Duration;
/// use mrtr_runtime::server::http::HttpServing;
///
/// HttpServing::new(server)
///     .body_timeout(Duration::from_secs(10))
///     .max_body_bytes(256 * 1024)
///     .allowed_origins(["https://app.example.com:443"])
///     .allowed_hosts(["mcp.example.com"])
///     .serve("127.0.0.1:8080".parse().unwrap())
///     .await
/// # }
/// ```
pub struct HttpServing<F = NoFallback> {
    server: McpServer<F>,
    path: String,
    header_read_timeout: Duration,
    body_timeout: Duration,
    max_body_bytes: usize,
    max_connections: Option<usize>,
    max_buffered_body_bytes: usize,
    max_connections_per_address: usize,
    per_address_includes_loopback: bool,
    max_in_flight_per_principal: usize,
    allowed_origins: Vec<String>,
    allowed_hosts: Option<Vec<String>>,
    shutdown_grace: Duration,
    max_sessions: usize,
    max_sessions_per_principal: usize,
    session_idle_timeout: Duration,
    max_streams: Option<usize>,
    max_streams_per_session: usize,
    max_streams_per_principal: usize,
    session_node: Option<String>,
    #[cfg(feature = "auth")]
    auth: Option<auth::ResourceServer>,
}

impl<F> HttpServing<F>
where
    F: ServerHandler + Send + Sync + 'static,
{
    /// Starts from the defaults.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server);
    /// ```
    pub fn new(server: McpServer<F>) -> Self {
        HttpServing {
            server,
            path: DEFAULT_PATH.to_string(),
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_connections: None,
            max_buffered_body_bytes: DEFAULT_MAX_BUFFERED_BODY_BYTES,
            max_connections_per_address: DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
            per_address_includes_loopback: false,
            max_in_flight_per_principal: DEFAULT_MAX_IN_FLIGHT_PER_PRINCIPAL,
            allowed_origins: LOOPBACK_ORIGINS.iter().map(|o| o.to_string()).collect(),
            allowed_hosts: None,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_sessions_per_principal: DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
            session_idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
            max_streams: None,
            max_streams_per_session: DEFAULT_MAX_STREAMS_PER_SESSION,
            max_streams_per_principal: DEFAULT_MAX_STREAMS_PER_PRINCIPAL,
            session_node: None,
            #[cfg(feature = "auth")]
            auth: None,
        }
    }

    /// Requires an OAuth 2.1 bearer access token on every request to the endpoint, and
    /// serves the Protected Resource Metadata (feature `auth`; see [`auth`]).
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// use mrtr_runtime::server::http::{HttpServing, auth::ResourceServer};
    /// let serving = HttpServing::new(server).auth(
    ///     ResourceServer::new("https://mcp.example.com/mcp".parse().unwrap())
    ///         .authorization_server("https://auth.example.com"),
    /// );
    /// ```
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    pub fn auth(mut self, resource: auth::ResourceServer) -> Self {
        self.auth = Some(resource);
        self
    }

    /// The path of the MCP endpoint (default `/mcp`).
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server).path("/v1/mcp");
    /// ```
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// How long a connection may take to send a complete request head, counted from when
    /// it starts waiting for one; also closes idle keep-alive connections (default 10 s).
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server)
    ///     .header_read_timeout(std::time::Duration::from_secs(5));
    /// ```
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// The deadline for a whole request body, from when the head was read (default 30 s).
    /// Past it the client gets `408` and the connection closes.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server)
    ///     .body_timeout(std::time::Duration::from_secs(10));
    /// ```
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// The largest request body accepted (default 1 MiB); larger ones get `413`.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server).max_body_bytes(4 << 20);
    /// ```
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// How many connections are served at once (default 1024, lowered to half the
    /// process's open-file limit). Further connections wait in the listen backlog.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server).max_connections(256);
    /// ```
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = Some(connections.max(1));
        self
    }

    /// How many bytes all request bodies being read may hold at once, process-wide
    /// (default 64 MiB, never below [`max_body_bytes`](Self::max_body_bytes)). A request
    /// whose declared `Content-Length` (or, chunked, whose body so far) does not fit gets
    /// `503` at once, naming `max_buffered_body_bytes`, with `Retry-After`; a body of up to
    /// 64 KiB that arrives whole within 100 ms is still read (counted beyond the budget).
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server)
    ///     .max_buffered_body_bytes(16 << 20);
    /// ```
    pub fn max_buffered_body_bytes(mut self, bytes: usize) -> Self {
        self.max_buffered_body_bytes = bytes;
        self
    }

    /// How many connections one client IP address may hold open (default 64; at least 1).
    /// Past it a new connection from that address gets `503` naming
    /// `max_connections_per_address` and is closed, without taking a
    /// [`max_connections`](Self::max_connections) slot. Loopback peers are not counted
    /// unless [`per_address_includes_loopback`](Self::per_address_includes_loopback): a
    /// loopback peer is this machine (a reverse proxy on the same host, local clients),
    /// where one address stands for every client. Behind a reverse proxy on another host
    /// all clients share its address too: raise this, or pass `usize::MAX` to turn it off.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// // Behind nginx: every request arrives from the proxy's address.
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server)
    ///     .max_connections_per_address(usize::MAX);
    /// ```
    pub fn max_connections_per_address(mut self, connections: usize) -> Self {
        self.max_connections_per_address = connections;
        self
    }

    /// How many POST requests one caller may have in flight at once (default
    /// [`DEFAULT_MAX_IN_FLIGHT_PER_PRINCIPAL`], 64; at least 1), from when its body is read
    /// until its response starts. A caller is its principal (the server's principal
    /// resolver) or, anonymous, its client address (loopback addresses only with
    /// [`per_address_includes_loopback`](Self::per_address_includes_loopback)). Past it the
    /// request gets `429` with `Retry-After: 1` and a JSON-RPC error (`-32000`) naming
    /// `max_in_flight_per_principal`; other callers are not affected. A legacy session's
    /// pending calls are held to [`max_streams_per_principal`](Self::max_streams_per_principal)
    /// once their stream opens.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server)
    ///     .max_in_flight_per_principal(16);
    /// ```
    pub fn max_in_flight_per_principal(mut self, requests: usize) -> Self {
        self.max_in_flight_per_principal = requests;
        self
    }

    /// Counts loopback peers (`127.0.0.0/8`, `::1`) against
    /// [`max_connections_per_address`](Self::max_connections_per_address) too (default: not
    /// counted). For a server only local clients reach directly, or to test the cap.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server)
    ///     .max_connections_per_address(8)
    ///     .per_address_includes_loopback(true);
    /// ```
    pub fn per_address_includes_loopback(mut self, include: bool) -> Self {
        self.per_address_includes_loopback = include;
        self
    }

    /// The browser origins allowed to call the endpoint, replacing the loopback default;
    /// e.g. `"https://app.example.com:443"` (`:*` matches any port, `"null"` matches
    /// `Origin: null`). A request with any other `Origin` gets `403`; one without an
    /// `Origin` header passes. An empty list refuses every request that has one.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server)
    ///     .allowed_origins(["https://app.example.com:443"]);
    /// ```
    pub fn allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// The `Host` names (optionally `host:port`) accepted, replacing the loopback default:
    /// set the public name when serving behind a proxy.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server)
    ///     .allowed_hosts(["mcp.example.com"]);
    /// ```
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// How long in-flight requests may take to finish after a shutdown signal (default 30 s).
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server)
    ///     .shutdown_grace(std::time::Duration::from_secs(5));
    /// ```
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// How many legacy sessions may be live at once (default 4096); an `initialize` past
    /// it gets `503` with a JSON-RPC error naming `max_sessions`.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server).max_sessions(10_000);
    /// ```
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// How many legacy sessions one principal may hold (default 64); past it `429` naming
    /// `max_sessions_per_principal`. Callers without a principal are bounded by
    /// [`max_sessions`](Self::max_sessions) only.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server).max_sessions_per_principal(8);
    /// ```
    pub fn max_sessions_per_principal(mut self, sessions: usize) -> Self {
        self.max_sessions_per_principal = sessions;
        self
    }

    /// How long a legacy session may go without traffic before it ends with its pending
    /// calls (default 5 minutes). A call waiting for a person's answer is no traffic.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server)
    ///     .session_idle_timeout(std::time::Duration::from_secs(600));
    /// ```
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.session_idle_timeout = timeout;
        self
    }

    /// How many long-lived streams (legacy GET streams and pending legacy calls) may be
    /// open at once (default 512, lowered to a quarter of the open-file limit). They have
    /// this budget of their own and give their connection slot back, so they never keep
    /// short requests out; past it `503` naming `max_streams`.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server).max_streams(128);
    /// ```
    pub fn max_streams(mut self, streams: usize) -> Self {
        self.max_streams = Some(streams);
        self
    }

    /// How many long-lived streams one legacy session may hold (default 16); past it `429`
    /// naming `max_streams_per_session`.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server).max_streams_per_session(4);
    /// ```
    pub fn max_streams_per_session(mut self, streams: usize) -> Self {
        self.max_streams_per_session = streams;
        self
    }

    /// How many long-lived streams (pending legacy calls and GET streams) one principal may
    /// hold across its sessions (default 64); past it `429` naming
    /// `max_streams_per_principal`. An anonymous caller is counted by its client address
    /// (loopback only with [`per_address_includes_loopback`](Self::per_address_includes_loopback)).
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server).max_streams_per_principal(16);
    /// ```
    pub fn max_streams_per_principal(mut self, streams: usize) -> Self {
        self.max_streams_per_principal = streams;
        self
    }

    /// This node's name, prefixed to every legacy session id (`{node}.{random}`), so a
    /// balancer can send a session's requests to the node that holds it (the README's
    /// scale-out section has the nginx rule). Letters, digits and `-` only.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let serving = mrtr_runtime::server::http::HttpServing::new(server).session_node("n1");
    /// ```
    pub fn session_node(mut self, node: impl Into<String>) -> Self {
        let node: String = node
            .into()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        self.session_node = (!node.is_empty()).then_some(node);
        self
    }

    /// The MCP endpoint as a router, with the request-level protections (Origin and Host
    /// checks, body cap and deadline, JSON-RPC errors). Merge your own routes into it;
    /// the connection-level limits come with [`serve`](Self::serve)/[`bind`](Self::bind).
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let router = mrtr_runtime::server::http::HttpServing::new(server)
    ///     .into_router()
    ///     .route("/healthz", axum::routing::get(|| async { "ok" }));
    /// ```
    pub fn into_router(self) -> axum::Router {
        self.router_and_token(CancellationToken::new())
            .0
            .into_router()
    }

    fn router_and_token(
        self,
        cancel: CancellationToken,
    ) -> (endpoint::Routes, CancellationToken, HttpStats) {
        let legacy = self.server.serves_legacy_sessions();
        let mut config = StreamableHttpServerConfig::default()
            // 2026-07-28 requests always stand alone; an `initialize` opens a session (for
            // legacy clients) only when those are served.
            .with_legacy_session_mode(legacy)
            // Plain JSON unless a handler streams notifications first.
            .with_json_response(true)
            // Requests without MCP-Protocol-Version / `_meta` are refused up front.
            .with_stateless_protocol_metadata_required(true)
            .with_max_request_body_bytes(self.max_body_bytes)
            .with_allowed_origins(self.allowed_origins)
            .enforce_origin_validation()
            .with_cancellation_token(cancel.clone());
        if let Some(hosts) = self.allowed_hosts {
            config = config.with_allowed_hosts(hosts);
        }
        let principals = inflight::Principals::new(self.server.inner.principal.clone());
        let in_flight =
            inflight::InFlight::new(principals.clone(), self.max_in_flight_per_principal);
        let stateless = stateless::Stateless::new(
            self.server.clone(),
            &config.allowed_hosts,
            principals.clone(),
            cancel.clone(),
        );
        let server = self.server;
        let (rmcp, legacy) = if legacy {
            let sessions = Arc::new(sessions::Sessions::new(sessions::SessionLimits {
                max_sessions: self.max_sessions,
                max_sessions_per_principal: self.max_sessions_per_principal.max(1),
                idle_timeout: self.session_idle_timeout,
                node: self.session_node,
            }));
            let streams = sessions::Streams::new(
                self.max_streams.unwrap_or_else(default_max_streams),
                self.max_streams_per_session,
                self.max_streams_per_principal,
            );
            let mcp =
                StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), config);
            (
                endpoint::Next::new(SharedRmcp::new(mcp)),
                Some(Arc::new(gate::Legacy::new(sessions, streams, principals))),
            )
        } else {
            let mcp = StreamableHttpService::new(
                move || Ok(server.clone()),
                Arc::new(NeverSessionManager::default()),
                config,
            );
            (endpoint::Next::new(SharedRmcp::new(mcp)), None)
        };
        let bodies = BodyBudget::new(self.max_buffered_body_bytes.max(self.max_body_bytes));
        let stats = HttpStats {
            per_address: None,
            legacy: legacy.clone(),
            bodies: bodies.clone(),
            in_flight: in_flight.clone(),
        };
        let gate = gate::Gate {
            limits: gate::Limits {
                body_timeout: self.body_timeout,
                max_body_bytes: self.max_body_bytes,
            },
            bodies,
            in_flight,
            legacy,
            stateless,
            detached_work: Arc::new(tokio::sync::Semaphore::new(
                self.max_connections.unwrap_or_else(default_max_connections),
            )),
        };
        #[cfg(feature = "auth")]
        let (guard, metadata) = auth::guard(self.auth);
        #[cfg(not(feature = "auth"))]
        let metadata = None;
        let endpoint = endpoint::McpEndpoint::new(
            gate,
            self.max_body_bytes,
            rmcp,
            #[cfg(feature = "auth")]
            guard,
        );
        let routes = endpoint::Routes::new(endpoint, &self.path, metadata);
        (routes, cancel, stats)
    }

    /// Binds `addr`; serve with [`BoundHttp::serve`] or [`BoundHttp::serve_until`].
    ///
    /// ```no_run
    /// # async fn run(server: mrtr_runtime::server::McpServer) -> std::io::Result<()> {
    /// let bound = mrtr_runtime::server::http::HttpServing::new(server)
    ///     .bind("127.0.0.1:0".parse().unwrap())
    ///     .await?;
    /// println!("serving on http://{}/mcp", bound.local_addr());
    /// bound.serve().await
    /// # }
    /// ```
    pub async fn bind(self, addr: SocketAddr) -> std::io::Result<BoundHttp> {
        let listener = TcpListener::bind(addr).await?;
        self.with_listener(listener)
    }

    /// Like [`bind`](Self::bind), on a listener you bound yourself.
    ///
    /// ```no_run
    /// # async fn run(server: mrtr_runtime::server::McpServer) -> std::io::Result<()> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// let bound = mrtr_runtime::server::http::HttpServing::new(server).with_listener(listener)?;
    /// # Ok(()) }
    /// ```
    pub fn with_listener(self, listener: TcpListener) -> std::io::Result<BoundHttp> {
        let local_addr = listener.local_addr()?;
        let max_connections = self.max_connections.unwrap_or_else(default_max_connections);
        let header_read_timeout = self.header_read_timeout;
        let (shutdown_grace, records) = (self.shutdown_grace, self.server.ledger_flush());
        let per_address = PerAddress::new(
            self.max_connections_per_address,
            self.per_address_includes_loopback,
        );
        let (router, cancel, mut stats) = self.router_and_token(CancellationToken::new());
        stats.per_address = Some(per_address.clone());
        Ok(BoundHttp {
            stats,
            per_address,
            listener,
            local_addr,
            router,
            cancel: Stopping { cancel, records },
            max_connections,
            header_read_timeout,
            shutdown_grace,
        })
    }

    /// Binds `addr` and serves until SIGTERM or ctrl-c, then finishes in-flight requests.
    ///
    /// ```no_run
    /// # async fn run(server: mrtr_runtime::server::McpServer) -> std::io::Result<()> {
    /// mrtr_runtime::server::http::HttpServing::new(server)
    ///     .serve("127.0.0.1:8080".parse().unwrap())
    ///     .await
    /// # }
    /// ```
    pub async fn serve(self, addr: SocketAddr) -> std::io::Result<()> {
        self.bind(addr).await?.serve().await
    }
}

/// A bound, not yet serving, HTTP endpoint (from [`HttpServing::bind`]).
///
/// ```no_run
/// # async fn run(server: mrtr_runtime::server::McpServer) -> std::io::Result<()> {
/// let bound = mrtr_runtime::server::http::HttpServing::new(server)
///     .bind("127.0.0.1:0".parse().unwrap())
///     .await?;
/// let addr = bound.local_addr();
/// bound.serve_until(async { /* your own shutdown signal */ }).await
/// # }
/// ```
pub struct BoundHttp {
    stats: HttpStats,
    per_address: Arc<PerAddress>,
    listener: TcpListener,
    local_addr: SocketAddr,
    router: endpoint::Routes,
    cancel: Stopping,
    max_connections: usize,
    header_read_timeout: Duration,
    shutdown_grace: Duration,
}

impl BoundHttp {
    /// The address actually bound (useful with port 0).
    ///
    /// ```no_run
    /// # async fn run(bound: mrtr_runtime::server::http::BoundHttp) {
    /// println!("http://{}/mcp", bound.local_addr());
    /// # }
    /// ```
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Live counts (legacy sessions, long-lived streams, buffered body bytes), readable
    /// while serving.
    ///
    /// ```no_run
    /// # async fn run(bound: mrtr_runtime::server::http::BoundHttp) {
    /// let stats = bound.stats();
    /// tokio::spawn(bound.serve());
    /// println!("{} legacy sessions live", stats.live_sessions());
    /// # }
    /// ```
    pub fn stats(&self) -> HttpStats {
        self.stats.clone()
    }

    /// The connection cap in effect.
    ///
    /// ```no_run
    /// # async fn run(bound: mrtr_runtime::server::http::BoundHttp) {
    /// assert!(bound.max_connections() >= 1);
    /// # }
    /// ```
    pub fn max_connections(&self) -> usize {
        self.max_connections
    }

    /// Serves until SIGTERM or ctrl-c, then stops accepting and lets in-flight requests
    /// finish (up to the shutdown grace).
    ///
    /// ```no_run
    /// # async fn run(bound: mrtr_runtime::server::http::BoundHttp) -> std::io::Result<()> {
    /// bound.serve().await
    /// # }
    /// ```
    pub async fn serve(self) -> std::io::Result<()> {
        self.serve_until(shutdown_signal()).await
    }

    /// Serves until `shutdown` completes, then stops accepting, lets in-flight requests
    /// finish (up to the shutdown grace) and writes the queued ledger records (up to 5 s).
    ///
    /// ```no_run
    /// # async fn run(bound: mrtr_runtime::server::http::BoundHttp, stop: tokio::sync::oneshot::Receiver<()>) -> std::io::Result<()> {
    /// bound.serve_until(async { let _ = stop.await; }).await
    /// # }
    /// ```
    pub async fn serve_until(self, shutdown: impl Future<Output = ()>) -> std::io::Result<()> {
        let BoundHttp {
            listener,
            router,
            cancel,
            max_connections,
            header_read_timeout,
            shutdown_grace,
            per_address,
            ..
        } = self;
        let mut http1 = hyper::server::conn::http1::Builder::new();
        http1
            .timer(TokioTimer::new())
            .header_read_timeout(header_read_timeout);
        let graceful = GracefulShutdown::new();
        let slots = Arc::new(Semaphore::new(max_connections));
        let accept_errors = crate::server::ratelimit::RateLimited::new(Duration::from_secs(10));
        let crowded = crate::server::ratelimit::RateLimited::new(Duration::from_secs(60));
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            // Take a slot before accepting: past the cap, connections wait in the backlog
            // and use no descriptor in this process.
            let slot = tokio::select! {
                slot = slots.clone().acquire_owned() => match slot {
                    Ok(slot) => slot,
                    Err(_) => break,
                },
                () = &mut shutdown => break,
            };
            let (stream, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        // E.g. EMFILE: back off instead of spinning, and say so rarely.
                        accept_errors.warn(|skipped| {
                            tracing::warn!(%error, skipped, "accepting a connection failed");
                        });
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            // An address at its cap is refused at once; its slot goes back untouched.
            let Some(address_slot) = per_address.admit(peer.ip()) else {
                drop(slot);
                refuse_crowded(stream, per_address.max(), &crowded);
                continue;
            };
            let _ = stream.set_nodelay(true);
            // The slot goes with the connection's requests, so a long-lived stream can
            // hand it back (gate.rs).
            let slot = ConnectionSlot::new(slot);
            let service = Connection {
                routes: router.clone(),
                slot: slot.clone(),
                address: address_slot.counted().map(ClientAddress),
            };
            let connection = http1.serve_connection(TokioIo::new(stream), service);
            let connection = graceful.watch(connection);
            tokio::spawn(async move {
                if let Err(error) = connection.await {
                    // Mostly a client that left (reset, closed mid-request): not an error here.
                    tracing::debug!(%error, "a connection ended with an error");
                }
                slot.release();
                drop(address_slot);
            });
        }
        // Refuse new connections from here on.
        drop(listener);
        tokio::select! {
            () = graceful.shutdown() => {}
            () = tokio::time::sleep(shutdown_grace) => {
                tracing::warn!(grace = ?shutdown_grace, "connections still open after the shutdown grace; closing them");
            }
        }
        cancel.stop().await;
        Ok(())
    }
}

/// Answers a connection from an address at its
/// [`max_connections_per_address`](HttpServing::max_connections_per_address) with `503`
/// and closes it, without reading from it or waiting to write.
fn refuse_crowded(
    stream: tokio::net::TcpStream,
    limit: usize,
    crowded: &crate::server::ratelimit::RateLimited,
) {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32000,
            "message": format!(
                "this client address is at its limit of {limit} connections \
                 (max_connections_per_address); close some first"
            ),
        },
    })
    .to_string();
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    // A fresh socket's send buffer takes this whole; if not, the client sees the close.
    let _ = stream.try_write(response.as_bytes());
    drop(stream);
    crowded.warn(|skipped| {
        tracing::warn!(
            limit,
            skipped,
            "refused a connection: its client address is at max_connections_per_address"
        );
    });
}

/// Live counts of an HTTP endpoint (from [`BoundHttp::stats`]); cheap to clone.
#[derive(Clone)]
pub struct HttpStats {
    /// Set once the endpoint is bound (a router served by other means has no accept loop).
    per_address: Option<Arc<PerAddress>>,
    legacy: Option<Arc<gate::Legacy>>,
    bodies: Arc<BodyBudget>,
    in_flight: Arc<inflight::InFlight>,
}

impl HttpStats {
    /// Bytes request bodies hold now against
    /// [`max_buffered_body_bytes`](HttpServing::max_buffered_body_bytes) (declared
    /// lengths of bodies being read, and bodies read but not yet dropped).
    ///
    /// ```no_run
    /// # fn run(stats: mrtr_runtime::server::http::HttpStats) {
    /// assert_eq!(stats.buffered_body_bytes(), 0);
    /// # }
    /// ```
    pub fn buffered_body_bytes(&self) -> usize {
        self.bodies.held()
    }

    /// POST requests in flight now from counted callers (principals, and anonymous callers
    /// with a counted client address), against
    /// [`max_in_flight_per_principal`](HttpServing::max_in_flight_per_principal).
    ///
    /// ```no_run
    /// # fn run(stats: mrtr_runtime::server::http::HttpStats) {
    /// assert_eq!(stats.in_flight_requests(), 0);
    /// # }
    /// ```
    pub fn in_flight_requests(&self) -> usize {
        self.in_flight.total()
    }

    /// Connections open now from a client address, as counted against
    /// [`max_connections_per_address`](HttpServing::max_connections_per_address) (0 for an
    /// address that is not counted, e.g. loopback by default; an IPv6 client is its /64).
    ///
    /// ```no_run
    /// # fn run(stats: mrtr_runtime::server::http::HttpStats) {
    /// assert!(stats.connections_from("192.0.2.7".parse().unwrap()) <= 64);
    /// # }
    /// ```
    pub fn connections_from(&self, address: std::net::IpAddr) -> usize {
        self.per_address
            .as_ref()
            .map_or(0, |per_address| per_address.open(address))
    }

    /// Legacy sessions live now (0 when legacy sessions are off).
    ///
    /// ```no_run
    /// # fn run(stats: mrtr_runtime::server::http::HttpStats) {
    /// assert_eq!(stats.live_sessions(), 0);
    /// # }
    /// ```
    pub fn live_sessions(&self) -> usize {
        self.legacy
            .as_ref()
            .map_or(0, |legacy| legacy.sessions.live())
    }

    /// Long-lived streams (legacy GET streams, pending legacy calls) open now.
    ///
    /// ```no_run
    /// # fn run(stats: mrtr_runtime::server::http::HttpStats) {
    /// assert_eq!(stats.open_streams(), 0);
    /// # }
    /// ```
    pub fn open_streams(&self) -> usize {
        self.legacy
            .as_ref()
            .map_or(0, |legacy| legacy.streams.open())
    }
}

/// Completes on ctrl-c, or on SIGTERM on unix.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    {
        let terminate = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut signal) => {
                    signal.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            () = ctrl_c => {}
            () = terminate => {}
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins_name_every_loopback_host() {
        for host in ["localhost", "127.0.0.1", "[::1]"] {
            assert!(LOOPBACK_ORIGINS.contains(&format!("http://{host}:*").as_str()));
            assert!(LOOPBACK_ORIGINS.contains(&format!("https://{host}:*").as_str()));
        }
    }
}
