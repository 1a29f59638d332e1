//! The sealed `requestState` token.
//!
//! Between rounds the server hands the client an opaque `requestState`; the client echoes
//! it on the retry and any server instance holding the key continues the flow. The token
//! is encrypted (clients must not read server state) and authenticated (clients must not
//! change it), and it only opens for the request it was sealed for.
//!
//! # Wire format (`mrtr1`)
//!
//! ```text
//! token      = "mrtr1." || base64url_nopad( kid || nonce || ciphertext || tag )
//! kid        = key id, u16 big-endian (2 bytes), selects the key in the KeyRing
//! nonce      = 24 random bytes from the OS RNG, fresh for every seal
//! ciphertext = XChaCha20-Poly1305(key, nonce, plaintext, associated data), tag = 16 bytes
//! plaintext  = postcard(Envelope)                  (see `Envelope`)
//! AAD        = Binding::associated_data(kid)       (prefix, kid, audience, method, target,
//!                                                   SHA-256 of canonical arguments, principal;
//!                                                   never transmitted)
//! ```
//!
//! The published test vectors in `tests/vectors/token-v1.json` freeze this format.
//!
//! # Opening
//!
//! [`StateSealer::open`] checks, in order, and stops at the first failure: the size cap
//! (before any decoding), the prefix, strict base64url, the minimum length, that the key id
//! is known, the AEAD tag over the bound associated data, the envelope format version, the
//! postcard decoding (no trailing bytes), that the token was not issued in the future
//! (beyond the allowed clock skew), and that it has not expired. The server then compares
//! the fingerprint ([`Envelope::check_fingerprint`]).
//!
//! Each failure is a distinct [`Rejection`] for the server log. The client always gets the
//! same answer: JSON-RPC error -32602 with [`REJECTED_STATE_MESSAGE`].
//!
//! ```
//! use std::sync::Arc;
//! use mrtr_runtime::token::{
//!     Binding, BoundMethod, KeyId, KeyRing, ManualClock, Rejection, SealInput, SecretKey,
//!     StateSealer,
//! };
//!
//! let ring = KeyRing::new(KeyId(1), SecretKey::generate()?);
//! let clock = Arc::new(ManualClock::new(1_767_225_600));
//! let sealer = StateSealer::new(ring).with_clock(clock.clone());
//!
//! let args = serde_json::json!({"path": "/tmp/report.txt"});
//! let binding = Binding::new("files", BoundMethod::ToolsCall, "delete", args.as_object(), None);
//! let token = sealer.seal(&binding, SealInput {
//!     fingerprint: 0xC0FFEE,
//!     round: 1,
//!     pending: vec![],
//!     state: b"live locals".to_vec(),
//! })?;
//! assert!(token.starts_with("mrtr1."));
//!
//! clock.advance(30);
//! let envelope = sealer.open(&token, &binding)?;
//! assert_eq!(envelope.state, b"live locals");
//! envelope.check_fingerprint(0xC0FFEE)?;
//!
//! let other = Binding::new("files", BoundMethod::ToolsCall, "delete", None, None);
//! assert_eq!(sealer.open(&token, &other).unwrap_err(), Rejection::Unauthentic);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod binding;
mod clock;
mod envelope;
mod keyring;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{AeadInOut, KeyInit};
use chacha20poly1305::{Key, Tag, XChaCha20Poly1305, XNonce};
use zeroize::{Zeroize, Zeroizing};

pub use binding::{Binding, BoundMethod, UnknownMethod, canonical_json};
pub use clock::{Clock, ManualClock, SystemClock};
pub use envelope::{Envelope, FORMAT_VERSION, PendingInput};
pub use keyring::{KEYS_ENV_VAR, KeyId, KeyRing, KeyRingError, SecretKey};

/// Text every token starts with; it names the wire format and is bound into the AAD.
pub const TOKEN_PREFIX: &str = "mrtr1.";

/// The one message the client sees for every rejected `requestState`, sent as JSON-RPC
/// error -32602 (invalid params). The specific [`Rejection`] goes only to the server log,
/// so a client cannot probe which check failed.
///
/// ```
/// use mrtr_runtime::token::REJECTED_STATE_MESSAGE;
///
/// assert!(REJECTED_STATE_MESSAGE.contains("requestState"));
/// ```
pub const REJECTED_STATE_MESSAGE: &str =
    "Invalid or expired requestState; retry the request without requestState to start over";

/// How long a sealed token stays valid by default: 600 seconds per round.
pub const DEFAULT_TTL: Duration = Duration::from_secs(600);

/// Default cap on the token length in bytes, checked before any decoding: 64 KiB.
pub const DEFAULT_MAX_TOKEN_BYTES: usize = 64 * 1024;

/// How far in the future `issued_at` may lie by default (clock skew between instances).
pub const DEFAULT_MAX_CLOCK_SKEW: Duration = Duration::from_secs(60);

/// Length of the key id in the token.
const KID_LEN: usize = 2;
/// Length of the XChaCha20 nonce.
const NONCE_LEN: usize = 24;
/// Length of the Poly1305 tag.
const TAG_LEN: usize = 16;
/// Bytes before the ciphertext.
const HEADER_LEN: usize = KID_LEN + NONCE_LEN;

/// What the tool hands over to be sealed; the sealer adds version and timestamps.
///
/// ```
/// use mrtr_runtime::token::{PendingInput, SealInput};
///
/// let input = SealInput {
///     fingerprint: 42,
///     round: 1,
///     pending: vec![PendingInput { key: "name".into(), request: "{}".into() }],
///     state: vec![],
/// };
/// assert_eq!(input.pending.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealInput {
    /// Fingerprint of the machine that produced `state` (see [`Envelope::fingerprint`]).
    pub fingerprint: u64,
    /// Rounds of input completed so far.
    pub round: u32,
    /// The input requests sent with this token.
    pub pending: Vec<PendingInput>,
    /// The tool's serialized state.
    pub state: Vec<u8>,
}

/// Why a state could not be sealed. These are server-side faults, never client input.
///
/// ```
/// use mrtr_runtime::token::{Binding, BoundMethod, KeyId, KeyRing, SealError, SealInput, SecretKey, StateSealer};
///
/// let sealer = StateSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([1; 32])))
///     .with_max_token_bytes(100);
/// let binding = Binding::new("srv", BoundMethod::ToolsCall, "t", None, None);
/// let input = SealInput { fingerprint: 0, round: 0, pending: vec![], state: vec![0; 100] };
/// assert!(matches!(sealer.seal(&binding, input), Err(SealError::TooLarge { limit: 100, .. })));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
    /// The envelope could not be encoded.
    #[error("could not encode the requestState envelope: {0}")]
    Encode(String),
    /// The operating system's random number generator failed.
    #[error("the operating system random number generator failed: {0}")]
    Rng(String),
    /// The cipher refused the input (only possible for absurd lengths).
    #[error("XChaCha20-Poly1305 encryption failed")]
    Encrypt,
}

/// Why a token did not open. For the server log only; the client always gets
/// [`REJECTED_STATE_MESSAGE`].
///
/// ```
/// use mrtr_runtime::token::Rejection;
///
/// assert_eq!(Rejection::WrongPrefix.reason(), "wrong_prefix");
/// assert_eq!(Rejection::WrongPrefix.to_string(), "requestState does not start with `mrtr1.`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// Longer than the size cap; nothing was decoded.
    TooLarge {
        /// Length of the token in bytes.
        size: usize,
        /// The configured cap.
        limit: usize,
    },
    /// Does not start with [`TOKEN_PREFIX`].
    WrongPrefix,
    /// Not strict unpadded base64url, or too short to hold key id, nonce and tag.
    Malformed {
        /// Which structural check failed.
        detail: &'static str,
    },
    /// Sealed under a key id this server does not hold.
    UnknownKey {
        /// The key id in the token.
        kid: KeyId,
    },
    /// The AEAD tag does not verify: the token was altered, or it was sealed for another
    /// audience, method, target, arguments or principal, or with another key.
    Unauthentic,
    /// Authentic, but the plaintext is not an envelope this version can decode.
    UndecodableEnvelope,
    /// Authentic, but written in an envelope format version this build does not read.
    UnsupportedVersion {
        /// The version in the envelope.
        found: u8,
    },
    /// `issued_at` lies further in the future than the allowed clock skew.
    IssuedInFuture {
        /// When the token claims it was sealed.
        issued_at: u64,
        /// This server's clock.
        now: u64,
    },
    /// The token's lifetime is over.
    Expired {
        /// When the token stopped opening.
        expires_at: u64,
        /// This server's clock.
        now: u64,
    },
    /// Sealed by another version of the tool's code (see [`Envelope::check_fingerprint`]).
    FingerprintMismatch {
        /// Fingerprint in the envelope.
        sealed: u64,
        /// Fingerprint of the machine running now.
        expected: u64,
    },
}

impl Rejection {
    /// A stable snake_case code for the reason, for structured logs and test vectors.
    ///
    /// ```
    /// # use mrtr_runtime::token::Rejection;
    /// assert_eq!(Rejection::Unauthentic.reason(), "unauthentic");
    /// ```
    pub fn reason(&self) -> &'static str {
        match self {
            Self::TooLarge { .. } => "too_large",
            Self::WrongPrefix => "wrong_prefix",
            Self::Malformed { .. } => "malformed",
            Self::UnknownKey { .. } => "unknown_key",
            Self::Unauthentic => "unauthentic",
            Self::UndecodableEnvelope => "undecodable_envelope",
            Self::UnsupportedVersion { .. } => "unsupported_version",
            Self::IssuedInFuture { .. } => "issued_in_future",
            Self::Expired { .. } => "expired",
            Self::FingerprintMismatch { .. } => "fingerprint_mismatch",
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { size, limit } => write!(
                f,
                "requestState is {size} bytes, over the {limit}-byte limit"
            ),
            Self::WrongPrefix => write!(f, "requestState does not start with `{TOKEN_PREFIX}`"),
            Self::Malformed { detail } => write!(f, "requestState is malformed: {detail}"),
            Self::UnknownKey { kid } => {
                write!(
                    f,
                    "requestState was sealed with key id {kid}, which this server does not hold"
                )
            }
            Self::Unauthentic => write!(
                f,
                "requestState failed authentication: altered, or sealed for another \
                 audience/method/target/arguments/principal or with another key"
            ),
            Self::UndecodableEnvelope => {
                write!(
                    f,
                    "requestState is authentic but its envelope does not decode"
                )
            }
            Self::UnsupportedVersion { found } => write!(
                f,
                "requestState envelope has format version {found}; this build reads {FORMAT_VERSION}"
            ),
            Self::IssuedInFuture { issued_at, now } => write!(
                f,
                "requestState was issued at {issued_at}, {} s ahead of this server's clock ({now})",
                issued_at.saturating_sub(*now)
            ),
            Self::Expired { expires_at, now } => write!(
                f,
                "requestState expired at {expires_at}, {} s ago (now {now})",
                now.saturating_sub(*expires_at)
            ),
            Self::FingerprintMismatch { sealed, expected } => write!(
                f,
                "requestState was sealed by another version of this tool \
                 (fingerprint {sealed:#018x}, running {expected:#018x})"
            ),
        }
    }
}

impl std::error::Error for Rejection {}

/// Seals tool state into `requestState` tokens and opens them again.
///
/// Cheap to share behind an `Arc`; every method takes `&self`.
///
/// ```
/// use std::time::Duration;
/// use mrtr_runtime::token::{KeyId, KeyRing, SecretKey, StateSealer};
///
/// let sealer = StateSealer::new(KeyRing::new(KeyId(1), SecretKey::generate()?))
///     .with_ttl(Duration::from_secs(300))
///     .with_max_token_bytes(16 * 1024);
/// assert_eq!(sealer.ttl(), Duration::from_secs(300));
/// # Ok::<(), mrtr_runtime::token::KeyRingError>(())
/// ```
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
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey, StateSealer, DEFAULT_MAX_TOKEN_BYTES};
    /// let sealer = StateSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([1; 32])));
    /// assert_eq!(sealer.max_token_bytes(), DEFAULT_MAX_TOKEN_BYTES);
    /// ```
    pub fn new(keys: KeyRing) -> Self {
        Self {
            keys,
            clock: Arc::new(SystemClock),
            ttl_seconds: DEFAULT_TTL.as_secs(),
            max_token_bytes: DEFAULT_MAX_TOKEN_BYTES,
            max_clock_skew_seconds: DEFAULT_MAX_CLOCK_SKEW.as_secs(),
        }
    }

    /// Uses `clock` for issued-at, expiry and the future check (tests inject a
    /// [`ManualClock`]).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mrtr_runtime::token::{Binding, BoundMethod, KeyId, KeyRing, ManualClock, Rejection, SealInput, SecretKey, StateSealer};
    /// let clock = Arc::new(ManualClock::new(1_000));
    /// let sealer = StateSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([1; 32])))
    ///     .with_clock(clock.clone());
    /// let binding = Binding::new("srv", BoundMethod::ToolsCall, "t", None, None);
    /// let input = SealInput { fingerprint: 0, round: 1, pending: vec![], state: vec![] };
    /// let token = sealer.seal(&binding, input).unwrap();
    /// assert_eq!(sealer.open(&token, &binding).unwrap().issued_at, 1_000);
    ///
    /// clock.advance(601);
    /// let expired = Rejection::Expired { expires_at: 1_600, now: 1_601 };
    /// assert_eq!(sealer.open(&token, &binding).unwrap_err(), expired);
    /// ```
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Sets how long a token stays valid after sealing (whole seconds; each round reseals).
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey, StateSealer};
    /// let sealer = StateSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([1; 32])))
    ///     .with_ttl(Duration::from_secs(120));
    /// assert_eq!(sealer.ttl().as_secs(), 120);
    /// ```
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl_seconds = ttl.as_secs();
        self
    }

    /// Sets the largest token, in bytes, that [`seal`](Self::seal) produces and
    /// [`open`](Self::open) looks at.
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey, StateSealer};
    /// let sealer = StateSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([1; 32])))
    ///     .with_max_token_bytes(4096);
    /// assert_eq!(sealer.max_token_bytes(), 4096);
    /// ```
    pub fn with_max_token_bytes(mut self, max_token_bytes: usize) -> Self {
        self.max_token_bytes = max_token_bytes;
        self
    }

    /// Sets how far ahead of this server's clock a token's `issued_at` may be (other
    /// instances' clocks drift).
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey, StateSealer};
    /// let sealer = StateSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([1; 32])))
    ///     .with_max_clock_skew(Duration::from_secs(5));
    /// assert_eq!(sealer.max_clock_skew().as_secs(), 5);
    /// ```
    pub fn with_max_clock_skew(mut self, skew: Duration) -> Self {
        self.max_clock_skew_seconds = skew.as_secs();
        self
    }

    /// The token lifetime.
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey, StateSealer, DEFAULT_TTL};
    /// let sealer = StateSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([1; 32])));
    /// assert_eq!(sealer.ttl(), DEFAULT_TTL);
    /// ```
    pub fn ttl(&self) -> Duration {
        Duration::from_secs(self.ttl_seconds)
    }

    /// The token size cap in bytes.
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey, StateSealer};
    /// let sealer = StateSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([1; 32])));
    /// assert_eq!(sealer.max_token_bytes(), 65_536);
    /// ```
    pub fn max_token_bytes(&self) -> usize {
        self.max_token_bytes
    }

    /// The allowed clock skew for `issued_at`.
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey, StateSealer, DEFAULT_MAX_CLOCK_SKEW};
    /// let sealer = StateSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([1; 32])));
    /// assert_eq!(sealer.max_clock_skew(), DEFAULT_MAX_CLOCK_SKEW);
    /// ```
    pub fn max_clock_skew(&self) -> Duration {
        Duration::from_secs(self.max_clock_skew_seconds)
    }

    /// The key ring.
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey, StateSealer};
    /// let sealer = StateSealer::new(KeyRing::new(KeyId(4), SecretKey::from_bytes([1; 32])));
    /// assert_eq!(sealer.keys().sealing_key_id(), KeyId(4));
    /// ```
    pub fn keys(&self) -> &KeyRing {
        &self.keys
    }

    /// Seals `input` for the request described by `binding`, with the sealing key, a fresh
    /// random nonce, `issued_at` = now and `expires_at` = now + TTL.
    ///
    /// ```
    /// # use mrtr_runtime::token::{Binding, BoundMethod, KeyId, KeyRing, SealInput, SecretKey, StateSealer};
    /// let sealer = StateSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([1; 32])));
    /// let binding = Binding::new("srv", BoundMethod::ToolsCall, "t", None, None);
    /// let input = SealInput { fingerprint: 0, round: 1, pending: vec![], state: vec![] };
    /// let a = sealer.seal(&binding, input.clone()).unwrap();
    /// let b = sealer.seal(&binding, input).unwrap();
    /// assert_ne!(a, b, "every seal draws a new nonce");
    /// ```
    pub fn seal(&self, binding: &Binding<'_>, input: SealInput) -> Result<String, SealError> {
        self.seal_expiring_by(binding, input, u64::MAX)
    }

    /// Like [`seal`](Self::seal), but the token expires no later than `not_after` (unix
    /// seconds). Re-asking the same question re-seals with the expiry it already had, so a
    /// client cannot keep a round alive forever by answering wrongly.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mrtr_runtime::token::{Binding, BoundMethod, KeyId, KeyRing, ManualClock, SealInput, SecretKey, StateSealer};
    /// let clock = Arc::new(ManualClock::new(1_000));
    /// let sealer = StateSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([1; 32]))).with_clock(clock);
    /// let binding = Binding::new("srv", BoundMethod::ToolsCall, "t", None, None);
    /// let input = SealInput { fingerprint: 0, round: 1, pending: vec![], state: vec![] };
    /// let token = sealer.seal_expiring_by(&binding, input, 1_100).unwrap();
    /// assert_eq!(sealer.open(&token, &binding).unwrap().expires_at, 1_100);
    /// ```
    pub fn seal_expiring_by(
        &self,
        binding: &Binding<'_>,
        input: SealInput,
        not_after: u64,
    ) -> Result<String, SealError> {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|error| SealError::Rng(error.to_string()))?;
        self.seal_with_nonce_expiring_by(binding, input, nonce, not_after)
    }

    /// Like [`seal`](Self::seal) but with a caller-chosen nonce. **For test vectors only:**
    /// reusing a nonce with the same key breaks confidentiality and authenticity.
    #[doc(hidden)]
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
        let issued_at = self.clock.now_unix_seconds();
        let mut envelope = Envelope {
            format_version: FORMAT_VERSION,
            fingerprint: input.fingerprint,
            issued_at,
            expires_at: issued_at.saturating_add(self.ttl_seconds).min(not_after),
            round: input.round,
            pending: input.pending,
            state: input.state,
        };
        let encoded = envelope.to_postcard();
        envelope.state.zeroize();
        let plaintext =
            Zeroizing::new(encoded.map_err(|error| SealError::Encode(error.to_string()))?);
        self.seal_plaintext_with_nonce(binding, &plaintext, nonce)
    }

    /// Encrypts arbitrary plaintext as a token. **For test vectors only** (tokens whose
    /// envelope is undecodable or of another version); same nonce warning as
    /// [`seal_with_nonce`](Self::seal_with_nonce).
    #[doc(hidden)]
    pub fn seal_plaintext_with_nonce(
        &self,
        binding: &Binding<'_>,
        plaintext: &[u8],
        nonce: [u8; NONCE_LEN],
    ) -> Result<String, SealError> {
        let raw_len = HEADER_LEN + plaintext.len() + TAG_LEN;
        // Unpadded base64 length, computed without overflow.
        let size = TOKEN_PREFIX.len() + raw_len / 3 * 4 + [0, 2, 3][raw_len % 3];
        if size > self.max_token_bytes {
            return Err(SealError::TooLarge {
                size,
                limit: self.max_token_bytes,
            });
        }

        let kid = self.keys.sealing_key_id();
        let cipher = XChaCha20Poly1305::new(<&Key>::from(self.keys.sealing_key().as_bytes()));
        let associated_data = binding.associated_data(kid);

        let mut raw = Zeroizing::new(Vec::with_capacity(raw_len));
        raw.extend_from_slice(&kid.to_be_bytes());
        raw.extend_from_slice(&nonce);
        raw.extend_from_slice(plaintext);
        let tag = cipher
            .encrypt_inout_detached(
                <&XNonce>::from(&nonce),
                &associated_data,
                (&mut raw[HEADER_LEN..]).into(),
            )
            .map_err(|_| SealError::Encrypt)?;
        raw.extend_from_slice(&tag);

        let mut token = String::with_capacity(size);
        token.push_str(TOKEN_PREFIX);
        URL_SAFE_NO_PAD.encode_string(&*raw, &mut token);
        Ok(token)
    }

    /// Opens `token` for the request described by `binding`, running every check listed
    /// in the [module docs](self) in order. Never panics, whatever the input.
    ///
    /// ```
    /// # use mrtr_runtime::token::{Binding, BoundMethod, KeyId, KeyRing, Rejection, SecretKey, StateSealer};
    /// let sealer = StateSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([1; 32])));
    /// let binding = Binding::new("srv", BoundMethod::ToolsCall, "t", None, None);
    /// assert_eq!(sealer.open("v1.abc", &binding), Err(Rejection::WrongPrefix));
    /// ```
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
        let nonce = <&XNonce>::try_from(nonce).map_err(|_| Rejection::Malformed {
            detail: "bad nonce length",
        })?;
        let (ciphertext, tag) = sealed.split_at_mut(sealed.len() - TAG_LEN);
        let tag = Tag::try_from(&*tag).map_err(|_| Rejection::Malformed {
            detail: "bad tag length",
        })?;

        let cipher = XChaCha20Poly1305::new(<&Key>::from(key.as_bytes()));
        cipher
            .decrypt_inout_detached(
                nonce,
                &binding.associated_data(kid),
                ciphertext.into(),
                &tag,
            )
            .map_err(|_| Rejection::Unauthentic)?;
        let plaintext: &[u8] = ciphertext;

        // The version byte comes first in every layout; check it before decoding so a
        // future layout is reported as a version mismatch rather than as garbage.
        match plaintext.first() {
            Some(&FORMAT_VERSION) => {}
            Some(&found) => return Err(Rejection::UnsupportedVersion { found }),
            None => return Err(Rejection::UndecodableEnvelope),
        }
        let envelope = Envelope::from_postcard(plaintext)?;

        let now = self.clock.now_unix_seconds();
        if envelope.issued_at > now.saturating_add(self.max_clock_skew_seconds) {
            return Err(Rejection::IssuedInFuture {
                issued_at: envelope.issued_at,
                now,
            });
        }
        if now >= envelope.expires_at {
            return Err(Rejection::Expired {
                expires_at: envelope.expires_at,
                now,
            });
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

#[cfg(test)]
mod tests;
