//! The sealed `requestState` token.
//!
//! Between rounds the server hands the client an opaque `requestState`; the client echoes
//! it on the retry and any server instance holding the key continues the flow. The token
//! is encrypted (clients must not read server state) and authenticated (clients must not
//! change it), and it only opens for the request it was sealed for.
//!
//! What this module exposes is what an operator configures and observes: the key ring
//! ([`KeyRing`], `MRTR_KEYS`), the clock, the limits and the [`Rejection`] reasons in the
//! server log. The wire layout itself is private to the crate, so it can change without a
//! semver break (the token's prefix names the layout; an old prefix is simply rejected and
//! the client starts over).
//!
//! # Wire format (`mrtr3`)
//!
//! ```text
//! token      = "mrtr3." || base64url_nopad( kid || nonce || ciphertext || tag )
//! kid        = key id, u16 big-endian (2 bytes), selects the key in the KeyRing
//! nonce      = 24 random bytes from the OS RNG, fresh for every seal
//! ciphertext = XChaCha20-Poly1305(key, nonce, plaintext, associated data), tag = 16 bytes
//! plaintext  = version (1, = 3) || fingerprint (u64 LE) || expires_at (u32 LE, Unix s)
//!              || round (postcard varint) || payload (the rest)
//! payload    = postcard(pending input requests, compact) || postcard(tool state)
//! AAD        = lp("mrtr3.") || kid || lp(audience) || lp(method) || lp(target)
//!              || SHA-256(canonical JSON of the arguments) || principal (never transmitted)
//! ```
//!
//! The published test vectors in `tests/vectors/token-v3.json` freeze this format.
//!
//! # Opening
//!
//! Opening checks, in order, and stops at the first failure: the size cap (before any
//! decoding), the prefix, strict base64url, the minimum length, that the key id is known,
//! the AEAD tag over the bound associated data, the envelope format version, the header
//! decoding, that the expiry is not further ahead than this server's TTL allows (clock
//! skew included), and that it has not passed. The server then compares the fingerprint.
//!
//! Each failure is a distinct [`Rejection`] for the server log. The client always gets the
//! same answer: JSON-RPC error -32602 with [`REJECTED_STATE_MESSAGE`].
//!
//! ```
//! use mrtr_runtime::token::{Rejection, TOKEN_PREFIX};
//!
//! assert_eq!(TOKEN_PREFIX, "mrtr3.");
//! assert_eq!(Rejection::Unauthentic.reason(), "unauthentic");
//! ```

mod aead;
mod binding;
mod clock;
mod envelope;
mod keyring;
mod sealer;

use std::time::Duration;

pub use binding::UnknownMethod;
pub(crate) use binding::{Binding, canonical_json};
pub use clock::{Clock, ManualClock, SystemClock};
pub(crate) use envelope::{Envelope, FORMAT_VERSION};
pub use keyring::{KEYS_ENV_VAR, KeyId, KeyRing, KeyRingError, SecretKey};
pub(crate) use sealer::{SealError, SealInput, StateSealer, sealed_len};

/// The token's wire internals, for the repository's own test vectors, property tests,
/// fuzz targets and benchmarks. **Not covered by semver**; enabled by the
/// `token-internals` feature, which applications should never turn on.
#[cfg(feature = "token-internals")]
#[doc(hidden)]
pub mod internals {
    #[allow(deprecated)]
    pub use super::binding::BoundMethod;
    pub use super::binding::{Binding, canonical_json};
    pub use super::envelope::{Envelope, FORMAT_VERSION};
    pub use super::sealer::{NONCE_LEN, SealError, SealInput, StateSealer};
    pub use crate::machine::Method;
}

/// Text every token starts with; it names the wire format and is bound into the AAD.
///
/// ```
/// assert!(mrtr_runtime::token::TOKEN_PREFIX.ends_with('.'));
/// ```
pub const TOKEN_PREFIX: &str = "mrtr3.";

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
///
/// ```
/// assert_eq!(mrtr_runtime::token::DEFAULT_TTL.as_secs(), 600);
/// ```
pub const DEFAULT_TTL: Duration = Duration::from_secs(600);

/// Default cap on the token length in bytes, checked before any decoding: 64 KiB.
///
/// ```
/// assert_eq!(mrtr_runtime::token::DEFAULT_MAX_TOKEN_BYTES, 65_536);
/// ```
pub const DEFAULT_MAX_TOKEN_BYTES: usize = 64 * 1024;

/// How far a token's expiry may lie beyond now + TTL by default (clock skew between
/// instances).
///
/// ```
/// assert_eq!(mrtr_runtime::token::DEFAULT_MAX_CLOCK_SKEW.as_secs(), 60);
/// ```
pub const DEFAULT_MAX_CLOCK_SKEW: Duration = Duration::from_secs(60);

/// Why a token did not open. For the server log only; the client always gets
/// [`REJECTED_STATE_MESSAGE`].
///
/// ```
/// use mrtr_runtime::token::Rejection;
///
/// assert_eq!(Rejection::WrongPrefix.reason(), "wrong_prefix");
/// assert_eq!(Rejection::WrongPrefix.to_string(), "requestState does not start with `mrtr3.`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Rejection {
    /// Longer than the size cap; nothing was decoded.
    #[error("requestState is {size} bytes, over the {limit}-byte limit")]
    TooLarge {
        /// Length of the token in bytes.
        size: usize,
        /// The configured cap.
        limit: usize,
    },
    /// Does not start with [`TOKEN_PREFIX`] (also: a token of an older wire format).
    #[error("requestState does not start with `{}`", TOKEN_PREFIX)]
    WrongPrefix,
    /// Not strict unpadded base64url, or too short to hold key id, nonce and tag.
    #[error("requestState is malformed: {detail}")]
    Malformed {
        /// Which structural check failed.
        detail: &'static str,
    },
    /// Sealed under a key id this server does not hold.
    #[error("requestState was sealed with key id {kid}, which this server does not hold")]
    UnknownKey {
        /// The key id in the token.
        kid: KeyId,
    },
    /// The AEAD tag does not verify: the token was altered, or it was sealed for another
    /// audience, method, target, arguments or principal, or with another key.
    #[error(
        "requestState failed authentication: altered, or sealed for another \
         audience/method/target/arguments/principal or with another key"
    )]
    Unauthentic,
    /// Authentic, but the plaintext is not an envelope this version can decode.
    #[error("requestState is authentic but its envelope does not decode")]
    UndecodableEnvelope,
    /// Authentic, but written in an envelope format version this build does not read.
    #[error(
        "requestState envelope has format version {found}; this build reads {}",
        FORMAT_VERSION
    )]
    UnsupportedVersion {
        /// The version in the envelope.
        found: u8,
    },
    /// The expiry lies further ahead than this server's TTL (plus the allowed clock skew)
    /// allows: sealed by an instance whose clock runs ahead, or with a longer TTL.
    #[error(
        "requestState expires at {expires_at}, further ahead of this server's clock \
         ({now}) than its TTL and clock skew allow"
    )]
    ExpiresTooLate {
        /// When the token would stop opening.
        expires_at: u64,
        /// This server's clock.
        now: u64,
    },
    /// The token's lifetime is over.
    #[error(
        "requestState expired at {expires_at}, {} s ago (now {now})",
        now.saturating_sub(*expires_at)
    )]
    Expired {
        /// When the token stopped opening.
        expires_at: u64,
        /// This server's clock.
        now: u64,
    },
    /// Sealed by another version of the tool's code: authentic, but stale.
    #[error(
        "requestState was sealed by another version of this tool \
         (fingerprint {sealed:#018x}, running {expected:#018x})"
    )]
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
            Self::ExpiresTooLate { .. } => "expires_too_late",
            Self::Expired { .. } => "expired",
            Self::FingerprintMismatch { .. } => "fingerprint_mismatch",
        }
    }
}

#[cfg(test)]
mod tests;
