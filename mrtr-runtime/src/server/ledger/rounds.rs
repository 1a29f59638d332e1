//! The server's side of the ledger: claim a round before it runs, keep its lease while it
//! runs, record its outcome, and answer duplicates.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rmcp::ErrorData;
use rmcp::model::InputResponses;

use super::{Claim, ClaimOutcome, LedgerError, Owner, RoundId, RoundLedger, RoundPolicy, digest16};
use crate::server::errors;
use crate::token::canonical_json;

/// The default lease of a running round.
pub(crate) const DEFAULT_LEASE: Duration = Duration::from_secs(30);
/// How long a duplicate presentation waits for the first one's outcome by default.
pub(crate) const DEFAULT_WAIT: Duration = Duration::from_secs(5);

/// The ledger and its timings, as the engine uses them.
pub(crate) struct Rounds {
    pub(crate) ledger: Arc<dyn RoundLedger>,
    pub(crate) lease: Duration,
    pub(crate) wait: Duration,
    /// Set while the ledger is unreachable, so an outage is logged once, not per request.
    down: AtomicBool,
}

/// A round this presentation holds.
pub(crate) struct Held {
    round: RoundId,
    owner: Owner,
}

/// What a claim decided.
pub(crate) enum Claimed {
    /// Run the round (and record it).
    Run(Held),
    /// Answer with this recorded response.
    Answered(Vec<u8>),
    /// Answer with this error; nothing runs.
    Refused(ErrorData),
}

impl Rounds {
    pub(crate) fn new(ledger: Arc<dyn RoundLedger>, lease: Duration, wait: Duration) -> Self {
        Rounds {
            ledger,
            lease,
            wait,
            down: AtomicBool::new(false),
        }
    }

    /// Claims the round sealed in `token` (an opened, authentic token).
    pub(crate) async fn claim(
        &self,
        token: &str,
        expires_at: u32,
        responses: Option<&InputResponses>,
        policy: RoundPolicy,
    ) -> Claimed {
        let claim = Claim {
            round: RoundId::of_token(token),
            owner: Owner::random(),
            lease: self.lease,
            expires_at: u64::from(expires_at),
            answers: answers_digest(responses),
            take_over_expired: policy != RoundPolicy::AtMostOnce,
        };
        let deadline = Instant::now() + self.wait;
        let mut pause = Duration::from_millis(10);
        loop {
            let outcome = match self.ledger.claim(&claim).await {
                Ok(outcome) => {
                    self.reachable();
                    outcome
                }
                Err(error) => {
                    self.unreachable(&error);
                    return Claimed::Refused(errors::ledger_unavailable());
                }
            };
            match outcome {
                ClaimOutcome::Claimed => {}
                ClaimOutcome::TakenOver => {
                    tracing::info!(round = %claim.round, "round re-run after its lease expired");
                }
                ClaimOutcome::Recorded(recorded) if recorded.answers == claim.answers => {
                    tracing::info!(round = %claim.round, "round replayed from the ledger");
                    return Claimed::Answered(recorded.response);
                }
                ClaimOutcome::Recorded(_) => {
                    tracing::info!(round = %claim.round, "round presented again with other answers");
                    return Claimed::Refused(errors::answers_conflict());
                }
                ClaimOutcome::Abandoned => {
                    tracing::warn!(round = %claim.round, "at-most-once round abandoned by a stopped instance; refusing to run it again");
                    return Claimed::Refused(errors::round_abandoned());
                }
                ClaimOutcome::InProgress => {
                    let now = Instant::now();
                    if now >= deadline {
                        tracing::info!(round = %claim.round, "round still in progress elsewhere");
                        return Claimed::Refused(errors::round_in_progress());
                    }
                    tokio::time::sleep(pause.min(deadline - now)).await;
                    pause = (pause * 2).min(Duration::from_millis(200));
                    continue;
                }
            }
            return Claimed::Run(Held {
                round: claim.round,
                owner: claim.owner,
            });
        }
    }

    /// Runs `work` while renewing `held`'s lease every third of it.
    pub(crate) async fn renewing<F: Future>(&self, held: &Held, work: F) -> F::Output {
        let renew = async {
            loop {
                tokio::time::sleep(self.lease / 3).await;
                match self.ledger.renew(&held.round, held.owner, self.lease).await {
                    Ok(true) => self.reachable(),
                    Ok(false) => {
                        self.reachable();
                        tracing::warn!(round = %held.round, "lost the lease of a running round; another request may run it too");
                        // Nothing to hold any more: wait for the work.
                        std::future::pending::<()>().await;
                    }
                    Err(error) => self.unreachable(&error),
                }
            }
        };
        tokio::pin!(work);
        tokio::pin!(renew);
        match futures::future::select(work, renew).await {
            futures::future::Either::Left((output, _)) => output,
            futures::future::Either::Right(((), _)) => unreachable!("the renewal loop never ends"),
        }
    }

    /// Records the outcome of a round this presentation ran.
    pub(crate) async fn record(&self, held: Held, response: Option<Vec<u8>>) {
        let Some(response) = response else {
            tracing::warn!(round = %held.round, "a round's outcome does not encode; not recorded");
            return;
        };
        match self.ledger.record(&held.round, held.owner, &response).await {
            Ok(true) => self.reachable(),
            Ok(false) => {
                self.reachable();
                tracing::warn!(round = %held.round, "round outcome not recorded: its lease had passed to another request");
            }
            Err(error) => self.unreachable(&error),
        }
    }

    fn unreachable(&self, error: &LedgerError) {
        if !self.down.swap(true, Ordering::Relaxed) {
            tracing::warn!(%error, "round ledger unavailable; protected rounds fail closed until it is back");
        }
    }

    fn reachable(&self) {
        if self.down.swap(false, Ordering::Relaxed) {
            tracing::info!("round ledger reachable again");
        }
    }
}

/// Digest of the answers a round is presented with.
fn answers_digest(responses: Option<&InputResponses>) -> [u8; 16] {
    let json =
        serde_json::to_value(responses).map_or_else(|_| String::new(), |v| canonical_json(&v));
    digest16(json.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_digest_ignores_key_order_but_not_values() {
        let a: InputResponses =
            serde_json::from_str(r#"{"x": {"action": "accept", "content": {"a": 1, "b": 2}}}"#)
                .unwrap();
        let b: InputResponses =
            serde_json::from_str(r#"{"x": {"content": {"b": 2, "a": 1}, "action": "accept"}}"#)
                .unwrap();
        let c: InputResponses =
            serde_json::from_str(r#"{"x": {"action": "accept", "content": {"a": 1, "b": 3}}}"#)
                .unwrap();
        assert_eq!(answers_digest(Some(&a)), answers_digest(Some(&b)));
        assert_ne!(answers_digest(Some(&a)), answers_digest(Some(&c)));
        assert_ne!(answers_digest(Some(&a)), answers_digest(None));
    }
}
