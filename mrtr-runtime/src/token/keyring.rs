//! Secret keys and the key ring: one key seals, every key opens.
//!
//! Operators configure keys in the `MRTR_KEYS` environment variable (see [`KeyRing::parse`]
//! for the format); [`KeyRing`] describes how to rotate them.

use std::collections::BTreeMap;
use std::fmt;

use base64::Engine as _;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, URL_SAFE_NO_PAD};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Name of the environment variable [`KeyRing::from_env`] reads.
pub const KEYS_ENV_VAR: &str = "MRTR_KEYS";

/// Operators may paste keys with or without `=` padding; the alphabet must be base64url.
const KEY_BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// A 256-bit secret key for XChaCha20-Poly1305.
///
/// The bytes are wiped from memory when the key is dropped, and `Debug` never shows them.
///
/// ```
/// use mrtr_runtime::token::SecretKey;
///
/// let key = SecretKey::from_bytes([7; 32]);
/// assert_eq!(format!("{key:?}"), "SecretKey(<redacted>)");
/// let text = key.to_base64url();
/// assert_eq!(SecretKey::from_base64url(&text).unwrap(), key);
/// ```
#[derive(Clone, PartialEq, Eq, Zeroize, ZeroizeOnDrop)]
pub struct SecretKey([u8; SecretKey::LEN]);

impl SecretKey {
    /// Length of a key in bytes.
    pub const LEN: usize = 32;

    /// Wraps raw key bytes. The bytes must come from a cryptographically secure random source.
    ///
    /// ```
    /// # use mrtr_runtime::token::SecretKey;
    /// let key = SecretKey::from_bytes([0x42; 32]);
    /// assert_eq!(key.as_bytes(), &[0x42; 32]);
    /// ```
    pub fn from_bytes(bytes: [u8; Self::LEN]) -> Self {
        Self(bytes)
    }

    /// Draws a fresh key from the operating system's random number generator.
    ///
    /// ```
    /// # use mrtr_runtime::token::SecretKey;
    /// let a = SecretKey::generate().unwrap();
    /// let b = SecretKey::generate().unwrap();
    /// assert_ne!(a, b);
    /// ```
    pub fn generate() -> Result<Self, KeyRingError> {
        let mut bytes = [0u8; Self::LEN];
        getrandom::fill(&mut bytes).map_err(|error| KeyRingError::Rng(error.to_string()))?;
        let key = Self(bytes);
        bytes.zeroize();
        Ok(key)
    }

    /// Decodes a key written as base64url (43 characters without padding, or 44 with one `=`).
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyRingError, SecretKey};
    /// assert!(SecretKey::from_base64url("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").is_ok());
    /// assert_eq!(
    ///     SecretKey::from_base64url("AAAA"),
    ///     Err(KeyRingError::WrongKeyLength { entry: None, len: 3 })
    /// );
    /// ```
    pub fn from_base64url(text: &str) -> Result<Self, KeyRingError> {
        decode_key(text.trim(), None)
    }

    /// Encodes the key as unpadded base64url, the form [`KeyRing::parse`] reads.
    ///
    /// This is how operators make a key for `MRTR_KEYS`:
    ///
    /// ```
    /// # use mrtr_runtime::token::SecretKey;
    /// let entry = format!("1:{}", SecretKey::generate().unwrap().to_base64url());
    /// assert_eq!(entry.len(), 2 + 43);
    /// ```
    pub fn to_base64url(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.0)
    }

    /// The raw key bytes.
    ///
    /// ```
    /// # use mrtr_runtime::token::SecretKey;
    /// assert_eq!(SecretKey::from_bytes([1; 32]).as_bytes().len(), 32);
    /// ```
    pub fn as_bytes(&self) -> &[u8; Self::LEN] {
        &self.0
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(<redacted>)")
    }
}

/// Operator-assigned identifier of a key, carried in clear at the start of every token so
/// the server can pick the opening key without trying them all.
///
/// ```
/// use mrtr_runtime::token::KeyId;
///
/// assert_eq!(KeyId(7).to_string(), "7");
/// assert_eq!(KeyId(0x0102).to_be_bytes(), [1, 2]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyId(pub u16);

impl KeyId {
    /// The two big-endian bytes that represent this id in a token and its associated data.
    ///
    /// ```
    /// # use mrtr_runtime::token::KeyId;
    /// assert_eq!(KeyId(258).to_be_bytes(), [1, 2]);
    /// ```
    pub fn to_be_bytes(self) -> [u8; 2] {
        self.0.to_be_bytes()
    }
}

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Why a key or key ring could not be built. Messages never contain key material.
///
/// ```
/// use mrtr_runtime::token::{KeyRing, KeyRingError};
///
/// let error = KeyRing::parse("").unwrap_err();
/// assert_eq!(error, KeyRingError::Empty);
/// assert!(error.to_string().contains("MRTR_KEYS"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyRingError {
    /// The configuration holds no key at all.
    #[error(
        "no key configured: MRTR_KEYS must hold comma-separated `kid:base64url-key` entries, \
         e.g. `MRTR_KEYS=1:<43 base64url characters>`"
    )]
    Empty,
    /// An entry between commas is blank (e.g. a trailing comma).
    #[error("MRTR_KEYS entry {entry} is empty (look for a stray or trailing comma)")]
    EmptyEntry {
        /// 1-based position of the entry.
        entry: usize,
    },
    /// An entry has no `:` between key id and key.
    #[error("MRTR_KEYS entry {entry} is not of the form `kid:base64url-key` (missing `:`)")]
    MissingSeparator {
        /// 1-based position of the entry.
        entry: usize,
    },
    /// The key id is not an integer in `0..=65535`.
    #[error("MRTR_KEYS entry {entry}: the key id must be an integer from 0 to 65535")]
    BadKeyId {
        /// 1-based position of the entry.
        entry: usize,
    },
    /// The key is not valid base64url.
    #[error("{}the key is not valid base64url (alphabet A-Z a-z 0-9 - _)", entry_prefix(*.entry))]
    BadBase64 {
        /// 1-based position of the entry, when parsing a key ring.
        entry: Option<usize>,
    },
    /// The key is written in the base64url alphabet but has a length no 32-byte key has
    /// (e.g. it was truncated when pasted).
    #[error("{}the key is {chars} characters long; a 32-byte key is 43 base64url characters (44 with one `=`)", entry_prefix(*.entry))]
    WrongKeyTextLength {
        /// 1-based position of the entry, when parsing a key ring.
        entry: Option<usize>,
        /// Length of the key text in characters.
        chars: usize,
    },
    /// The key does not decode to exactly 32 bytes.
    #[error("{}the key decodes to {len} bytes; it must be exactly 32 bytes (43 base64url characters)", entry_prefix(*.entry))]
    WrongKeyLength {
        /// 1-based position of the entry, when parsing a key ring.
        entry: Option<usize>,
        /// Decoded length in bytes.
        len: usize,
    },
    /// Two keys share one id.
    #[error("key id {kid} appears more than once; every key needs its own id")]
    DuplicateKeyId {
        /// The repeated id.
        kid: KeyId,
    },
    /// `MRTR_KEYS` is set but is not valid UTF-8.
    #[error("MRTR_KEYS is not valid UTF-8")]
    NotUnicode,
    /// The operating system's random number generator failed.
    #[error("the operating system random number generator failed: {0}")]
    Rng(String),
}

fn entry_prefix(entry: Option<usize>) -> String {
    entry.map_or_else(String::new, |entry| format!("MRTR_KEYS entry {entry}: "))
}

/// Says at INFO that states are sealed with a process-local key: through `tracing` when a
/// subscriber is installed (its filter decides), else once per process on stderr, so a
/// server started without `MRTR_KEYS` and without logging set up still says so.
fn tell_process_local_key() {
    let message = format!(
        "no {KEYS_ENV_VAR} set: sealing requestState with a key made for this process \
         (fine for one instance; to keep calls open across restarts or instances, share \
         one with {KEYS_ENV_VAR}=<kid>:<base64url 32-byte key>)"
    );
    // Through the subscriber when there is one (its filter decides, as for any INFO line;
    // one line per server built); on stderr, once per process, only when no subscriber was
    // ever installed.
    let has_subscriber = tracing::dispatcher::get_default(|dispatch| {
        !dispatch.is::<tracing::subscriber::NoSubscriber>()
    });
    if has_subscriber {
        tracing::info!("{message}");
    } else {
        static TOLD: std::sync::Once = std::sync::Once::new();
        TOLD.call_once(|| eprintln!("INFO mrtr: {message}"));
    }
}

fn decode_key(text: &str, entry: Option<usize>) -> Result<SecretKey, KeyRingError> {
    let mut bytes = KEY_BASE64.decode(text).map_err(|_| {
        // Every character valid but still undecodable: the length is what is wrong.
        let alphabet_only = text
            .trim_end_matches('=')
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if alphabet_only && !text.is_empty() {
            KeyRingError::WrongKeyTextLength {
                entry,
                chars: text.chars().count(),
            }
        } else {
            KeyRingError::BadBase64 { entry }
        }
    })?;
    let result = <[u8; SecretKey::LEN]>::try_from(bytes.as_slice())
        .map(SecretKey)
        .map_err(|_| KeyRingError::WrongKeyLength {
            entry,
            len: bytes.len(),
        });
    bytes.zeroize();
    result
}

/// The keys a server seals and opens tokens with: one sealing key, any number of opening keys.
///
/// The sealing key also opens. Rotating a key without breaking in-flight flows takes three
/// deploys:
///
/// 1. add the new key as an opening key everywhere: `MRTR_KEYS=1:OLD,2:NEW`;
/// 2. once every instance runs step 1, make it the sealing key: `MRTR_KEYS=2:NEW,1:OLD`;
/// 3. one token lifetime (TTL) later, drop the old key: `MRTR_KEYS=2:NEW`.
///
/// Never promote a new key to sealing before every instance can open with it.
///
/// ```
/// use mrtr_runtime::token::{KeyId, KeyRing, SecretKey};
///
/// let ring = KeyRing::new(KeyId(2), SecretKey::from_bytes([2; 32]))
///     .with_opening_key(KeyId(1), SecretKey::from_bytes([1; 32]))
///     .unwrap();
/// assert_eq!(ring.sealing_key_id(), KeyId(2));
/// assert_eq!(ring.key_ids().collect::<Vec<_>>(), [KeyId(1), KeyId(2)]);
/// ```
#[derive(Clone)]
pub struct KeyRing {
    sealing: KeyId,
    keys: BTreeMap<KeyId, SecretKey>,
}

impl KeyRing {
    /// A ring with a single key that seals and opens.
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey};
    /// let ring = KeyRing::new(KeyId(1), SecretKey::from_bytes([1; 32]));
    /// assert!(ring.key(KeyId(1)).is_some());
    /// ```
    pub fn new(kid: KeyId, key: SecretKey) -> Self {
        Self {
            sealing: kid,
            keys: BTreeMap::from([(kid, key)]),
        }
    }

    /// Adds a key that opens tokens but does not seal new ones (an older or an upcoming key).
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyId, KeyRing, KeyRingError, SecretKey};
    /// let ring = KeyRing::new(KeyId(1), SecretKey::from_bytes([1; 32]));
    /// let error = ring.with_opening_key(KeyId(1), SecretKey::from_bytes([2; 32])).unwrap_err();
    /// assert_eq!(error, KeyRingError::DuplicateKeyId { kid: KeyId(1) });
    /// ```
    pub fn with_opening_key(mut self, kid: KeyId, key: SecretKey) -> Result<Self, KeyRingError> {
        if self.keys.contains_key(&kid) {
            return Err(KeyRingError::DuplicateKeyId { kid });
        }
        self.keys.insert(kid, key);
        Ok(self)
    }

    /// Parses the `MRTR_KEYS` format: comma-separated `kid:key` entries, where `kid` is an
    /// integer from 0 to 65535 and `key` is 32 random bytes in base64url (43 characters;
    /// one trailing `=` is tolerated). The **first** entry seals; all entries open.
    /// Whitespace around entries is ignored.
    ///
    /// ```text
    /// MRTR_KEYS=2:<new key>,1:<old key>
    /// ```
    ///
    /// Generate a key with `SecretKey::generate()?.to_base64url()`, or
    /// `head -c32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '='`.
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyId, KeyRing, KeyRingError, SecretKey};
    /// let a = SecretKey::from_bytes([0xA; 32]).to_base64url();
    /// let b = SecretKey::from_bytes([0xB; 32]).to_base64url();
    /// let ring = KeyRing::parse(&format!("2:{a}, 1:{b}")).unwrap();
    /// assert_eq!(ring.sealing_key_id(), KeyId(2));
    /// assert!(ring.key(KeyId(1)).is_some());
    ///
    /// assert_eq!(
    ///     KeyRing::parse(&format!("x:{a}")).unwrap_err(),
    ///     KeyRingError::BadKeyId { entry: 1 }
    /// );
    /// ```
    pub fn parse(text: &str) -> Result<Self, KeyRingError> {
        if text.trim().is_empty() {
            return Err(KeyRingError::Empty);
        }
        let mut ring: Option<KeyRing> = None;
        for (index, raw_entry) in text.split(',').enumerate() {
            let entry = index + 1;
            let raw_entry = raw_entry.trim();
            if raw_entry.is_empty() {
                return Err(KeyRingError::EmptyEntry { entry });
            }
            let (kid_text, key_text) = raw_entry
                .split_once(':')
                .ok_or(KeyRingError::MissingSeparator { entry })?;
            let kid = kid_text
                .trim()
                .parse::<u16>()
                .map(KeyId)
                .map_err(|_| KeyRingError::BadKeyId { entry })?;
            let key = decode_key(key_text.trim(), Some(entry))?;
            ring = Some(match ring {
                None => KeyRing::new(kid, key),
                Some(ring) => ring.with_opening_key(kid, key)?,
            });
        }
        ring.ok_or(KeyRingError::Empty)
    }

    /// Reads the key ring from `MRTR_KEYS` (format: [`KeyRing::parse`]).
    ///
    /// Returns `Ok(None)` when the variable is not set, and an error when it is set but
    /// malformed (including set to an empty string), so a typo never silently falls back to
    /// a process-local key.
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyRing, KEYS_ENV_VAR};
    /// let ring: Option<KeyRing> = KeyRing::from_env().expect("MRTR_KEYS is malformed");
    /// assert_eq!(ring.is_none(), std::env::var_os(KEYS_ENV_VAR).is_none());
    /// ```
    pub fn from_env() -> Result<Option<Self>, KeyRingError> {
        match std::env::var(KEYS_ENV_VAR) {
            Ok(text) => Self::parse(&text).map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(KeyRingError::NotUnicode),
        }
    }

    /// Reads `MRTR_KEYS` if set, otherwise generates a process-local key
    /// (see [`KeyRing::generate_process_local`]).
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyId, KeyRing, KEYS_ENV_VAR};
    /// let ring = KeyRing::from_env_or_generate().expect("MRTR_KEYS is malformed");
    /// if std::env::var_os(KEYS_ENV_VAR).is_none() {
    ///     assert_eq!(ring.key_ids().collect::<Vec<_>>(), [KeyId(0)]); // one process-local key
    /// }
    /// ```
    pub fn from_env_or_generate() -> Result<Self, KeyRingError> {
        match Self::from_env()? {
            Some(ring) => Ok(ring),
            None => Self::generate_process_local(),
        }
    }

    /// A ring with one fresh random key (id 0) that lives only in this process.
    ///
    /// Tokens sealed by it cannot be opened by another instance or after a restart, so it
    /// says so once per process at INFO: multi-instance deployments share keys through
    /// `MRTR_KEYS`.
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyId, KeyRing};
    /// let ring = KeyRing::generate_process_local().unwrap();
    /// assert_eq!(ring.sealing_key_id(), KeyId(0));
    /// ```
    pub fn generate_process_local() -> Result<Self, KeyRingError> {
        let key = SecretKey::generate()?;
        tell_process_local_key();
        Ok(Self::new(KeyId(0), key))
    }

    /// The id of the key that seals new tokens.
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey};
    /// assert_eq!(KeyRing::new(KeyId(9), SecretKey::from_bytes([0; 32])).sealing_key_id(), KeyId(9));
    /// ```
    pub fn sealing_key_id(&self) -> KeyId {
        self.sealing
    }

    /// The key with this id, if the ring holds it.
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey};
    /// let ring = KeyRing::new(KeyId(1), SecretKey::from_bytes([0; 32]));
    /// assert!(ring.key(KeyId(2)).is_none());
    /// ```
    pub fn key(&self, kid: KeyId) -> Option<&SecretKey> {
        self.keys.get(&kid)
    }

    /// The sealing key.
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey};
    /// let ring = KeyRing::new(KeyId(1), SecretKey::from_bytes([5; 32]));
    /// assert_eq!(ring.sealing_key().as_bytes(), &[5; 32]);
    /// ```
    pub fn sealing_key(&self) -> &SecretKey {
        // `new` inserts the sealing key and nothing removes keys, so the lookup cannot fail.
        &self.keys[&self.sealing]
    }

    /// Ids of every key that opens tokens, in ascending order.
    ///
    /// ```
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey};
    /// let ring = KeyRing::new(KeyId(3), SecretKey::from_bytes([0; 32]));
    /// assert_eq!(ring.key_ids().collect::<Vec<_>>(), [KeyId(3)]);
    /// ```
    pub fn key_ids(&self) -> impl Iterator<Item = KeyId> + '_ {
        self.keys.keys().copied()
    }
}

impl fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyRing")
            .field("sealing", &self.sealing)
            .field("key_ids", &self.keys.keys().collect::<Vec<_>>())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_text(byte: u8) -> String {
        SecretKey::from_bytes([byte; 32]).to_base64url()
    }

    #[test]
    fn first_entry_seals_and_all_open() {
        let ring = KeyRing::parse(&format!("2:{},1:{}", key_text(2), key_text(1))).unwrap();
        assert_eq!(ring.sealing_key_id(), KeyId(2));
        assert_eq!(ring.sealing_key().as_bytes(), &[2; 32]);
        assert_eq!(ring.key(KeyId(1)).unwrap().as_bytes(), &[1; 32]);
    }

    #[test]
    fn tolerates_whitespace_and_padding() {
        let ring = KeyRing::parse(&format!(" 7 : {}= \n", key_text(7))).unwrap();
        assert_eq!(ring.sealing_key_id(), KeyId(7));
        assert_eq!(ring.sealing_key().as_bytes(), &[7; 32]);
    }

    #[test]
    fn malformed_rings_get_specific_errors() {
        let good = key_text(1);
        let cases = [
            (String::new(), KeyRingError::Empty),
            ("  ".to_owned(), KeyRingError::Empty),
            (format!("1:{good},"), KeyRingError::EmptyEntry { entry: 2 }),
            (good.clone(), KeyRingError::MissingSeparator { entry: 1 }),
            (format!("one:{good}"), KeyRingError::BadKeyId { entry: 1 }),
            (format!("-1:{good}"), KeyRingError::BadKeyId { entry: 1 }),
            (format!("65536:{good}"), KeyRingError::BadKeyId { entry: 1 }),
            (
                format!("1:{good},2:not*base64"),
                KeyRingError::BadBase64 { entry: Some(2) },
            ),
            (
                // Standard alphabet characters are not base64url.
                format!("1:{}", "+/".repeat(21) + "A"),
                KeyRingError::BadBase64 { entry: Some(1) },
            ),
            (
                "1:AAAA".to_owned(),
                KeyRingError::WrongKeyLength {
                    entry: Some(1),
                    len: 3,
                },
            ),
            (
                // Every character is base64url; five of them decode to nothing.
                "1:short".to_owned(),
                KeyRingError::WrongKeyTextLength {
                    entry: Some(1),
                    chars: 5,
                },
            ),
            (
                // `-` and `_` are base64url too: a length problem, not bad base64.
                "1:ab-cd".to_owned(),
                KeyRingError::WrongKeyTextLength {
                    entry: Some(1),
                    chars: 5,
                },
            ),
            (
                "1:ab_cd".to_owned(),
                KeyRingError::WrongKeyTextLength {
                    entry: Some(1),
                    chars: 5,
                },
            ),
            (
                format!("1:{good},1:{}", key_text(2)),
                KeyRingError::DuplicateKeyId { kid: KeyId(1) },
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(
                KeyRing::parse(&input).unwrap_err(),
                expected,
                "input {input:?}"
            );
        }
    }

    #[test]
    fn messages_name_the_entry_and_the_key_id() {
        let good = key_text(1);
        assert_eq!(
            KeyRing::parse(&format!("1:{good},2:AAAA"))
                .unwrap_err()
                .to_string(),
            "MRTR_KEYS entry 2: the key decodes to 3 bytes; it must be exactly 32 bytes \
             (43 base64url characters)"
        );
        assert_eq!(
            SecretKey::from_base64url("AAAA").unwrap_err().to_string(),
            "the key decodes to 3 bytes; it must be exactly 32 bytes (43 base64url characters)"
        );
        assert_eq!(
            KeyRing::parse(&format!("258:{good},258:{good}"))
                .unwrap_err()
                .to_string(),
            "key id 258 appears more than once; every key needs its own id"
        );
    }

    #[test]
    fn error_messages_never_echo_key_material() {
        let secret = key_text(9);
        for input in [
            format!("{secret}:1"),
            format!("1:{secret}x"),
            format!("1:{}", &secret[..40]),
            secret.clone(),
        ] {
            let message = KeyRing::parse(&input).unwrap_err().to_string();
            assert!(!message.contains(&secret[..20]), "{message}");
        }
    }

    #[test]
    fn debug_output_hides_keys() {
        let ring = KeyRing::parse(&format!("1:{}", key_text(0xAB))).unwrap();
        let debug = format!("{ring:?} {:?}", ring.sealing_key());
        assert!(!debug.contains(&key_text(0xAB)[..10]));
        assert!(!debug.to_lowercase().contains("abab"));
        assert!(!debug.contains("171"));
        assert_eq!(
            debug,
            "KeyRing { sealing: KeyId(1), key_ids: [KeyId(1)] } SecretKey(<redacted>)"
        );
    }

    #[test]
    fn process_local_keys_are_told_at_info_with_how_to_share_one() {
        let (logs, guard) = crate::captured_logs::CapturedLogs::install();
        let ring = KeyRing::generate_process_local().unwrap();
        drop(guard);
        assert_eq!(ring.key_ids().count(), 1);
        let log = logs.text();
        assert!(log.contains("INFO"), "{log}");
        assert!(!log.contains("WARN"), "{log}");
        assert!(
            log.contains("MRTR_KEYS=<kid>:<base64url 32-byte key>"),
            "{log}"
        );
        assert!(
            !log.contains(&ring.sealing_key().to_base64url()),
            "the key must not be logged"
        );
    }

    #[test]
    fn generated_keys_round_trip_through_text() {
        let key = SecretKey::generate().unwrap();
        let text = key.to_base64url();
        assert_eq!(text.len(), 43);
        assert_eq!(SecretKey::from_base64url(&text).unwrap(), key);
    }
}
