//! The native path for 2026-07-28 (stateless) requests: the body the gate has read is
//! parsed once, here, checked on the parsed value, handed straight to the [`McpServer`]'s
//! own request handling, and the reply is written into one buffer as plain JSON.
//!
//! No rmcp session or service machinery runs on this path: no `StreamableHttpService`, no
//! service task, transport or channel per request, no second parse of the body and no
//! rewrite of the response afterwards.
//!
//! It serves what the server answers itself (its machines' `tools/call`, `prompts/get` and
//! `resources/read`; with no fallback handler, every method it reads here, listings,
//! `server/discover` and `tasks/*` included), for a request that a conforming 2026-07-28 client sends:
//! one JSON-RPC request whose `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers
//! agree with its body, whose `_meta` carries the protocol version and capabilities, with
//! an allowed `Host` and no `Origin`. Anything else — a request a fallback handler answers
//! (it may stream, or talk to its peer), a browser's request (its `Origin` is checked
//! there), a malformed or mismatched one (the errors are answered there, word for word) —
//! takes the rmcp path behind the same gate, so both paths answer every request alike and
//! the native one never decides an error rmcp would word differently.

use std::any::TypeId;
use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;

use axum::response::Response;
use futures::FutureExt as _;
use futures::future::{BoxFuture, Either};
use http::{HeaderMap, HeaderName, header};
use rmcp::model::{
    CallToolResponse, ClientCapabilities, ClientRequest, ErrorCode, Extensions, GetExtensions as _,
    GetMeta as _, ProtocolVersion, RequestId, RequestMetaObject, ServerResult,
};
use rmcp::service::{RequestContext, Service as _};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::budget::Reservation;
use super::envelope::{Envelope, Params};
use super::inflight::Principals;
use super::reading::typed_request;
use super::responding::Answering;
use crate::server::mcp_server::{DeclaredCapabilities, RecordSlot, StampedOnWrite, declares_tasks};
use crate::server::{McpServer, NoFallback};

/// The target rmcp logs requests under: the native path logs its requests there too, so
/// the log filters written for rmcp ([`RMCP_LOG_DIRECTIVES`](crate::server::RMCP_LOG_DIRECTIVES))
/// keep working.
pub(super) const RMCP_SERVICE: &str = "rmcp::service";

/// The headers a 2026-07-28 request repeats from its body (names made once, not parsed
/// from text at each lookup).
static MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
static MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
static MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// What `Mcp-Name` starts with when its value is Base64-encoded (SEP-2243).
const BASE64_HEADER_PREFIX: &str = "=?base64?";

/// A request the native path serves: its id and its typed request.
pub(super) struct Prepared {
    id: RequestId,
    request: ClientRequest,
    /// What its `_meta` declares, decoded when it was checked.
    capabilities: ClientCapabilities,
}

/// The native path of one router: what it checks requests against, and the server.
pub(super) struct Stateless {
    server: Arc<dyn NativeServer>,
    /// The `Host` values served, as rmcp reads its list.
    hosts: AllowedHosts,
    principals: Arc<Principals>,
    /// Cancelled when the server stops: in-flight requests end with an internal error.
    cancel: CancellationToken,
}

impl Stateless {
    pub(super) fn new<F>(
        server: McpServer<F>,
        allowed_hosts: &[String],
        principals: Arc<Principals>,
        cancel: CancellationToken,
    ) -> Arc<Self>
    where
        F: ServerHandler + Send + Sync + 'static,
    {
        Arc::new(Stateless {
            server: Arc::new(NativeMcp::new(server)),
            hosts: AllowedHosts::new(allowed_hosts),
            principals,
            cancel,
        })
    }

    /// The typed request, when this path serves it (see the module docs); `None` sends it
    /// the rmcp way.
    pub(super) fn prepare(
        &self,
        parts: &http::request::Parts,
        envelope: Envelope<'_>,
    ) -> Option<Prepared> {
        let Envelope {
            jsonrpc,
            id,
            method,
            params,
            answers,
        } = envelope;
        if jsonrpc != "2.0" || answers {
            return None;
        }
        let id = id?;
        let method = method.as_deref()?;
        let headers = &parts.headers;
        if headers.contains_key(header::ORIGIN)
            || !self.allows_host(parts)
            || !accepts_json_and_event_stream(headers)
        {
            return None;
        }
        let version = sole(headers, &MCP_PROTOCOL_VERSION)?;
        if version < ProtocolVersion::V_2026_07_28.as_str()
            || !self.server.supports(version)
            || sole(headers, &MCP_METHOD)? != method
        {
            return None;
        }
        let (request, meta) = match params {
            Params::Read(read) => *read,
            Params::Raw(params) => typed_request(method, Some(params))?,
            Params::Absent => typed_request(method, None)?,
        };
        // The `_meta` keys 2026-07-28 requires (rmcp's `missing_required_keys`), each decoded
        // once: the capabilities go on with the request. The version is compared as the
        // string it is (rmcp's read takes any string as it is), not decoded.
        if meta.protocol_version.as_deref() != Some(version) {
            return None;
        }
        let capabilities = meta.client_capabilities?;
        if let Some(name) = addressed(&request) {
            let header = sole(headers, &MCP_NAME)?;
            if header.starts_with(BASE64_HEADER_PREFIX) || header != name {
                return None;
            }
        }
        self.server.serves_itself(&request).then_some(Prepared {
            id,
            request,
            capabilities,
        })
    }

    /// Serves a prepared request: the server's answer as one JSON body. `held` (the body's
    /// bytes in the buffered-bytes budget) is given back once the answer is made. One box
    /// holds the whole of it.
    pub(super) fn serve(
        &self,
        prepared: Prepared,
        parts: http::request::Parts,
        held: Reservation,
    ) -> BoxFuture<'static, Response> {
        let Prepared {
            id,
            mut request,
            capabilities,
        } = prepared;
        tracing::debug!(target: RMCP_SERVICE, %id, ?request, "received request");
        let mut meta = RequestMetaObject::new();
        std::mem::swap(&mut meta, request.get_meta_mut());
        // The HTTP parts, where rmcp puts them: the principal resolver reads them there.
        request.extensions_mut().insert(parts);
        let mut context = RequestContext::new(id.clone(), self.principals.detached_peer());
        context.ct = self.cancel.child_token();
        context.meta = meta;
        context.extensions = std::mem::replace(request.extensions_mut(), Extensions::new());
        context
            .extensions
            .insert(DeclaredCapabilities(capabilities));
        let answering = Answering {
            id,
            held,
            cancel: self.cancel.clone(),
        };
        self.server.serve(request, context, answering)
    }

    /// Whether a request with these headers may be one this path serves (it names a
    /// 2026-07-28+ protocol version): its round-trip params are then worth reading with its
    /// envelope.
    pub(super) fn may_serve(&self, headers: &HeaderMap) -> bool {
        sole(headers, &MCP_PROTOCOL_VERSION)
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28.as_str())
    }

    fn allows_host(&self, parts: &http::request::Parts) -> bool {
        let authority = match parts.headers.get(header::HOST) {
            Some(host) => host
                .to_str()
                .ok()
                .and_then(|host| http::uri::Authority::try_from(host).ok()),
            None => parts.uri.authority().cloned(),
        };
        let Some(authority) = authority else {
            return false;
        };
        self.hosts
            .allows(&normalized_host(authority.host()), authority.port_u16())
    }
}

/// The `Host` values served, read as rmcp reads its `allowed_hosts`: an entry without a
/// port allows any port; an empty list allows every host, but a list of blank entries
/// (which rmcp skips) allows none.
struct AllowedHosts {
    /// The list was empty: every host is allowed.
    any: bool,
    hosts: Vec<(String, Option<u16>)>,
}

impl AllowedHosts {
    fn new(allowed_hosts: &[String]) -> Self {
        AllowedHosts {
            any: allowed_hosts.is_empty(),
            hosts: allowed_hosts
                .iter()
                .filter_map(|allowed| allowed_authority(allowed))
                .collect(),
        }
    }

    /// Whether `host` (normalized) and `port` are served.
    fn allows(&self, host: &str, port: Option<u16>) -> bool {
        self.any
            || self.hosts.iter().any(|(allowed, allowed_port)| {
                allowed == host && allowed_port.is_none_or(|allowed| Some(allowed) == port)
            })
    }
}

/// The request types the native path reads, by method.
/// What `Mcp-Name` must carry for `request` (SEP-2243), if the method names something.
fn addressed(request: &ClientRequest) -> Option<&str> {
    Some(match request {
        ClientRequest::CallToolRequest(request) => &request.params.name,
        ClientRequest::GetPromptRequest(request) => &request.params.name,
        ClientRequest::ReadResourceRequest(request) => &request.params.uri,
        ClientRequest::GetTaskRequest(request) => &request.params.task_id,
        ClientRequest::UpdateTaskRequest(request) => &request.params.task_id,
        ClientRequest::CancelTaskRequest(request) => &request.params.task_id,
        _ => return None,
    })
}

/// The one value of header `name`, as text; `None` when it is absent, repeated or not text.
fn sole<'h>(headers: &'h HeaderMap, name: &HeaderName) -> Option<&'h str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}

/// Whether `Accept` names both `application/json` and `text/event-stream` plainly (no
/// parameters, no quotes: those take the rmcp path, which weighs them).
fn accepts_json_and_event_stream(headers: &HeaderMap) -> bool {
    let (mut json, mut event_stream) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let value = value.as_bytes();
        // What clients send, word for word (the spec's own example): nothing to take apart.
        if value == b"application/json, text/event-stream" {
            (json, event_stream) = (true, true);
            continue;
        }
        // Visible ASCII only (what `HeaderValue::to_str` takes), and no parameters or
        // quoted strings: one pass over the bytes.
        if value.iter().any(|&byte| {
            matches!(byte, b';' | b'"') || !(byte == b'\t' || (32..127).contains(&byte))
        }) {
            return false;
        }
        for entry in value.split(|&byte| byte == b',') {
            let essence = entry.trim_ascii();
            json |= essence.eq_ignore_ascii_case(b"application/json");
            event_stream |= essence.eq_ignore_ascii_case(b"text/event-stream");
        }
    }
    json && event_stream
}

/// An allowed-hosts entry as rmcp reads it: `host[:port]`, brackets and case dropped.
fn allowed_authority(allowed: &str) -> Option<(String, Option<u16>)> {
    let allowed = allowed.trim();
    if allowed.is_empty() {
        return None;
    }
    Some(match http::uri::Authority::try_from(allowed) {
        Ok(authority) => (normalized_host(authority.host()), authority.port_u16()),
        Err(_) => (normalized_host(allowed), None),
    })
}

fn normalized_host(host: &str) -> String {
    host.trim_matches('[')
        .trim_matches(']')
        .to_ascii_lowercase()
}

/// The server as the native path uses it (the router is not generic over the fallback).
trait NativeServer: Send + Sync + 'static {
    /// Whether the server serves protocol `version` (else rmcp words the refusal).
    fn supports(&self, version: &str) -> bool;

    /// Whether the server answers `request` itself, without its fallback handler (which may
    /// stream, or need a connected peer).
    fn serves_itself(&self, request: &ClientRequest) -> bool;

    /// The response to a request, the server answering it as rmcp's service would
    /// dispatch it.
    fn serve(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
        answering: Answering,
    ) -> BoxFuture<'static, Response>;
}

struct NativeMcp<F> {
    server: McpServer<F>,
    /// No fallback handler: the server answers every method itself.
    alone: bool,
    /// Tools whose input schema has `x-mcp-header` annotations: their `Mcp-Param-*`
    /// headers are checked on the rmcp path.
    with_param_headers: HashSet<String>,
    /// The protocol versions the server serves.
    versions: Vec<ProtocolVersion>,
}

impl<F: ServerHandler + Send + Sync + 'static> NativeMcp<F> {
    fn new(server: McpServer<F>) -> Self {
        let with_param_headers = server
            .inner
            .tools
            .iter()
            .map(|machine| machine.descriptor().name())
            .filter(|name| {
                ServerHandler::get_tool(&server, name).is_none_or(|tool| {
                    serde_json::to_string(&tool.input_schema)
                        .map_or(true, |schema| schema.contains("x-mcp-header"))
                })
            })
            .map(str::to_owned)
            .collect();
        NativeMcp {
            alone: TypeId::of::<F>() == TypeId::of::<NoFallback>(),
            versions: ServerHandler::supported_protocol_versions(&server).into_owned(),
            server,
            with_param_headers,
        }
    }
}

impl<F: ServerHandler + Send + Sync + 'static> NativeServer for NativeMcp<F> {
    fn supports(&self, version: &str) -> bool {
        self.versions
            .iter()
            .any(|served| served.as_str() == version)
    }

    fn serves_itself(&self, request: &ClientRequest) -> bool {
        let inner = &self.server.inner;
        match request {
            ClientRequest::CallToolRequest(call) => {
                let name = call.params.name.as_ref();
                !self.with_param_headers.contains(name)
                    && (self.alone || inner.tools.get(name).is_some())
            }
            ClientRequest::GetPromptRequest(get) => {
                self.alone || inner.prompts.get(&get.params.name).is_some()
            }
            ClientRequest::ReadResourceRequest(read) => {
                self.alone || inner.resources.get(&read.params.uri).is_some()
            }
            ClientRequest::GetTaskRequest(_)
            | ClientRequest::UpdateTaskRequest(_)
            | ClientRequest::CancelTaskRequest(_) => self.alone || inner.tasks.is_some(),
            _ => self.alone,
        }
    }

    /// The answer and its response in one box (not one per layer).
    fn serve(
        &self,
        request: ClientRequest,
        mut context: RequestContext<RoleServer>,
        answering: Answering,
    ) -> BoxFuture<'static, Response> {
        // The response's writer stamps the result (no copy of the stamp's values into it),
        // and with a ledger writes a recorded round's reply from its record.
        let mrtr = &self.server.inner.mrtr;
        let record_slot = mrtr.rounds.is_some().then(RecordSlot::default);
        context
            .extensions
            .insert(StampedOnWrite(record_slot.clone()));
        let stamp = Arc::clone(&mrtr.stamp);
        let handled = handle(self.server.clone(), request, context);
        Box::pin(
            answering
                .respond(handled, stamp, record_slot)
                .in_current_span(),
        )
    }
}

/// The server's answer to `request`: tool calls, prompts and resource reads go straight to
/// the server's handler, as rmcp's dispatch would send a request
/// [`prepare`](Stateless::prepare) let through (a served 2026-07-28+ version, complete
/// `_meta`), with the checks its dispatch makes after the handler; anything else goes
/// through rmcp's dispatch.
///
/// Not an `async fn`: its future would keep the request and its context twice (as
/// parameters and as the locals they move into) around the handler's own future, which
/// holds them already.
fn handle<F: ServerHandler + Send + Sync + 'static>(
    server: McpServer<F>,
    request: ClientRequest,
    context: RequestContext<RoleServer>,
) -> impl Future<Output = Result<ServerResult, ErrorData>> + Send + 'static {
    type Answer = Result<ServerResult, ErrorData>;
    let answer = match request {
        ClientRequest::CallToolRequest(call) => {
            let declared_tasks = declares_tasks(&context);
            let calling = server.calling_tool(call.params, context);
            Either::Left(Either::Left(calling.map(move |response| {
                let response = response?;
                // SEP-2663, as rmcp checks it: no task for a client that cannot read one.
                if matches!(response, CallToolResponse::Task(_)) && !declared_tasks {
                    return Err(ErrorData::missing_required_client_capability(
                        ClientCapabilities::builder().enable_tasks().build(),
                    ));
                }
                Ok(ServerResult::from(response))
            })))
        }
        ClientRequest::GetPromptRequest(get) => Either::Left(Either::Right(
            server
                .getting_prompt(get.params, context)
                .map(|response| response.map(ServerResult::from)),
        )),
        ClientRequest::ReadResourceRequest(read) => Either::Right(
            server
                .reading_resource(read.params, context)
                .map(|response| response.map(ServerResult::from)),
        ),
        // Boxed, and not checked below (rmcp's dispatch makes its own checks): its future
        // is kilobytes, and the common path above would carry it too.
        other => {
            let dispatched: BoxFuture<'static, Answer> =
                Box::pin(async move { server.handle_request(other, context).await });
            return Either::Right(dispatched);
        }
    };
    Either::Left(answer.map(|answer: Answer| {
        answer
            .map(|mut result| {
                result.fill_missing_cache_hints();
                result
            })
            .map_err(|mut error| {
                if error.code == ErrorCode::RESOURCE_NOT_FOUND {
                    error.code = ErrorCode::INVALID_PARAMS;
                }
                error
            })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_must_name_both_plainly() {
        let with = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::ACCEPT, http::HeaderValue::from_static(value));
            accepts_json_and_event_stream(&headers)
        };
        assert!(with("application/json, text/event-stream"));
        assert!(with("Text/Event-Stream,application/JSON"));
        assert!(!with("application/json"));
        assert!(!with("*/*"));
        assert!(!with("application/json;q=0, text/event-stream"));
        assert!(!with("\"application/json\", text/event-stream"));
        assert!(with("application/json,\ttext/event-stream "));
        // Across several Accept headers, as rmcp reads them.
        let mut headers = HeaderMap::new();
        headers.append(
            header::ACCEPT,
            http::HeaderValue::from_static("application/json"),
        );
        headers.append(
            header::ACCEPT,
            http::HeaderValue::from_static("text/event-stream"),
        );
        assert!(accepts_json_and_event_stream(&headers));
        // A value that is not visible ASCII is not read at all.
        let mut headers = HeaderMap::new();
        let odd = b"application/json, text/event-stream, \xe9";
        headers.insert(header::ACCEPT, http::HeaderValue::from_bytes(odd).unwrap());
        assert!(!accepts_json_and_event_stream(&headers));
    }

    #[test]
    fn allowed_hosts_read_as_rmcp_reads_them() {
        assert_eq!(
            allowed_authority("LocalHost"),
            Some(("localhost".into(), None))
        );
        assert_eq!(
            allowed_authority("[::1]:8080"),
            Some(("::1".into(), Some(8080)))
        );
        assert_eq!(allowed_authority("  "), None);
    }

    #[test]
    fn an_empty_host_list_allows_every_host_and_a_blank_one_none() {
        let list = |hosts: &[&str]| {
            AllowedHosts::new(&hosts.iter().map(|h| h.to_string()).collect::<Vec<_>>())
        };
        assert!(list(&[]).allows("evil.example", Some(80)));
        assert!(!list(&[""]).allows("localhost", None));
        assert!(!list(&["  ", ""]).allows("evil.example", Some(80)));
        let some = list(&["", "mcp.example.com", "127.0.0.1:8080"]);
        assert!(some.allows("mcp.example.com", Some(443)));
        assert!(some.allows("127.0.0.1", Some(8080)));
        assert!(!some.allows("127.0.0.1", Some(8081)));
        assert!(!some.allows("evil.example", None));
    }
}
