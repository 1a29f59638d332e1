//! Sealing and opening: the AEAD framing around an [`Envelope`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use zeroize::Zeroizing;

use super::aead;
use super::binding::Binding;
use super::clock::{Clock, SystemClock};
use super::envelope::Envelope;
use super::keyring::{KeyId, KeyRing};
use super::wire::{
    DEFAULT_MAX_CLOCK_SKEW, DEFAULT_MAX_TOKEN_BYTES, DEFAULT_TTL, Rejection, TOKEN_PREFIX,
};

/// Length of the key id in the token.
const KID_LEN: usize = 2;
/// Length of the XChaCha20 nonce.
pub const NONCE_LEN: usize = aead::NONCE_LEN;
/// Length of the Poly1305 tag.
pub(super) const TAG_LEN: usize = aead::TAG_LEN;
/// Bytes before the ciphertext.
pub(super) const HEADER_LEN: usize = KID_LEN + NONCE_LEN;

/// What the server hands over to be sealed; the sealer adds the version and the expiry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealInput {
    /// Fingerprint of the machine that produced the payload.
    pub fingerprint: u64,
    /// Rounds of input completed so far.
    pub round: u32,
    /// The pending requests and the tool's state, encoded by the server.
    pub payload: Vec<u8>,
}

/// Why a state could not be sealed. These are server-side faults, never client input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SealError {
    /// The token would exceed the configured size cap.
    #[error(
        "sealed requestState would be {size} bytes, over the {limit}-byte limit; keep less state \
         alive across ask!/sample!/roots! or raise the limit"
    )]
    TooLarge {
        /// Length the token would have.
        size: usize,
        /// The configured cap.
        limit: usize,
    },
    /// The operating system's random number generator failed.
    #[error("the operating system random number generator failed")]
    Rng(#[source] getrandom::Error),
    /// The cipher refused the input (only possible for absurd lengths).
    #[error("XChaCha20-Poly1305 encryption failed")]
    Encrypt,
}

/// Seals tool state into `requestState` tokens and opens them again.
///
/// Cheap to share behind an `Arc`; every method takes `&self`.
#[derive(Clone)]
pub struct StateSealer {
    keys: KeyRing,
    clock: Arc<dyn Clock>,
    ttl_seconds: u64,
    max_token_bytes: usize,
    max_clock_skew_seconds: u64,
}

impl StateSealer {
    /// A sealer with the system clock, a 600 s TTL, a 64 KiB cap and 60 s of allowed skew.
    pub fn new(keys: KeyRing) -> Self {
        Self {
            keys,
            clock: Arc::new(SystemClock),
            ttl_seconds: DEFAULT_TTL.as_secs(),
            max_token_bytes: DEFAULT_MAX_TOKEN_BYTES,
            max_clock_skew_seconds: DEFAULT_MAX_CLOCK_SKEW.as_secs(),
        }
    }

    /// Uses `clock` for the expiry checks (tests inject a [`ManualClock`]).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Sets how long a token stays valid after sealing (whole seconds; each round reseals).
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl_seconds = ttl.as_secs();
        self
    }

    /// Sets the largest token, in bytes, that [`seal`](Self::seal) produces and
    /// [`open`](Self::open) looks at.
    pub fn with_max_token_bytes(mut self, max_token_bytes: usize) -> Self {
        self.max_token_bytes = max_token_bytes;
        self
    }

    /// Sets how far beyond now + TTL a token's expiry may lie (other instances' clocks
    /// drift).
    #[cfg_attr(not(feature = "token-internals"), allow(dead_code))]
    pub fn with_max_clock_skew(mut self, skew: Duration) -> Self {
        self.max_clock_skew_seconds = skew.as_secs();
        self
    }

    /// The token lifetime.
    #[cfg_attr(not(feature = "token-internals"), allow(dead_code))]
    pub fn ttl(&self) -> Duration {
        Duration::from_secs(self.ttl_seconds)
    }

    /// The token size cap in bytes.
    #[cfg_attr(not(feature = "token-internals"), allow(dead_code))]
    pub fn max_token_bytes(&self) -> usize {
        self.max_token_bytes
    }

    /// The allowed clock skew.
    #[cfg_attr(not(feature = "token-internals"), allow(dead_code))]
    pub fn max_clock_skew(&self) -> Duration {
        Duration::from_secs(self.max_clock_skew_seconds)
    }

    /// The key ring.
    #[cfg_attr(not(feature = "token-internals"), allow(dead_code))]
    pub fn keys(&self) -> &KeyRing {
        &self.keys
    }

    /// Seals `input` for the request described by `binding`, with the sealing key, a fresh
    /// random nonce, and an expiry of now + TTL.
    #[cfg_attr(not(feature = "token-internals"), allow(dead_code))]
    pub fn seal(&self, binding: &Binding<'_>, input: SealInput) -> Result<String, SealError> {
        self.seal_expiring_by(binding, input, u64::MAX)
    }

    /// Like [`seal`](Self::seal), but the token expires no later than `not_after` (unix
    /// seconds). Re-asking the same question re-seals with the expiry it already had, so a
    /// client cannot keep a round alive forever by answering wrongly.
    pub fn seal_expiring_by(
        &self,
        binding: &Binding<'_>,
        input: SealInput,
        not_after: u64,
    ) -> Result<String, SealError> {
        let nonce = super::nonce::fresh().map_err(SealError::Rng)?;
        self.seal_with_nonce_expiring_by(binding, input, nonce, not_after)
    }

    /// Like [`seal`](Self::seal) but with a caller-chosen nonce. **For test vectors only:**
    /// reusing a nonce with the same key breaks confidentiality and authenticity.
    #[cfg_attr(
        not(any(feature = "token-internals", feature = "fuzzing")),
        allow(dead_code)
    )]
    pub fn seal_with_nonce(
        &self,
        binding: &Binding<'_>,
        input: SealInput,
        nonce: [u8; NONCE_LEN],
    ) -> Result<String, SealError> {
        self.seal_with_nonce_expiring_by(binding, input, nonce, u64::MAX)
    }

    fn seal_with_nonce_expiring_by(
        &self,
        binding: &Binding<'_>,
        input: SealInput,
        nonce: [u8; NONCE_LEN],
        not_after: u64,
    ) -> Result<String, SealError> {
        let now = self.clock.now_unix_seconds();
        let expires_at = now.saturating_add(self.ttl_seconds).min(not_after);
        let envelope = Envelope {
            fingerprint: input.fingerprint,
            // Past 2106 every token is born expired, which fails closed.
            expires_at: u32::try_from(expires_at).unwrap_or(u32::MAX),
            round: input.round,
            payload: input.payload,
        };
        let plaintext = Zeroizing::new(envelope.encode());
        drop(Zeroizing::new(envelope.payload));
        self.seal_plaintext_with_nonce(binding, &plaintext, nonce)
    }

    /// Encrypts arbitrary plaintext as a token. **For test vectors only** (tokens whose
    /// envelope is undecodable or of another version); same nonce warning as
    /// [`seal_with_nonce`](Self::seal_with_nonce).
    pub fn seal_plaintext_with_nonce(
        &self,
        binding: &Binding<'_>,
        plaintext: &[u8],
        nonce: [u8; NONCE_LEN],
    ) -> Result<String, SealError> {
        let raw_len = HEADER_LEN + plaintext.len() + TAG_LEN;
        let size = token_len(plaintext.len());
        if size > self.max_token_bytes {
            return Err(SealError::TooLarge {
                size,
                limit: self.max_token_bytes,
            });
        }

        let kid = self.keys.sealing_key_id();
        let associated_data = binding.associated_data(kid);

        let mut raw = Zeroizing::new(Vec::with_capacity(raw_len));
        raw.extend_from_slice(&kid.to_be_bytes());
        raw.extend_from_slice(&nonce);
        raw.extend_from_slice(plaintext);
        let tag = aead::seal_in_place(
            self.keys.sealing_key().as_bytes(),
            &nonce,
            &associated_data,
            &mut raw[HEADER_LEN..],
        )
        .map_err(|()| SealError::Encrypt)?;
        raw.extend_from_slice(&tag);

        let mut token = String::with_capacity(size);
        token.push_str(TOKEN_PREFIX);
        URL_SAFE_NO_PAD.encode_string(&*raw, &mut token);
        Ok(token)
    }

    /// Opens `token` for the request described by `binding`, running every check listed
    /// in the [module docs](self) in order. Never panics, whatever the input.
    pub fn open(&self, token: &str, binding: &Binding<'_>) -> Result<Envelope, Rejection> {
        if token.len() > self.max_token_bytes {
            return Err(Rejection::TooLarge {
                size: token.len(),
                limit: self.max_token_bytes,
            });
        }
        let encoded = token
            .strip_prefix(TOKEN_PREFIX)
            .ok_or(Rejection::WrongPrefix)?;
        let mut raw =
            Zeroizing::new(
                URL_SAFE_NO_PAD
                    .decode(encoded)
                    .map_err(|_| Rejection::Malformed {
                        detail: "not canonical unpadded base64url",
                    })?,
            );
        if raw.len() < HEADER_LEN + TAG_LEN {
            return Err(Rejection::Malformed {
                detail: "too short to hold key id, nonce and tag",
            });
        }

        let (header, sealed) = raw.split_at_mut(HEADER_LEN);
        let (kid_bytes, nonce) = header.split_at(KID_LEN);
        let kid = KeyId(u16::from_be_bytes([kid_bytes[0], kid_bytes[1]]));
        let key = self.keys.key(kid).ok_or(Rejection::UnknownKey { kid })?;
        let nonce = <&[u8; NONCE_LEN]>::try_from(nonce).map_err(|_| Rejection::Malformed {
            detail: "bad nonce length",
        })?;
        let (ciphertext, tag) = sealed.split_at_mut(sealed.len() - TAG_LEN);
        let tag = <&[u8; TAG_LEN]>::try_from(&*tag).map_err(|_| Rejection::Malformed {
            detail: "bad tag length",
        })?;

        aead::open_in_place(
            key.as_bytes(),
            nonce,
            &binding.associated_data(kid),
            ciphertext,
            tag,
        )
        .map_err(|()| Rejection::Unauthentic)?;
        let envelope = Envelope::decode(ciphertext)?;

        let now = self.clock.now_unix_seconds();
        let expires_at = u64::from(envelope.expires_at);
        let latest = now
            .saturating_add(self.ttl_seconds)
            .saturating_add(self.max_clock_skew_seconds);
        if expires_at > latest {
            return Err(Rejection::ExpiresTooLate { expires_at, now });
        }
        if now >= expires_at {
            return Err(Rejection::Expired { expires_at, now });
        }
        Ok(envelope)
    }
}

impl fmt::Debug for StateSealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateSealer")
            .field("keys", &self.keys)
            .field("ttl_seconds", &self.ttl_seconds)
            .field("max_token_bytes", &self.max_token_bytes)
            .field("max_clock_skew_seconds", &self.max_clock_skew_seconds)
            .finish_non_exhaustive()
    }
}

/// The length of the token that seals `plaintext_len` bytes of plaintext.
fn token_len(plaintext_len: usize) -> usize {
    let raw_len = HEADER_LEN
        .saturating_add(plaintext_len)
        .saturating_add(TAG_LEN);
    // Unpadded base64 length, computed without overflow.
    TOKEN_PREFIX.len() + raw_len / 3 * 4 + [0, 2, 3][raw_len % 3]
}

/// The length of the token that would seal a `payload_len`-byte payload at `round`: what
/// the size limit is checked against, computed without sealing.
pub(crate) fn sealed_len(round: u32, payload_len: usize) -> usize {
    token_len(super::envelope::Envelope::encoded_len(round, payload_len))
}
