//! What a token looks like to the outside: its prefix, the default limits, and why one is
//! refused ([`Rejection`]; the client only ever sees [`REJECTED_STATE_MESSAGE`]).

use std::time::Duration;

use super::keyring::KeyId;

/// The only envelope layout this version of `mrtr` writes and reads.
pub const FORMAT_VERSION: u8 = 3;

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
