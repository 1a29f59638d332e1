//! The sealed plaintext of a token.
//!
//! ```text
//! plaintext = format_version (1 byte, = 3)
//!          || fingerprint    (u64 little-endian, 8 bytes)
//!          || expires_at     (u32 little-endian, 4 bytes, Unix seconds)
//!          || round          (postcard varint u32, 1–5 bytes)
//!          || payload        (every remaining byte; opaque to the token layer)
//! ```
//!
//! Fixed-width fields and a payload without a length prefix keep the header at 14 bytes
//! for the first 127 rounds: every byte here is paid for, base64-inflated, on every retry.

pub use super::wire::FORMAT_VERSION;
use super::wire::Rejection;

/// Bytes before the round: version, fingerprint, expiry.
const FIXED_LEN: usize = 1 + 8 + 4;

/// What a token holds once opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// Fingerprint of the machine (tool code) that sealed the payload. It is authenticated
    /// inside the envelope rather than bound as associated data, so the server can tell
    /// "sealed by an older build of this tool" (restart the flow) from tampering.
    pub fingerprint: u64,
    /// Unix seconds from which the token no longer opens.
    pub expires_at: u32,
    /// How many rounds of input the flow has completed when this token was sealed.
    pub round: u32,
    /// What the server sealed: the pending input requests and the tool's state.
    pub payload: Vec<u8>,
}

impl Envelope {
    /// Encodes the envelope (the AEAD plaintext).
    pub fn encode(&self) -> Vec<u8> {
        let mut round = [0u8; 5];
        // A u32 always fits in 5 varint bytes.
        let round = postcard::to_slice(&self.round, &mut round).map_or(&[][..], |used| &*used);
        let mut bytes = Vec::with_capacity(FIXED_LEN + round.len() + self.payload.len());
        bytes.push(FORMAT_VERSION);
        bytes.extend_from_slice(&self.fingerprint.to_le_bytes());
        bytes.extend_from_slice(&self.expires_at.to_le_bytes());
        bytes.extend_from_slice(round);
        bytes.extend_from_slice(&self.payload);
        bytes
    }

    /// The length of [`encode`](Self::encode)'s output for `round` and a payload of
    /// `payload_len` bytes.
    ///
    /// ```
    /// # #[cfg(feature = "token-internals")] {
    /// use mrtr_runtime::token::internals::Envelope;
    /// let e = Envelope { fingerprint: 1, expires_at: 2, round: 300, payload: vec![0; 9] };
    /// assert_eq!(Envelope::encoded_len(300, 9), e.encode().len());
    /// # }
    /// ```
    pub fn encoded_len(round: u32, payload_len: usize) -> usize {
        let round_len = postcard::experimental::serialized_size(&round).unwrap_or(5);
        (FIXED_LEN + round_len).saturating_add(payload_len)
    }

    /// Decodes a plaintext whose first byte is [`FORMAT_VERSION`].
    pub fn decode(bytes: &[u8]) -> Result<Self, Rejection> {
        match bytes.first() {
            Some(&FORMAT_VERSION) => {}
            Some(&found) => return Err(Rejection::UnsupportedVersion { found }),
            None => return Err(Rejection::UndecodableEnvelope),
        }
        let Some((fixed, rest)) = bytes.split_at_checked(FIXED_LEN) else {
            return Err(Rejection::UndecodableEnvelope);
        };
        let fingerprint = u64::from_le_bytes(fixed[1..9].try_into().expect("8 bytes"));
        let expires_at = u32::from_le_bytes(fixed[9..13].try_into().expect("4 bytes"));
        let (round, payload) =
            postcard::take_from_bytes::<u32>(rest).map_err(|_| Rejection::UndecodableEnvelope)?;
        Ok(Envelope {
            fingerprint,
            expires_at,
            round,
            payload: payload.to_vec(),
        })
    }

    /// Checks that the payload was sealed by the machine the server runs now.
    ///
    /// A mismatch means the tool's code changed while the flow was in flight; the server
    /// restarts or rejects per its stale-state policy.
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
            fingerprint: u64::MAX - 1,
            expires_at: 1_767_226_200,
            round: 300,
            payload: vec![0, 255, 7],
        }
    }

    #[test]
    fn round_trips() {
        let envelope = sample();
        assert_eq!(Envelope::decode(&envelope.encode()).unwrap(), envelope);
        let empty = Envelope {
            payload: vec![],
            ..sample()
        };
        assert_eq!(Envelope::decode(&empty.encode()).unwrap(), empty);
    }

    #[test]
    fn layout_is_as_documented() {
        let bytes = sample().encode();
        let mut expected = vec![FORMAT_VERSION];
        expected.extend_from_slice(&(u64::MAX - 1).to_le_bytes());
        expected.extend_from_slice(&1_767_226_200u32.to_le_bytes());
        expected.extend_from_slice(&[0xAC, 0x02]); // 300 as a varint
        expected.extend_from_slice(&[0, 255, 7]);
        assert_eq!(bytes, expected);
        assert_eq!(
            Envelope {
                round: 1,
                ..sample()
            }
            .encode()
            .len(),
            14 + 3
        );
    }

    #[test]
    fn every_prefix_shorter_than_the_header_is_rejected() {
        let bytes = Envelope {
            payload: vec![],
            ..sample()
        }
        .encode();
        assert_eq!(Envelope::decode(&[]), Err(Rejection::UndecodableEnvelope));
        for len in 1..bytes.len() {
            assert_eq!(
                Envelope::decode(&bytes[..len]),
                Err(Rejection::UndecodableEnvelope),
                "prefix of length {len}"
            );
        }
    }

    #[test]
    fn another_version_byte_is_reported_as_such() {
        let mut bytes = sample().encode();
        bytes[0] = 1;
        assert_eq!(
            Envelope::decode(&bytes),
            Err(Rejection::UnsupportedVersion { found: 1 })
        );
    }

    #[test]
    fn an_overlong_round_varint_is_rejected() {
        let mut bytes = sample().encode()[..FIXED_LEN].to_vec();
        bytes.extend_from_slice(&[0xFF; 6]);
        assert_eq!(
            Envelope::decode(&bytes),
            Err(Rejection::UndecodableEnvelope)
        );
    }

    #[test]
    fn fingerprints_compare_exactly() {
        let envelope = sample();
        assert_eq!(envelope.check_fingerprint(u64::MAX - 1), Ok(()));
        assert_eq!(
            envelope.check_fingerprint(7),
            Err(Rejection::FingerprintMismatch {
                sealed: u64::MAX - 1,
                expected: 7
            })
        );
    }
}
