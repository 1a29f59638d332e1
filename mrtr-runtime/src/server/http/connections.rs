//! Connections and streams against the process's file descriptors: the default caps
//! (derived from the open-file limit) and a connection's slot, which a long-lived stream
//! gives back early; and what is left to do once the connections are done.

use std::sync::Arc;

use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;

use super::endpoint::{Answering, Routes};
use crate::server::ledger::recording::{DEFAULT_FLUSH_TIMEOUT, RecordFlush};
use crate::server::principal::ClientAddress;

/// What serving does once its connections are done: cancel the work still running, then
/// write the outcomes still queued for the round ledger (replies do not wait for them).
pub(super) struct Stopping {
    pub(super) cancel: CancellationToken,
    /// The server's queued ledger records, when it has a ledger.
    pub(super) records: Option<RecordFlush>,
}

impl Stopping {
    pub(super) async fn stop(self) {
        self.cancel.cancel();
        if let Some(records) = self.records {
            records.flush(DEFAULT_FLUSH_TIMEOUT).await;
        }
    }
}

/// One connection's service: each of its requests carries the connection's slot and its
/// counted client address, and is answered by the bound server's [`Routes`].
pub(super) struct Connection {
    pub(super) routes: Routes,
    pub(super) slot: ConnectionSlot,
    pub(super) address: Option<ClientAddress>,
}

impl hyper::service::Service<http::Request<hyper::body::Incoming>> for Connection {
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = Answering;

    fn call(&self, mut request: http::Request<hyper::body::Incoming>) -> Answering {
        request.extensions_mut().insert(self.slot.clone());
        if let Some(address) = self.address {
            request.extensions_mut().insert(address);
        }
        self.routes.answer(request)
    }
}

/// Upper bound of the default [`HttpServing::max_connections`](super::HttpServing::max_connections).
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Upper bound of the default [`HttpServing::max_streams`](super::HttpServing::max_streams).
pub const DEFAULT_MAX_STREAMS: usize = 512;

/// A connection's place under [`HttpServing::max_connections`](super::HttpServing::max_connections), reachable from its
/// requests so a long-lived stream can give it back early.
#[derive(Clone)]
pub(super) struct ConnectionSlot(Arc<std::sync::Mutex<Option<OwnedSemaphorePermit>>>);

impl ConnectionSlot {
    /// The slot `permit` holds, until [`release`](Self::release) or the last clone drops.
    pub(super) fn new(permit: OwnedSemaphorePermit) -> Self {
        Self(Arc::new(std::sync::Mutex::new(Some(permit))))
    }

    /// Frees the slot (once; later calls do nothing).
    pub(super) fn release(&self) {
        let permit = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        drop(permit);
    }
}

/// 1024 connections, or half the open-file limit when that is lower, leaving the other
/// half for the application's own files and sockets.
pub(super) fn default_max_connections() -> usize {
    connection_cap(open_file_limit())
}

/// 512 long-lived streams, or a quarter of the open-file limit when that is lower (the
/// connections take up to half).
pub(super) fn default_max_streams() -> usize {
    stream_cap(open_file_limit())
}

fn stream_cap(limit: Option<u64>) -> usize {
    match limit {
        Some(limit) => {
            let quarter = usize::try_from(limit / 4).unwrap_or(usize::MAX);
            DEFAULT_MAX_STREAMS.min(quarter).max(1)
        }
        None => DEFAULT_MAX_STREAMS,
    }
}

/// The default cap for a process whose soft open-file limit is `limit` (`None`: unlimited
/// or unknown).
fn connection_cap(limit: Option<u64>) -> usize {
    match limit {
        Some(limit) => {
            let half = usize::try_from(limit / 2).unwrap_or(usize::MAX);
            DEFAULT_MAX_CONNECTIONS.min(half).max(1)
        }
        None => DEFAULT_MAX_CONNECTIONS,
    }
}

/// This process's soft limit on open files (unlimited reads as `RLIM_INFINITY`, far above
/// any cap).
fn open_file_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit only writes the struct we pass.
        #[allow(unsafe_code)]
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
        if ok {
            #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every unix
            return Some(limit.rlim_cur as u64);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_cap_is_half_the_open_file_limit_up_to_1024() {
        assert_eq!(connection_cap(Some(100)), 50);
        assert_eq!(connection_cap(Some(2_049)), 1_024);
        assert_eq!(connection_cap(Some(1_000_000)), DEFAULT_MAX_CONNECTIONS);
        assert_eq!(connection_cap(Some(u64::MAX)), DEFAULT_MAX_CONNECTIONS);
        assert_eq!(connection_cap(Some(1)), 1);
        assert_eq!(connection_cap(Some(0)), 1);
        assert_eq!(connection_cap(None), DEFAULT_MAX_CONNECTIONS);
        assert_eq!(default_max_connections(), connection_cap(open_file_limit()));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_open_file_limit_is_the_soft_limit_the_kernel_reports() {
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
        let line = limits
            .lines()
            .find(|line| line.starts_with("Max open files"))
            .unwrap();
        let soft = line.split_whitespace().nth(3).unwrap();
        let expected = match soft {
            "unlimited" => Some(libc::RLIM_INFINITY),
            number => number.parse().ok(),
        };
        assert_eq!(open_file_limit(), expected, "{line}");
    }
}
