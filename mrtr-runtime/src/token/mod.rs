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
pub(crate) mod nonce;
mod sealer;
mod wire;

pub use binding::UnknownMethod;
#[cfg(test)]
pub(crate) use binding::canonical_json;
pub(crate) use binding::{Binding, arguments_digest, canonical_json_sorted};
pub use clock::{Clock, ManualClock, SystemClock};
pub(crate) use envelope::Envelope;
pub use keyring::{KEYS_ENV_VAR, KeyId, KeyRing, KeyRingError, SecretKey};
pub(crate) use sealer::{SealError, SealInput, StateSealer, sealed_len};
pub use wire::{
    DEFAULT_MAX_CLOCK_SKEW, DEFAULT_MAX_TOKEN_BYTES, DEFAULT_TTL, REJECTED_STATE_MESSAGE,
    Rejection, TOKEN_PREFIX,
};

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

#[cfg(test)]
mod tests;
