//! Target 1: arbitrary strings into the token opener, with a real two-key ring and eight
//! bindings that differ in one bound item each.
//!
//! Oracle: opening never panics, and a token opens only if it is one this fixture sealed,
//! with a key of the ring, for exactly that binding, and still valid on the fixture's clock.
//! Every other string — including real tokens sealed with a foreign key, for another
//! binding, expired, issued in the future, or around a plaintext that is not an envelope —
//! must be rejected.

use std::sync::OnceLock;

use mrtr_runtime::fuzz_api::{BindingSpec, FuzzSealer, encode_payload};
use mrtr_runtime::machine::{Method, input};
use mrtr_runtime::token::{KeyId, KeyRing, SecretKey};
use serde_json::json;

/// The fixture's clock, unix seconds.
const NOW: u64 = 1_800_000_000;

/// What a token was sealed with: fingerprint, round, payload (pending requests and state).
type Contents = (u64, u32, Vec<u8>);

/// One token the fixture sealed.
struct Sealed {
    token: String,
    /// Index into the bindings it was sealed for.
    binding: usize,
    /// What opening it must give back, when it must open at all.
    opens_to: Option<Contents>,
}

struct Fixture {
    opener: FuzzSealer,
    bindings: Vec<BindingSpec>,
    sealed: Vec<Sealed>,
}

fn arguments(value: serde_json::Value) -> rmcp::model::JsonObject {
    value.as_object().cloned().unwrap_or_default()
}

fn bindings() -> Vec<BindingSpec> {
    let base = BindingSpec::new("fuzz", Method::CallTool, "deploy")
        .with_arguments(arguments(json!({"service": "api", "replicas": 2})));
    vec![
        base.clone(),
        base.clone().with_principal("alice"),
        base.clone().with_principal(""),
        base.clone()
            .with_arguments(arguments(json!({"service": "apI", "replicas": 2}))),
        BindingSpec {
            audience: "fuzz2".into(),
            ..base.clone()
        },
        BindingSpec {
            method: Method::GetPrompt,
            ..base.clone()
        },
        BindingSpec {
            method: Method::ReadResource,
            ..base.clone()
        },
        BindingSpec {
            target: "deplo".into(),
            ..base
        },
    ]
}

fn nonce(seed: usize) -> [u8; 24] {
    let mut nonce = [0u8; 24];
    for (i, byte) in nonce.iter_mut().enumerate() {
        *byte = (seed * 31 + i * 7) as u8;
    }
    nonce
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let sealing = SecretKey::from_bytes([0x11; 32]);
        let retired = SecretKey::from_bytes([0x22; 32]);
        let ring = KeyRing::new(KeyId(1), sealing.clone())
            .with_opening_key(KeyId(2), retired.clone())
            .expect("distinct key ids");
        let opener = FuzzSealer::new(ring, NOW);
        // Real sealers that must not be trusted (or not now) by the opener.
        let with_retired = FuzzSealer::new(KeyRing::new(KeyId(2), retired), NOW);
        let foreign = FuzzSealer::new(
            KeyRing::new(KeyId(1), SecretKey::from_bytes([0x33; 32])),
            NOW,
        );
        let unknown_kid = FuzzSealer::new(KeyRing::new(KeyId(7), sealing.clone()), NOW);
        let long_ago = FuzzSealer::new(KeyRing::new(KeyId(1), sealing.clone()), NOW - 100_000);
        let ahead = FuzzSealer::new(KeyRing::new(KeyId(1), sealing), NOW + 100_000);

        let bindings = bindings();
        let mut sealed = Vec::new();
        let mut seal = |sealer: &FuzzSealer, binding: usize, opens: bool, state: Vec<u8>| {
            let index = sealed.len();
            let pending = vec![(format!("ask_{index}"), input::roots().into_request())];
            let payload = encode_payload(&pending, &state).expect("the fixture encodes");
            let token = sealer
                .seal_payload(
                    &bindings[binding],
                    0xF00D + index as u64,
                    index as u32,
                    payload.clone(),
                    nonce(index),
                )
                .expect("fixture seals");
            sealed.push(Sealed {
                token,
                binding,
                opens_to: opens.then_some((0xF00D + index as u64, index as u32, payload)),
            });
        };
        for binding in 0..bindings.len() {
            seal(&opener, binding, true, vec![binding as u8; binding * 3]);
            seal(&with_retired, binding, true, b"retired key".to_vec());
        }
        seal(&foreign, 0, false, b"foreign".to_vec());
        seal(&unknown_kid, 0, false, b"unknown kid".to_vec());
        seal(&long_ago, 0, false, b"expired".to_vec());
        seal(&ahead, 0, false, b"from the future".to_vec());
        // Authentic, but not an envelope this build reads.
        for (index, plaintext) in [&[][..], &[1], &[2, 0, 0], &[1, 0, 0, 0, 0, 0, 0, 0]]
            .into_iter()
            .enumerate()
        {
            let token = opener
                .seal_plaintext(&bindings[0], plaintext, nonce(100 + index))
                .expect("fixture seals");
            sealed.push(Sealed {
                token,
                binding: 0,
                opens_to: None,
            });
        }
        let fixture = Fixture {
            opener,
            bindings,
            sealed,
        };
        // The oracle is only as good as the fixture: every token opens exactly where it must.
        for entry in &fixture.sealed {
            for (index, binding) in fixture.bindings.iter().enumerate() {
                let opened = fixture.opener.open(&entry.token, binding).is_ok();
                let expected = entry.opens_to.is_some() && index == entry.binding;
                assert_eq!(opened, expected, "fixture token {}", entry.token);
            }
        }
        fixture
    })
}

/// Runs one input.
///
/// ```
/// mrtr_fuzz::token_open::run(b"mrtr3.AAAA");
/// ```
pub fn run(data: &[u8]) {
    let fixture = fixture();
    let token = String::from_utf8_lossy(data);
    for (index, binding) in fixture.bindings.iter().enumerate() {
        let Ok(opened) = fixture.opener.open(&token, binding) else {
            continue;
        };
        let sealed = fixture
            .sealed
            .iter()
            .find(|entry| entry.token == token && entry.binding == index)
            .unwrap_or_else(|| {
                panic!("opened a token that was never sealed for binding {index}: {token:?}")
            });
        let Some((fingerprint, round, payload)) = &sealed.opens_to else {
            panic!("opened a token that must be rejected: {token:?}");
        };
        assert_eq!(
            (&opened.fingerprint, &opened.round, &opened.payload),
            (fingerprint, round, payload),
            "opened to something else than was sealed"
        );
    }
}

/// The seed corpus: every fixture token, and a few near misses.
///
/// ```
/// assert!(mrtr_fuzz::token_open::seeds().len() > 10);
/// ```
pub fn seeds() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = fixture()
        .sealed
        .iter()
        .map(|entry| entry.token.clone().into_bytes())
        .collect();
    seeds.push(b"mrtr3.".to_vec());
    seeds.push(b"mrtr3.AAEC".to_vec());
    seeds.push(b"mrtr2.AAAA".to_vec());
    seeds
}
