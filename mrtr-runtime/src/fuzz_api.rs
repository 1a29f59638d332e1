//! What the fuzz targets (`fuzz/`) and their stable drivers (`mrtr-fuzz`) need from the
//! inside of the token layer and the server's payload codec, behind the `fuzzing` feature
//! and nothing else.
//!
//! Bindings are described with owned values ([`BindingSpec`]), opened tokens come back as
//! plain fields ([`Opened`]), and the sealed payload (pending requests, then the machine's
//! state) is split and rebuilt with the server's own functions, so the token and recipe
//! types stay private. This is not an API: it exists so hostile input can be driven through
//! the real sealer, opener and decoder.
//!
//! ```
//! use mrtr_runtime::fuzz_api::{BindingSpec, FuzzSealer, encode_payload};
//! use mrtr_runtime::machine::Method;
//! use mrtr_runtime::token::{KeyId, KeyRing, SecretKey};
//!
//! let sealer = FuzzSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([3; 32])), 1_000);
//! let binding = BindingSpec::new("srv", Method::CallTool, "deploy");
//! let payload = encode_payload(&[], b"locals").unwrap();
//! let token = sealer.seal_payload(&binding, 7, 1, payload.clone(), [0; 24]).unwrap();
//! let opened = sealer.open(&token, &binding).unwrap();
//! assert_eq!((opened.fingerprint, opened.round, opened.payload), (7, 1, payload));
//! assert!(sealer.open(&token, &BindingSpec::new("srv", Method::CallTool, "other")).is_err());
//! ```

use std::sync::Arc;

use rmcp::model::{InputRequest, JsonObject};

use crate::machine::{MachineDescriptor, Method, Recipe};
use crate::token::{Binding, KeyRing, ManualClock, Rejection, SealError, SealInput, StateSealer};

/// Everything a token is bound to, owned.
///
/// ```
/// use mrtr_runtime::fuzz_api::BindingSpec;
/// use mrtr_runtime::machine::Method;
/// let spec = BindingSpec::new("srv", Method::GetPrompt, "ideas").with_principal("alice");
/// assert_eq!(spec.principal.as_deref(), Some("alice"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct BindingSpec {
    /// The server's audience.
    pub audience: String,
    /// The method the token continues.
    pub method: Method,
    /// Tool or prompt name, or resource URI.
    pub target: String,
    /// The request's arguments.
    pub arguments: JsonObject,
    /// The authenticated principal, if any.
    pub principal: Option<String>,
}

impl BindingSpec {
    /// A binding with no arguments and no principal.
    ///
    /// ```
    /// # use mrtr_runtime::fuzz_api::BindingSpec;
    /// # use mrtr_runtime::machine::Method;
    /// assert!(BindingSpec::new("srv", Method::CallTool, "t").arguments.is_empty());
    /// ```
    pub fn new(audience: &str, method: Method, target: &str) -> Self {
        BindingSpec {
            audience: audience.into(),
            method,
            target: target.into(),
            arguments: JsonObject::new(),
            principal: None,
        }
    }

    /// The binding a [`Harness`](crate::testing::Harness) uses for `machine` called with
    /// `arguments` (its audience, no principal).
    ///
    /// ```
    /// # use mrtr_runtime::fuzz_api::BindingSpec;
    /// # use mrtr_runtime::machine::{InputKind, MachineDescriptor};
    /// let tool = rmcp::model::Tool::new("deploy", "Deploys", serde_json::Map::new());
    /// let descriptor = MachineDescriptor::tool(tool, [InputKind::Roots], 1);
    /// assert_eq!(BindingSpec::for_harness(&descriptor, Default::default()).target, "deploy");
    /// ```
    pub fn for_harness(machine: &MachineDescriptor, arguments: JsonObject) -> Self {
        BindingSpec {
            audience: crate::testing::HARNESS_AUDIENCE.into(),
            method: machine.method(),
            target: machine.name().into(),
            arguments,
            principal: None,
        }
    }

    /// The same binding with these arguments.
    ///
    /// ```
    /// # use mrtr_runtime::fuzz_api::BindingSpec;
    /// # use mrtr_runtime::machine::Method;
    /// let args = serde_json::json!({"n": 1}).as_object().cloned().unwrap();
    /// assert_eq!(BindingSpec::new("s", Method::CallTool, "t").with_arguments(args).arguments.len(), 1);
    /// ```
    pub fn with_arguments(mut self, arguments: JsonObject) -> Self {
        self.arguments = arguments;
        self
    }

    /// The same binding for this principal.
    ///
    /// ```
    /// # use mrtr_runtime::fuzz_api::BindingSpec;
    /// # use mrtr_runtime::machine::Method;
    /// assert!(BindingSpec::new("s", Method::CallTool, "t").with_principal("").principal.is_some());
    /// ```
    pub fn with_principal(mut self, principal: &str) -> Self {
        self.principal = Some(principal.into());
        self
    }

    fn binding(&self) -> Binding<'_> {
        Binding::new(
            &self.audience,
            self.method,
            &self.target,
            Some(&self.arguments),
            self.principal.as_deref(),
        )
    }
}

/// What an opened token holds.
///
/// ```
/// # use mrtr_runtime::fuzz_api::{BindingSpec, FuzzSealer};
/// # use mrtr_runtime::machine::Method;
/// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey};
/// let sealer = FuzzSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([3; 32])), 50);
/// let spec = BindingSpec::new("srv", Method::CallTool, "t");
/// let token = sealer.seal_payload(&spec, 1, 2, vec![0], [0; 24]).unwrap();
/// assert_eq!(sealer.open(&token, &spec).unwrap().expires_at, 650);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// The sealing machine's fingerprint.
    pub fingerprint: u64,
    /// Unix seconds from which the token no longer opens.
    pub expires_at: u32,
    /// Completed rounds.
    pub round: u32,
    /// The pending input requests and the machine's state, as the server encoded them.
    pub payload: Vec<u8>,
}

/// The real [`StateSealer`] on a manual clock, driven with [`BindingSpec`]s.
///
/// ```
/// # use mrtr_runtime::fuzz_api::{BindingSpec, FuzzSealer};
/// # use mrtr_runtime::machine::Method;
/// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey};
/// let sealer = FuzzSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([3; 32])), 50);
/// let spec = BindingSpec::new("srv", Method::CallTool, "t");
/// let token = sealer.seal_plaintext(&spec, b"not an envelope", [0; 24]).unwrap();
/// assert_eq!(sealer.open(&token, &spec).unwrap_err().reason(), "unsupported_version");
/// ```
#[derive(Clone)]
pub struct FuzzSealer {
    sealer: StateSealer,
}

impl FuzzSealer {
    /// A sealer with `keys` whose clock stands at `now` (unix seconds).
    ///
    /// ```
    /// # use mrtr_runtime::fuzz_api::FuzzSealer;
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey};
    /// let _ = FuzzSealer::new(KeyRing::new(KeyId(9), SecretKey::from_bytes([1; 32])), 0);
    /// ```
    pub fn new(keys: KeyRing, now: u64) -> Self {
        FuzzSealer {
            sealer: StateSealer::new(keys).with_clock(Arc::new(ManualClock::new(now))),
        }
    }

    /// Seals a well-formed envelope around `payload`, as the server does after a round, but
    /// with a caller-chosen nonce so corpora are reproducible (never do this with a real key).
    ///
    /// ```
    /// # use mrtr_runtime::fuzz_api::{BindingSpec, FuzzSealer};
    /// # use mrtr_runtime::machine::Method;
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey};
    /// let sealer = FuzzSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([3; 32])), 50);
    /// let spec = BindingSpec::new("srv", Method::CallTool, "t");
    /// assert!(sealer.seal_payload(&spec, 0, 1, vec![0, 1], [0; 24]).unwrap().starts_with("mrtr3."));
    /// ```
    pub fn seal_payload(
        &self,
        binding: &BindingSpec,
        fingerprint: u64,
        round: u32,
        payload: Vec<u8>,
        nonce: [u8; 24],
    ) -> Result<String, SealError> {
        self.sealer.seal_with_nonce(
            &binding.binding(),
            SealInput {
                fingerprint,
                round,
                payload,
            },
            nonce,
        )
    }

    /// Encrypts `plaintext` as it stands (not necessarily an envelope) under the sealing
    /// key: what a holder of a leaked key could send.
    ///
    /// ```
    /// # use mrtr_runtime::fuzz_api::{BindingSpec, FuzzSealer};
    /// # use mrtr_runtime::machine::Method;
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey};
    /// let sealer = FuzzSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([3; 32])), 50);
    /// let spec = BindingSpec::new("srv", Method::CallTool, "t");
    /// let token = sealer.seal_plaintext(&spec, &[], [1; 24]).unwrap();
    /// assert_eq!(sealer.open(&token, &spec).unwrap_err().reason(), "undecodable_envelope");
    /// ```
    pub fn seal_plaintext(
        &self,
        binding: &BindingSpec,
        plaintext: &[u8],
        nonce: [u8; 24],
    ) -> Result<String, SealError> {
        self.sealer
            .seal_plaintext_with_nonce(&binding.binding(), plaintext, nonce)
    }

    /// Opens `token` for `binding` with every check the sealer runs (the server then
    /// compares the fingerprint and decodes the payload).
    ///
    /// ```
    /// # use mrtr_runtime::fuzz_api::{BindingSpec, FuzzSealer};
    /// # use mrtr_runtime::machine::Method;
    /// # use mrtr_runtime::token::{KeyId, KeyRing, SecretKey};
    /// let sealer = FuzzSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([3; 32])), 50);
    /// let spec = BindingSpec::new("srv", Method::CallTool, "t");
    /// assert_eq!(sealer.open("mrtr3.", &spec).unwrap_err().reason(), "malformed");
    /// ```
    pub fn open(&self, token: &str, binding: &BindingSpec) -> Result<Opened, Rejection> {
        let envelope = self.sealer.open(token, &binding.binding())?;
        Ok(Opened {
            fingerprint: envelope.fingerprint,
            expires_at: envelope.expires_at,
            round: envelope.round,
            payload: envelope.payload,
        })
    }
}

impl std::fmt::Debug for FuzzSealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FuzzSealer").finish_non_exhaustive()
    }
}

/// A payload as the server encodes it: `requests` stored as the server stores a request no
/// builder made (its JSON text), then `state`.
///
/// ```
/// use mrtr_runtime::fuzz_api::{encode_payload, pending_requests};
/// use mrtr_runtime::machine::input;
/// let asked = vec![("k".to_string(), input::roots().into_request())];
/// let payload = encode_payload(&asked, b"state").unwrap();
/// assert_eq!(pending_requests(&payload, &[]).unwrap(), asked);
/// ```
pub fn encode_payload(
    requests: &[(String, InputRequest)],
    state: &[u8],
) -> Result<Vec<u8>, String> {
    let recipes = requests
        .iter()
        .map(|(key, request)| {
            let recipe = Recipe::Unknown
                .stored(request, &[])
                .map_err(|e| e.to_string())?;
            Ok((key.clone(), recipe))
        })
        .collect::<Result<Vec<_>, String>>()?;
    crate::server::payload::encode_payload(&recipes, state).map_err(|e| e.to_string())
}

/// A payload of pending requests given as `(key, request JSON text)` (which need not be a
/// valid request: the server rebuilds and may refuse it), then `state`.
///
/// ```
/// use mrtr_runtime::fuzz_api::{encode_json_payload, pending_requests};
/// let payload = encode_json_payload(&[("k".into(), "{}".into())], b"").unwrap();
/// assert!(pending_requests(&payload, &[]).is_err());
/// ```
pub fn encode_json_payload(requests: &[(String, String)], state: &[u8]) -> Result<Vec<u8>, String> {
    let recipes: Vec<(String, Recipe)> = requests
        .iter()
        .map(|(key, json)| (key.clone(), Recipe::Json(json.clone())))
        .collect();
    crate::server::payload::encode_payload(&recipes, state).map_err(|e| e.to_string())
}

/// Splits a payload where the server does: the encoded pending requests, and the state.
/// `None` when the pending requests do not decode.
///
/// ```
/// use mrtr_runtime::fuzz_api::{encode_payload, split_payload};
/// let payload = encode_payload(&[], b"state").unwrap();
/// assert_eq!(split_payload(&payload), Some((&[0u8][..], &b"state"[..])));
/// ```
pub fn split_payload(payload: &[u8]) -> Option<(&[u8], &[u8])> {
    let (_, state) = postcard::take_from_bytes::<Vec<(String, Recipe)>>(payload).ok()?;
    Some(payload.split_at(payload.len() - state.len()))
}

/// The pending requests the server rebuilds from a payload of a machine whose body has the
/// string `literals` ([`MachineDescriptor::literals`](crate::machine::MachineDescriptor)),
/// or why it cannot.
///
/// ```
/// use mrtr_runtime::fuzz_api::pending_requests;
/// assert!(pending_requests(&[0], &[]).unwrap().is_empty());
/// assert!(pending_requests(&[1], &[]).is_err());
/// ```
pub fn pending_requests(
    payload: &[u8],
    literals: &[&'static str],
) -> Result<Vec<(String, InputRequest)>, String> {
    crate::server::payload::decode_payload(payload, literals)
        .map(|(requests, _, _)| requests)
        .map_err(|e| e.to_string())
}
