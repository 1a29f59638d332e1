//! Process-wide budgets no single client can drain: the bytes request bodies hold while
//! they are read ([`BodyBudget`]), and the connections one client address may hold
//! ([`PerAddress`]).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;

/// Default [`HttpServing::max_buffered_body_bytes`](super::HttpServing::max_buffered_body_bytes).
pub const DEFAULT_MAX_BUFFERED_BODY_BYTES: usize = 64 * 1024 * 1024;
/// Default [`HttpServing::max_connections_per_address`](super::HttpServing::max_connections_per_address).
pub const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS: usize = 64;

/// A body of at most this many bytes is still read when the buffered-bytes budget is spent,
/// if it arrives whole within [`SMALL_BODY_GRACE`]: fast clients with ordinary requests are
/// served while slow ones hold the budget. What such bodies hold is counted beyond the
/// budget, at most this much per connection and only for that long.
pub(super) const SMALL_BODY_BYTES: usize = 64 * 1024;
/// How long a small body may take to arrive when the budget is spent (a client that writes
/// its head and body separately may see its body delayed by a round trip).
pub(super) const SMALL_BODY_GRACE: Duration = Duration::from_millis(100);

/// The bytes all request bodies being read may hold at once.
#[derive(Debug)]
pub(super) struct BodyBudget {
    held: AtomicUsize,
    max: usize,
}

impl BodyBudget {
    pub(super) fn new(max: usize) -> Arc<Self> {
        Arc::new(BodyBudget {
            held: AtomicUsize::new(0),
            max,
        })
    }

    /// The budget's size.
    pub(super) fn max(&self) -> usize {
        self.max
    }

    /// Bytes held now.
    pub(super) fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }

    /// An empty reservation, to grow as a body arrives.
    pub(super) fn reservation(self: &Arc<Self>) -> Reservation {
        Reservation {
            budget: self.clone(),
            bytes: 0,
        }
    }

    /// Takes `bytes` if they fit; never waits.
    fn take(&self, bytes: usize) -> bool {
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                held.checked_add(bytes).filter(|&total| total <= self.max)
            })
            .is_ok()
    }
}

/// Bytes one body holds in the [`BodyBudget`]; given back when dropped.
#[derive(Debug)]
pub(super) struct Reservation {
    budget: Arc<BodyBudget>,
    bytes: usize,
}

impl Reservation {
    /// Makes sure this reservation covers `bytes` in all, taking the difference from the
    /// budget; `false` (and nothing taken) when it does not fit.
    pub(super) fn cover(&mut self, bytes: usize) -> bool {
        let more = bytes.saturating_sub(self.bytes);
        if more == 0 {
            return true;
        }
        if !self.budget.take(more) {
            return false;
        }
        self.bytes += more;
        true
    }

    /// Makes this reservation cover `bytes` in all even past the budget's size (for bytes
    /// already here, which the budget only counts).
    pub(super) fn overdraw(&mut self, bytes: usize) {
        let more = bytes.saturating_sub(self.bytes);
        self.budget.held.fetch_add(more, Ordering::AcqRel);
        self.bytes += more;
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.budget.held.fetch_sub(self.bytes, Ordering::AcqRel);
        }
    }
}

/// `chunks` as one buffer of `total` bytes.
pub(super) fn concatenated(mut chunks: Vec<Bytes>, total: usize) -> Bytes {
    if chunks.len() <= 1 {
        return chunks.pop().unwrap_or_default();
    }
    let mut whole = BytesMut::with_capacity(total);
    for chunk in chunks {
        whole.extend_from_slice(&chunk);
    }
    whole.freeze()
}

/// `bytes` as a request body that keeps `held` in the budget until it is dropped.
pub(super) fn held_body(bytes: Bytes, held: Reservation) -> Body {
    Body::new(http_body_util::Full::new(bytes).map_err(
        move |never: std::convert::Infallible| -> std::convert::Infallible {
            let _held = &held;
            match never {}
        },
    ))
}

/// Open connections per client IP address.
#[derive(Debug)]
pub(super) struct PerAddress {
    open: Mutex<HashMap<IpAddr, usize>>,
    max: usize,
    /// Whether loopback peers are counted too. By default they are not: a loopback peer is
    /// this machine (a reverse proxy on the same host, local tools), where one address
    /// stands for every client.
    include_loopback: bool,
}

impl PerAddress {
    pub(super) fn new(max: usize, include_loopback: bool) -> Arc<Self> {
        Arc::new(PerAddress {
            open: Mutex::new(HashMap::new()),
            max: max.max(1),
            include_loopback,
        })
    }

    pub(super) fn max(&self) -> usize {
        self.max
    }

    /// A place for one more connection from `ip`, or `None` when it holds `max` already.
    pub(super) fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<AddressSlot> {
        let ip = client_of(ip);
        // `usize::MAX` turns per-address counting off (behind a reverse proxy every client
        // shares its address): nothing is counted by address then, here or per caller.
        if (ip.is_loopback() && !self.include_loopback) || self.max == usize::MAX {
            return Some(AddressSlot { table: None, ip });
        }
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let count = open.entry(ip).or_insert(0);
        if *count >= self.max {
            return None;
        }
        *count += 1;
        Some(AddressSlot {
            table: Some(self.clone()),
            ip,
        })
    }

    /// Connections open now from the client `ip` stands for (0 when it is not counted).
    pub(super) fn open(&self, ip: IpAddr) -> usize {
        let open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        open.get(&client_of(ip)).copied().unwrap_or(0)
    }
}

/// The client an address stands for: an IPv4 client on a dual-stack socket is the same
/// client as over IPv4, and an IPv6 client is its /64 (one host is routinely given a whole
/// /64, so counting single addresses would let it rotate past every per-address cap).
pub(super) fn client_of(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let prefix = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(std::net::Ipv6Addr::from(prefix))
        }
        v4 => v4,
    }
}

/// A connection's place under its address's cap (none for an uncounted loopback peer);
/// given back when dropped.
#[derive(Debug)]
pub(super) struct AddressSlot {
    table: Option<Arc<PerAddress>>,
    ip: IpAddr,
}

impl AddressSlot {
    /// The address this slot counts against, `None` for an uncounted loopback peer.
    pub(super) fn counted(&self) -> Option<IpAddr> {
        self.table.as_ref().map(|_| self.ip)
    }
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let Some(table) = &self.table else { return };
        let mut open = table.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = open.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ipv6_client_is_its_slash_64_and_a_mapped_ipv4_client_is_itself() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff:ffff:ffff:ffff".parse().unwrap();
        let other: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(client_of(a), client_of(b));
        assert_ne!(client_of(a), client_of(other));
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        assert_eq!(client_of(mapped), "192.0.2.7".parse::<IpAddr>().unwrap());
        let table = PerAddress::new(1, false);
        let _held = table.admit(a).unwrap();
        assert!(table.admit(b).is_none(), "the same /64 shares one cap");
        assert!(table.admit(other).is_some());
        let off = PerAddress::new(usize::MAX, false);
        assert_eq!(
            off.admit(a).unwrap().counted(),
            None,
            "usize::MAX counts nothing"
        );
    }

    #[test]
    fn reservations_fit_the_budget_and_give_it_back_when_dropped() {
        let budget = BodyBudget::new(100);
        let mut first = budget.reservation();
        assert!(first.cover(60));
        assert!(first.cover(40)); // already covered
        let mut second = budget.reservation();
        assert!(!second.cover(41));
        assert_eq!(budget.held(), 60);
        assert!(second.cover(40));
        assert!(!second.cover(41));
        assert_eq!(budget.held(), 100);
        drop(first);
        assert_eq!(budget.held(), 40);
        assert!(second.cover(100));
        drop(second);
        assert_eq!(budget.held(), 0);
        assert!(!budget.reservation().cover(usize::MAX));
        let mut over = budget.reservation();
        assert!(over.cover(100));
        let mut small = budget.reservation();
        assert!(!small.cover(10));
        small.overdraw(10);
        assert_eq!(budget.held(), 110);
        drop((over, small));
        assert_eq!(budget.held(), 0);
    }

    #[test]
    fn each_address_gets_its_own_cap_and_slots_come_back() {
        let table = PerAddress::new(2, true);
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let one = table.admit(a).unwrap();
        let two = table.admit(mapped).unwrap();
        assert!(table.admit(a).is_none());
        let other = table.admit(b).unwrap();
        assert_eq!(table.open(a), 2);
        drop(one);
        let three = table.admit(a).unwrap();
        drop((two, three, other));
        assert_eq!(table.open(a), 0);
        assert!(table.open.lock().unwrap().is_empty());
    }

    #[test]
    fn loopback_peers_are_not_counted_unless_asked() {
        let table = PerAddress::new(1, false);
        let local: IpAddr = "127.0.0.1".parse().unwrap();
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        let remote: IpAddr = "192.0.2.7".parse().unwrap();
        let held: Vec<AddressSlot> = (0..5)
            .map(|i| {
                table
                    .admit(if i % 2 == 0 { local } else { mapped })
                    .unwrap()
            })
            .collect();
        assert_eq!(table.open(local), 0);
        let first = table.admit(remote).unwrap();
        assert!(table.admit(remote).is_none(), "a remote address is capped");
        drop((held, first));
        assert!(table.open.lock().unwrap().is_empty());
    }
}
