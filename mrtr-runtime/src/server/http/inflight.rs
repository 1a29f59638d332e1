//! Who a request counts against, and how many requests one caller may have in flight.
//!
//! A caller is its principal (the server's principal resolver) or, when there is none or it
//! is an `Authorization` header nothing verified, its counted client address ([`ClientAddress`], set by the accept loop); a request with
//! neither (an uncounted loopback peer, a router served by other means) is not counted.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use rmcp::RoleServer;
use rmcp::model::RequestId;
use rmcp::service::{Peer, RequestContext, RunningService};

use super::sessions::{Owner, Refusal};
use crate::server::principal::{
    ClientAddress, Resolved, default_principal_of, is_default_resolver, is_unverified_credential,
};
use crate::server::{NoFallback, PrincipalResolver};

/// Default [`HttpServing::max_in_flight_per_principal`](super::HttpServing::max_in_flight_per_principal).
///
/// ```
/// assert_eq!(mrtr_runtime::server::http::DEFAULT_MAX_IN_FLIGHT_PER_PRINCIPAL, 64);
/// ```
pub const DEFAULT_MAX_IN_FLIGHT_PER_PRINCIPAL: usize = 64;

/// The server's principal resolver, run on a request's HTTP parts.
pub(super) struct Principals {
    resolver: PrincipalResolver,
    /// The resolver is the default one: it reads the parts as they are.
    default: bool,
    /// A peer for the resolver's `RequestContext` (it reads the request parts; this peer
    /// is connected to nothing).
    detached: OnceLock<RunningService<RoleServer, NoFallback>>,
}

impl Principals {
    pub(super) fn new(resolver: PrincipalResolver) -> Arc<Self> {
        Arc::new(Principals {
            default: is_default_resolver(&resolver),
            resolver,
            detached: OnceLock::new(),
        })
    }

    /// A peer connected to nothing, for a `RequestContext` no handler talks back through
    /// (the resolver's here; the native path's, whose handlers never do).
    pub(super) fn detached_peer(&self) -> Peer<RoleServer> {
        self.detached
            .get_or_init(|| rmcp::service::serve_directly(NoFallback, Detached, None))
            .peer()
            .clone()
    }

    /// The principal the server's resolver finds for a request with these parts. The
    /// resolver runs once per request: its answer stays on the parts, where the server's
    /// own principal lookup finds it ([`principal_of`](crate::server::principal::principal_of)).
    pub(super) fn owner(&self, parts: &mut http::request::Parts) -> Owner {
        if let Some(Resolved(principal)) = parts.extensions.get::<Resolved>() {
            return principal.as_deref().map(Arc::from);
        }
        if self.default {
            let principal = default_principal_of(parts);
            parts.extensions.insert(Resolved(principal.clone()));
            return principal.map(Arc::from);
        }
        // The resolver reads the parts where rmcp keeps them, in the request context:
        // lent there for the call rather than copied.
        let mut context = RequestContext::new(RequestId::Number(0), self.detached_peer());
        let (unlent, ()) = http::Request::new(()).into_parts();
        context.extensions.insert(std::mem::replace(parts, unlent));
        let principal = (self.resolver)(&context);
        if let Some(lent) = context.extensions.remove::<http::request::Parts>() {
            *parts = lent;
        }
        parts.extensions.insert(Resolved(principal.clone()));
        principal.map(Arc::from)
    }

    /// Whom a request counts against: its principal, else its counted client address.
    pub(super) fn caller(&self, parts: &mut http::request::Parts) -> Option<Arc<str>> {
        let owner = self.owner(parts);
        caller(owner, parts)
    }
}

/// Whom a request of `owner` (its principal, resolved already) counts against: the
/// principal, else the request's counted client address, else no one. An `Authorization`
/// header nothing verified is not a caller of its own (a client could send a fresh one per
/// request): it counts by its address when the request has one.
pub(super) fn caller(owner: Owner, parts: &http::request::Parts) -> Option<Arc<str>> {
    let address = parts.extensions.get::<ClientAddress>();
    match (owner, address) {
        (Some(principal), Some(ClientAddress(ip))) if is_unverified_credential(&principal) => {
            Some(format!("address:{ip}").into())
        }
        (Some(principal), _) => Some(format!("principal:{principal}").into()),
        (None, Some(ClientAddress(ip))) => Some(format!("address:{ip}").into()),
        (None, None) => None,
    }
}

/// A transport that carries nothing, for [`Principals::owner`]'s peer.
struct Detached;

impl rmcp::transport::Transport<RoleServer> for Detached {
    type Error = std::io::Error;

    fn send(
        &mut self,
        _item: rmcp::service::TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        std::future::ready(Ok(()))
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleServer>> {
        std::future::pending().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// Requests in flight per caller, each caller capped.
pub(super) struct InFlight {
    principals: Arc<Principals>,
    max: usize,
    counts: Mutex<HashMap<Arc<str>, usize>>,
}

impl InFlight {
    pub(super) fn new(principals: Arc<Principals>, max: usize) -> Arc<Self> {
        Arc::new(InFlight {
            principals,
            max: max.max(1),
            counts: Mutex::default(),
        })
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, usize>> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Requests in flight now, all callers together (counted callers only).
    pub(super) fn total(&self) -> usize {
        self.counts().values().sum()
    }

    /// A place for one more request of the caller of `parts` (none when that caller is not
    /// counted), or the refusal naming `max_in_flight_per_principal`.
    pub(super) fn admit(
        self: &Arc<Self>,
        parts: &mut http::request::Parts,
    ) -> Result<Option<InFlightPermit>, Refusal> {
        let Some(caller) = self.principals.caller(parts) else {
            return Ok(None);
        };
        let mut counts = self.counts();
        let count = counts.entry(caller.clone()).or_insert(0);
        if *count >= self.max {
            return Err(Refusal::Caller {
                knob: "max_in_flight_per_principal",
                limit: self.max,
            });
        }
        *count += 1;
        Ok(Some(InFlightPermit {
            table: self.clone(),
            caller,
        }))
    }
}

/// One request's place under its caller's cap, given back when dropped.
pub(super) struct InFlightPermit {
    table: Arc<InFlight>,
    caller: Arc<str>,
}

impl Drop for InFlightPermit {
    fn drop(&mut self) {
        let mut counts = self.table.counts();
        if let Some(count) = counts.get_mut(&self.caller) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.caller);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(authorization: Option<&str>, address: Option<[u8; 4]>) -> http::request::Parts {
        let mut request = http::Request::builder();
        if let Some(value) = authorization {
            request = request.header(http::header::AUTHORIZATION, value);
        }
        let (mut parts, ()) = request.body(()).unwrap().into_parts();
        if let Some(ip) = address {
            parts.extensions.insert(ClientAddress(ip.into()));
        }
        parts
    }

    /// A resolver standing for real authentication: the bearer is the subject.
    fn verified(context: &RequestContext<RoleServer>) -> Option<String> {
        let parts = context.extensions.get::<http::request::Parts>()?;
        let bearer = parts.headers.get(http::header::AUTHORIZATION)?;
        Some(format!("verified:{}", bearer.to_str().ok()?))
    }

    #[tokio::test]
    async fn unverified_bearers_count_by_their_address_where_there_is_one() {
        let principals = Principals::new(crate::server::principal::default_resolver());
        let in_flight = InFlight::new(principals, 2);
        let _alice = in_flight.admit(&mut parts(Some("Bearer alice"), Some([10, 0, 0, 1])));
        let _bob = in_flight.admit(&mut parts(Some("Bearer bob"), Some([10, 0, 0, 1])));
        // A third bearer from that address shares its cap: bearers are free to vary.
        assert!(
            in_flight
                .admit(&mut parts(Some("Bearer carol"), Some([10, 0, 0, 1])))
                .is_err()
        );
        // With no counted address, the bearer is all there is to count by.
        let _c1 = in_flight
            .admit(&mut parts(Some("Bearer carol"), None))
            .unwrap();
        let _c2 = in_flight
            .admit(&mut parts(Some("Bearer carol"), None))
            .unwrap();
        assert!(
            in_flight
                .admit(&mut parts(Some("Bearer carol"), None))
                .is_err()
        );
    }

    #[tokio::test]
    async fn each_caller_has_its_cap_uncounted_callers_pass_and_places_come_back() {
        let principals = Principals::new(Arc::new(verified));
        let in_flight = InFlight::new(principals, 2);
        let mut alice = parts(Some("Bearer alice"), Some([10, 0, 0, 1]));
        let first = in_flight.admit(&mut alice).unwrap();
        let _second = in_flight.admit(&mut alice).unwrap();
        assert!(first.is_some());
        let refused = in_flight
            .admit(&mut alice)
            .err()
            .expect("alice is at her cap");
        assert_eq!(
            refused,
            Refusal::Caller {
                knob: "max_in_flight_per_principal",
                limit: 2
            }
        );
        // Same address, another principal; an anonymous address; an uncounted caller.
        assert!(
            in_flight
                .admit(&mut parts(Some("Bearer bob"), Some([10, 0, 0, 1])))
                .is_ok()
        );
        let mut anonymous = parts(None, Some([10, 0, 0, 1]));
        let _a = in_flight.admit(&mut anonymous).unwrap();
        let _b = in_flight.admit(&mut anonymous).unwrap();
        assert!(in_flight.admit(&mut anonymous).is_err());
        for _ in 0..5 {
            assert!(in_flight.admit(&mut parts(None, None)).unwrap().is_none());
        }
        assert_eq!(in_flight.total(), 4);
        drop(first);
        assert!(in_flight.admit(&mut alice).is_ok());
    }
}
