//! The sealed plaintext of a token.
//!
//! Encoded with postcard, which is compact but not self-describing: every field here is a
//! plain integer, string or byte vector so that decoding can never depend on type hints
//! postcard does not carry. JSON values travel as JSON text.

use serde::{Deserialize, Serialize};

use super::Rejection;

/// The only envelope layout this version of `mrtr` writes and reads.
pub const FORMAT_VERSION: u8 = 1;

/// An input request sent to the client in the round that sealed the token.
///
/// The full request is kept, so the server can ask exactly the same question again (for
/// example after a malformed answer) without running the tool's code a second time.
///
/// ```
/// use mrtr_runtime::token::PendingInput;
///
/// let pending = PendingInput {
///     key: "confirm".into(),
///     request: r#"{"method":"elicitation/create","params":{"message":"Proceed?"}}"#.into(),
/// };
/// assert_eq!(pending.key, "confirm");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingInput {
    /// The key of the request in `inputRequests`; the answer comes back under the same key.
    pub key: String,
    /// The input request as JSON text (postcard cannot carry `serde_json::Value`).
    pub request: String,
}

/// What a token holds once opened.
///
/// ```
/// use mrtr_runtime::token::{Envelope, FORMAT_VERSION};
///
/// let envelope = Envelope {
///     format_version: FORMAT_VERSION,
///     fingerprint: 0xfeed,
///     issued_at: 1_000,
///     expires_at: 1_600,
///     round: 1,
///     pending: vec![],
///     state: vec![1, 2, 3],
/// };
/// let bytes = envelope.to_postcard().unwrap();
/// assert_eq!(Envelope::from_postcard(&bytes).unwrap(), envelope);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// Layout version of this envelope; [`FORMAT_VERSION`] when sealed by this crate.
    pub format_version: u8,
    /// Fingerprint of the machine (tool code) that sealed the state. It is authenticated
    /// inside the envelope rather than bound as associated data, so the server can tell
    /// "sealed by an older build of this tool" (restart the flow) from tampering.
    pub fingerprint: u64,
    /// Unix seconds at sealing.
    pub issued_at: u64,
    /// Unix seconds from which the token no longer opens (`issued_at` + TTL).
    pub expires_at: u64,
    /// How many rounds of input the flow has completed when this token was sealed.
    pub round: u32,
    /// The input requests awaiting answers.
    pub pending: Vec<PendingInput>,
    /// The tool's serialized state, opaque to the token layer.
    pub state: Vec<u8>,
}

impl Envelope {
    /// Encodes the envelope as postcard bytes (the AEAD plaintext).
    ///
    /// ```
    /// # use mrtr_runtime::token::Envelope;
    /// let envelope = Envelope {
    ///     format_version: 1, fingerprint: 0, issued_at: 0, expires_at: 0,
    ///     round: 0, pending: vec![], state: vec![],
    /// };
    /// assert_eq!(envelope.to_postcard().unwrap(), [1, 0, 0, 0, 0, 0, 0]);
    /// ```
    pub fn to_postcard(&self) -> Result<Vec<u8>, postcard::Error> {
        postcard::to_allocvec(self)
    }

    /// Decodes postcard bytes, rejecting any bytes left over after the envelope.
    ///
    /// ```
    /// # use mrtr_runtime::token::{Envelope, Rejection};
    /// assert!(Envelope::from_postcard(&[1, 0, 0, 0, 0, 0, 0]).is_ok());
    /// assert_eq!(
    ///     Envelope::from_postcard(&[1, 0, 0, 0, 0, 0, 0, 9]),
    ///     Err(Rejection::UndecodableEnvelope)
    /// );
    /// ```
    pub fn from_postcard(bytes: &[u8]) -> Result<Self, Rejection> {
        match postcard::take_from_bytes::<Self>(bytes) {
            Ok((envelope, [])) => Ok(envelope),
            Ok(_) | Err(_) => Err(Rejection::UndecodableEnvelope),
        }
    }

    /// Checks that the state was sealed by the machine the server runs now.
    ///
    /// A mismatch means the tool's code changed while the flow was in flight; the server
    /// should treat it like any other rejection (the client restarts the call).
    ///
    /// ```
    /// # use mrtr_runtime::token::{Envelope, Rejection};
    /// let envelope = Envelope {
    ///     format_version: 1, fingerprint: 7, issued_at: 0, expires_at: 0,
    ///     round: 0, pending: vec![], state: vec![],
    /// };
    /// assert_eq!(envelope.check_fingerprint(7), Ok(()));
    /// assert_eq!(
    ///     envelope.check_fingerprint(8),
    ///     Err(Rejection::FingerprintMismatch { sealed: 7, expected: 8 })
    /// );
    /// ```
    pub fn check_fingerprint(&self, expected: u64) -> Result<(), Rejection> {
        if self.fingerprint == expected {
            Ok(())
        } else {
            Err(Rejection::FingerprintMismatch {
                sealed: self.fingerprint,
                expected,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Envelope {
        Envelope {
            format_version: FORMAT_VERSION,
            fingerprint: u64::MAX,
            issued_at: 1_767_225_600,
            expires_at: 1_767_226_200,
            round: 2,
            pending: vec![PendingInput {
                key: "k".into(),
                request: "{}".into(),
            }],
            state: vec![0, 255, 7],
        }
    }

    #[test]
    fn round_trips() {
        let envelope = sample();
        let bytes = envelope.to_postcard().unwrap();
        assert_eq!(Envelope::from_postcard(&bytes).unwrap(), envelope);
    }

    #[test]
    fn every_strict_prefix_and_any_suffix_is_rejected() {
        let bytes = sample().to_postcard().unwrap();
        for len in 0..bytes.len() {
            assert_eq!(
                Envelope::from_postcard(&bytes[..len]),
                Err(Rejection::UndecodableEnvelope),
                "prefix of length {len}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(
            Envelope::from_postcard(&longer),
            Err(Rejection::UndecodableEnvelope)
        );
    }

    #[test]
    fn huge_length_prefixes_do_not_allocate_or_panic() {
        // version, fingerprint, iat, exp, round, then a pending count of u32::MAX.
        let bytes = [1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f];
        assert_eq!(
            Envelope::from_postcard(&bytes),
            Err(Rejection::UndecodableEnvelope)
        );
    }

    #[test]
    fn invalid_utf8_in_strings_is_rejected() {
        let mut envelope = sample();
        envelope.pending[0].key = "\u{e9}".into();
        let mut bytes = envelope.to_postcard().unwrap();
        let position = bytes.iter().position(|&b| b == 0xc3).unwrap();
        bytes[position] = 0xff;
        assert_eq!(
            Envelope::from_postcard(&bytes),
            Err(Rejection::UndecodableEnvelope)
        );
    }
}
