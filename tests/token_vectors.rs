//! Published test vectors for the `mrtr3` requestState format: `tests/vectors/token-v3.json`.
//!
//! The file freezes the wire format. This test regenerates nothing: it checks that the code
//! reproduces every token byte for byte (`generate`), opens every `open` vector to the
//! expected envelope, and rejects every `reject` vector for the expected reason. A change
//! that makes it fail changes the wire format and needs a new prefix (`mrtr4.`), not new
//! vectors. The previous formats' vectors (`token-v1.json`, `token-v2.json`) stay as a
//! record; every token in them must be refused by its prefix. (`mrtr3` changed only what the
//! server puts in the payload — how a pending question is stored — and the envelope
//! version: a server of one format never reads the other's payloads.)
//!
//! How the file was produced: once, by running
//!
//! ```sh
//! MRTR_BLESS=1 cargo test --test token_vectors
//! ```
//!
//! which builds the vectors from the fixed inputs in [`blessed_vectors`] (fixed keys,
//! nonces, clock and bindings), checks every expected rejection reason while doing so,
//! and writes the file. Other implementations can check themselves against it: all byte
//! strings are lowercase hex, keys use the `MRTR_KEYS` format (`kid:base64url`, the
//! first entry seals), times are Unix seconds.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mrtr::token::internals::{
    Binding, Envelope, FORMAT_VERSION, Method, SealInput, StateSealer, canonical_json,
};
use mrtr::token::{KeyRing, ManualClock};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct VectorFile {
    format: String,
    comment: Vec<String>,
    generate: Vec<GenerateVector>,
    open: Vec<OpenVector>,
    reject: Vec<RejectVector>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct BindingSpec {
    audience: String,
    method: String,
    target: String,
    arguments: Option<Map<String, Value>>,
    principal: Option<String>,
}

impl BindingSpec {
    fn binding(&self) -> Binding<'_> {
        let method: Method = self.method.parse().expect("method in vector file");
        Binding::new(
            &self.audience,
            method,
            &self.target,
            self.arguments.as_ref(),
            self.principal.as_deref(),
        )
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct InputSpec {
    fingerprint: u64,
    round: u32,
    /// hex; opaque to the token layer (the server's pending requests and the tool's state)
    payload: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct EnvelopeSpec {
    format_version: u8,
    fingerprint: u64,
    expires_at: u64,
    round: u32,
    /// hex
    payload: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct GenerateVector {
    name: String,
    /// `MRTR_KEYS` format; the first entry seals.
    keys: String,
    now: u64,
    ttl: u64,
    /// hex, 24 bytes
    nonce: String,
    binding: BindingSpec,
    input: InputSpec,
    /// Informative intermediate values (checked too).
    canonical_arguments: String,
    /// hex, SHA-256 of `canonical_arguments`
    arguments_digest: String,
    /// hex
    associated_data: String,
    /// hex, the envelope (see the module docs of `mrtr_runtime::token`)
    plaintext: String,
    token: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct OpenVector {
    name: String,
    keys: String,
    now: u64,
    binding: BindingSpec,
    token: String,
    envelope: EnvelopeSpec,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct RejectVector {
    name: String,
    keys: String,
    now: u64,
    /// Size cap; 65536 when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_token_bytes: Option<usize>,
    binding: BindingSpec,
    token: String,
    /// `Rejection::reason()` code.
    reason: String,
}

const MAX_CLOCK_SKEW: u64 = 60;

fn vector_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/token-v3.json")
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(text: &str) -> Vec<u8> {
    assert!(text.len().is_multiple_of(2), "odd hex length: {text}");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex in vector file"))
        .collect()
}

fn sealer(keys: &str, now: u64, ttl: u64, max_token_bytes: Option<usize>) -> StateSealer {
    let ring = KeyRing::parse(keys).expect("keys in vector file");
    StateSealer::new(ring)
        .with_clock(Arc::new(ManualClock::new(now)))
        .with_ttl(Duration::from_secs(ttl))
        .with_max_clock_skew(Duration::from_secs(MAX_CLOCK_SKEW))
        .with_max_token_bytes(max_token_bytes.unwrap_or(64 * 1024))
}

fn envelope_spec(envelope: &Envelope) -> EnvelopeSpec {
    EnvelopeSpec {
        format_version: FORMAT_VERSION,
        fingerprint: envelope.fingerprint,
        expires_at: u64::from(envelope.expires_at),
        round: envelope.round,
        payload: to_hex(&envelope.payload),
    }
}

fn seal_input(spec: &InputSpec) -> SealInput {
    SealInput {
        fingerprint: spec.fingerprint,
        round: spec.round,
        payload: from_hex(&spec.payload),
    }
}

fn nonce_of(hex: &str) -> [u8; 24] {
    from_hex(hex).try_into().expect("24-byte nonce")
}

/// Computes every derived field of a generate vector from its inputs.
fn complete(mut vector: GenerateVector) -> GenerateVector {
    let sealer = sealer(&vector.keys, vector.now, vector.ttl, None);
    let binding = vector.binding.binding();
    let kid = sealer.keys().sealing_key_id();
    vector.canonical_arguments = canonical_json(&Value::Object(
        vector.binding.arguments.clone().unwrap_or_default(),
    ));
    vector.arguments_digest = to_hex(binding.arguments_digest());
    vector.associated_data = to_hex(&binding.associated_data(kid));
    let envelope = Envelope {
        fingerprint: vector.input.fingerprint,
        expires_at: u32::try_from(vector.now + vector.ttl).unwrap(),
        round: vector.input.round,
        payload: from_hex(&vector.input.payload),
    };
    vector.plaintext = to_hex(&envelope.encode());
    vector.token = sealer
        .seal_with_nonce(&binding, seal_input(&vector.input), nonce_of(&vector.nonce))
        .unwrap();
    vector
}

#[test]
fn generate_vectors_reproduce_exact_tokens() {
    let file = load();
    assert!(file.generate.len() >= 4);
    for vector in &file.generate {
        let recomputed = complete(vector.clone());
        assert_eq!(
            recomputed.canonical_arguments, vector.canonical_arguments,
            "{}",
            vector.name
        );
        assert_eq!(
            recomputed.arguments_digest, vector.arguments_digest,
            "{}",
            vector.name
        );
        assert_eq!(
            recomputed.associated_data, vector.associated_data,
            "{}",
            vector.name
        );
        assert_eq!(recomputed.plaintext, vector.plaintext, "{}", vector.name);
        assert_eq!(recomputed.token, vector.token, "{}", vector.name);
    }
}

/// Re-derives each generate vector from the documented layout with the cipher and hash
/// crates directly, without going through `mrtr`, so the file documents the format and not
/// merely whatever the code does.
#[test]
fn generate_vectors_match_the_documented_layout() {
    use chacha20poly1305::aead::{Aead, KeyInit, Payload};
    use chacha20poly1305::{XChaCha20Poly1305, XNonce};
    use sha2::{Digest, Sha256};

    fn lp(out: &mut Vec<u8>, bytes: &[u8]) {
        out.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
        out.extend_from_slice(bytes);
    }

    let file = load();
    for vector in &file.generate {
        let (kid_text, key_text) = vector
            .keys
            .split(',')
            .next()
            .unwrap()
            .split_once(':')
            .unwrap();
        let kid: u16 = kid_text.parse().unwrap();
        let key = mrtr::token::SecretKey::from_base64url(key_text).unwrap();

        let digest = Sha256::digest(vector.canonical_arguments.as_bytes());
        assert_eq!(to_hex(&digest), vector.arguments_digest, "{}", vector.name);
        let mut aad = Vec::new();
        lp(&mut aad, b"mrtr3.");
        aad.extend_from_slice(&kid.to_be_bytes());
        lp(&mut aad, vector.binding.audience.as_bytes());
        lp(&mut aad, vector.binding.method.as_bytes());
        lp(&mut aad, vector.binding.target.as_bytes());
        aad.extend_from_slice(&digest);
        match &vector.binding.principal {
            None => aad.push(0),
            Some(principal) => {
                aad.push(1);
                lp(&mut aad, principal.as_bytes());
            }
        }
        assert_eq!(to_hex(&aad), vector.associated_data, "{}", vector.name);

        let raw = decode_body(vector.token.strip_prefix("mrtr3.").unwrap());
        assert_eq!(raw[..2], kid.to_be_bytes(), "{}", vector.name);
        assert_eq!(to_hex(&raw[2..26]), vector.nonce, "{}", vector.name);
        let cipher = XChaCha20Poly1305::new(key.as_bytes().into());
        let nonce = <&XNonce>::try_from(&raw[2..26]).unwrap();
        let plaintext = cipher
            .decrypt(
                nonce,
                Payload {
                    msg: &raw[26..],
                    aad: &aad,
                },
            )
            .unwrap_or_else(|_| panic!("{}: does not decrypt", vector.name));
        assert_eq!(to_hex(&plaintext), vector.plaintext, "{}", vector.name);

        let mut documented = vec![3u8];
        documented.extend_from_slice(&vector.input.fingerprint.to_le_bytes());
        documented.extend_from_slice(
            &u32::try_from(vector.now + vector.ttl)
                .unwrap()
                .to_le_bytes(),
        );
        let mut round = vector.input.round;
        while round >= 0x80 {
            documented.push((round as u8) | 0x80);
            round >>= 7;
        }
        documented.push(round as u8);
        documented.extend_from_slice(&from_hex(&vector.input.payload));
        assert_eq!(plaintext, documented, "{}", vector.name);
    }
}

#[test]
fn open_vectors_open_to_the_expected_envelope() {
    let file = load();
    assert!(file.open.len() >= 5);
    for vector in &file.open {
        let sealer = sealer(&vector.keys, vector.now, 600, None);
        let envelope = sealer
            .open(&vector.token, &vector.binding.binding())
            .unwrap_or_else(|rejection| panic!("{}: {rejection}", vector.name));
        assert_eq!(envelope_spec(&envelope), vector.envelope, "{}", vector.name);
    }
}

#[test]
fn reject_vectors_are_rejected_for_the_expected_reason() {
    let file = load();
    assert!(file.reject.len() >= 20);
    for vector in &file.reject {
        let sealer = sealer(&vector.keys, vector.now, 600, vector.max_token_bytes);
        match sealer.open(&vector.token, &vector.binding.binding()) {
            Ok(envelope) => panic!("{}: opened to {envelope:?}", vector.name),
            Err(rejection) => assert_eq!(rejection.reason(), vector.reason, "{}", vector.name),
        }
    }
}

#[test]
fn the_file_covers_every_rejection_reason_and_method() {
    let file = load();
    let reasons: std::collections::BTreeSet<&str> =
        file.reject.iter().map(|v| v.reason.as_str()).collect();
    for reason in [
        "too_large",
        "wrong_prefix",
        "malformed",
        "unknown_key",
        "unauthentic",
        "undecodable_envelope",
        "unsupported_version",
        "expires_too_late",
        "expired",
    ] {
        assert!(reasons.contains(reason), "no vector for {reason}");
    }
    let methods: std::collections::BTreeSet<&str> = file
        .generate
        .iter()
        .map(|v| v.binding.method.as_str())
        .collect();
    assert_eq!(methods.len(), 3);
}

fn load() -> VectorFile {
    // Tests run in parallel; only one of them may write the file.
    static BLESS: std::sync::Once = std::sync::Once::new();
    BLESS.call_once(|| {
        if std::env::var_os("MRTR_BLESS").is_some_and(|v| v == "1") {
            let file = blessed_vectors();
            let text = serde_json::to_string_pretty(&file).unwrap() + "\n";
            std::fs::create_dir_all(vector_path().parent().unwrap()).unwrap();
            std::fs::write(vector_path(), text).unwrap();
        }
    });
    let text = std::fs::read_to_string(vector_path()).expect("tests/vectors/token-v3.json");
    serde_json::from_str(&text).expect("vector file parses")
}

// ---------------------------------------------------------------------------------------
// The generator. Runs only with MRTR_BLESS=1.
// ---------------------------------------------------------------------------------------

const T0: u64 = 1_767_225_600; // 2026-01-01T00:00:00Z

/// kid 1: bytes 00..1f; kid 2: bytes 20..3f; kid 258: bytes 40..5f.
fn key(first: u8) -> String {
    let bytes: [u8; 32] = std::array::from_fn(|i| first + i as u8);
    mrtr::token::SecretKey::from_bytes(bytes).to_base64url()
}

fn key1() -> String {
    format!("1:{}", key(0x00))
}

fn binding_spec(
    audience: &str,
    method: &str,
    target: &str,
    arguments: Value,
    principal: Option<&str>,
) -> BindingSpec {
    BindingSpec {
        audience: audience.into(),
        method: method.into(),
        target: target.into(),
        arguments: match arguments {
            Value::Object(map) => Some(map),
            _ => None,
        },
        principal: principal.map(Into::into),
    }
}

fn generate_vector(
    name: &str,
    keys: String,
    now: u64,
    ttl: u64,
    nonce_start: u8,
    binding: BindingSpec,
    input: InputSpec,
) -> GenerateVector {
    complete(GenerateVector {
        name: name.into(),
        keys,
        now,
        ttl,
        nonce: to_hex(&std::array::from_fn::<u8, 24, _>(|i| {
            nonce_start.wrapping_add(i as u8)
        })),
        binding,
        input,
        canonical_arguments: String::new(),
        arguments_digest: String::new(),
        associated_data: String::new(),
        plaintext: String::new(),
        token: String::new(),
    })
}

/// What a server puts in the payload for one pending confirm question and a small state:
/// the token layer treats it as opaque bytes.
fn form_round_payload() -> Vec<u8> {
    let mut payload = vec![1, 7];
    payload.extend_from_slice(b"confirm");
    // `Recipe::Confirm(Wording::Inline(..))`.
    payload.extend_from_slice(&[2, 0, 22]);
    payload.extend_from_slice(b"Book 3 nights in Oslo?");
    // The tool's state; its length makes the raw token 97 bytes, so padded base64 differs.
    payload.extend_from_slice(b"\x01\x04Oslo\x03");
    payload
}

fn blessed_vectors() -> VectorFile {
    let trip = binding_spec(
        "travel-server",
        "tools/call",
        "book_trip",
        json!({"destination": "Oslo", "nights": 3, "options": {"refundable": true, "class": "economy"}}),
        Some("user-42"),
    );
    let generate = vec![
        generate_vector(
            "minimal",
            key1(),
            T0,
            600,
            0x00,
            binding_spec("echo-server", "tools/call", "echo", Value::Null, None),
            InputSpec {
                fingerprint: 0,
                round: 0,
                payload: String::new(),
            },
        ),
        generate_vector(
            "form_elicitation_round",
            key1(),
            T0,
            600,
            0x40,
            trip.clone(),
            InputSpec {
                fingerprint: 0x9e37_79b9_7f4a_7c15,
                round: 1,
                payload: to_hex(&form_round_payload()),
            },
        ),
        generate_vector(
            "prompt_with_empty_principal_and_two_pending",
            format!("258:{},1:{}", key(0x40), key(0x00)),
            T0 + 1,
            300,
            0x80,
            binding_spec(
                "prompt-server",
                "prompts/get",
                "greeting",
                json!({"lang": "nb", "name": "Kari"}),
                Some(""),
            ),
            InputSpec {
                fingerprint: u64::MAX,
                round: 2,
                payload: to_hex(&[0xff; 17]),
            },
        ),
        generate_vector(
            "resource_read_binary_state",
            format!("2:{}", key(0x20)),
            T0 + 86_400,
            60,
            0xc0,
            binding_spec(
                "files",
                "resources/read",
                "file:///tmp/report.txt",
                Value::Null,
                Some("alice@example.com"),
            ),
            InputSpec {
                fingerprint: 1,
                round: 300,
                payload: to_hex(&(0..=255).collect::<Vec<u8>>()),
            },
        ),
    ];

    let mut open = Vec::new();
    for vector in &generate {
        let envelope = EnvelopeSpec {
            format_version: 3,
            fingerprint: vector.input.fingerprint,
            expires_at: vector.now + vector.ttl,
            round: vector.input.round,
            payload: vector.input.payload.clone(),
        };
        open.push(OpenVector {
            name: format!("{}_opens", vector.name),
            keys: vector.keys.clone(),
            now: vector.now,
            binding: vector.binding.clone(),
            token: vector.token.clone(),
            envelope,
        });
    }
    let base = open[1].clone();
    let with = |name: &str, change: &dyn Fn(&mut OpenVector)| {
        let mut vector = base.clone();
        vector.name = name.into();
        change(&mut vector);
        vector
    };
    open.push(with("opens_one_second_before_expiry", &|v| {
        v.now = T0 + 599
    }));
    open.push(with("opens_at_maximum_clock_skew", &|v| {
        v.now = T0 - MAX_CLOCK_SKEW
    }));
    open.push(with("opens_with_arguments_in_another_key_order", &|v| {
        v.binding.arguments = json!({"options": {"class": "economy", "refundable": true}, "nights": 3, "destination": "Oslo"})
            .as_object()
            .cloned();
    }));
    open.push(with("old_key_still_opens_after_rotation", &|v| {
        v.keys = format!("2:{},1:{}", key(0x20), key(0x00));
    }));

    let tokens = &generate;
    let trip_token = &tokens[1].token;
    let body = trip_token.strip_prefix("mrtr3.").unwrap();
    let reject_base = RejectVector {
        name: String::new(),
        keys: key1(),
        now: T0,
        max_token_bytes: None,
        binding: trip.clone(),
        token: trip_token.clone(),
        reason: String::new(),
    };
    let reject = |name: &str, reason: &str, change: &dyn Fn(&mut RejectVector)| {
        let mut vector = reject_base.clone();
        vector.name = name.into();
        vector.reason = reason.into();
        change(&mut vector);
        vector
    };
    let raw = decode_body(body);
    let flip = |index: usize| {
        let mut raw = raw.clone();
        raw[index] ^= 0x01;
        format!("mrtr3.{}", encode_body(&raw))
    };
    let last = raw.len() - 1;
    let sealer_for_trip = sealer(&key1(), T0, 600, None);
    let trip_binding = trip.binding();
    let sealed_plaintext = |plaintext: &[u8]| {
        sealer_for_trip
            .seal_plaintext_with_nonce(&trip_binding, plaintext, [0x99; 24])
            .unwrap()
    };
    let valid_plaintext = from_hex(&tokens[1].plaintext);
    let mut version_two = valid_plaintext.clone();
    version_two[0] = 2;
    let mut overlong_round = valid_plaintext[..13].to_vec();
    overlong_round.extend_from_slice(&[0xff; 6]);

    let rejects = vec![
        reject("oversize_valid_token", "too_large", &|v| {
            v.max_token_bytes = Some(v.token.len() - 1)
        }),
        reject("oversize_garbage", "too_large", &|v| {
            v.max_token_bytes = Some(64);
            v.token = "%".repeat(65);
        }),
        reject("empty", "wrong_prefix", &|v| v.token = String::new()),
        reject("other_prefix", "wrong_prefix", &|v| {
            v.token = format!("mrtr2.{body}")
        }),
        reject("uppercase_prefix", "wrong_prefix", &|v| {
            v.token = format!("MRTR2.{body}")
        }),
        reject("prefix_only", "malformed", &|v| v.token = "mrtr3.".into()),
        reject("padded_base64", "malformed", &|v| {
            v.token = format!("mrtr3.{}", base64_with_padding(&raw))
        }),
        reject("standard_alphabet", "malformed", &|v| {
            v.token = format!("mrtr3.{}+/", &body[..body.len() - 2])
        }),
        reject("embedded_whitespace", "malformed", &|v| {
            v.token = format!("mrtr3.{} {}", &body[..10], &body[10..])
        }),
        reject("truncated_inside_header", "malformed", &|v| {
            v.token = format!("mrtr3.{}", encode_body(&raw[..41]))
        }),
        reject("truncated_by_three_bytes", "unauthentic", &|v| {
            v.token = format!("mrtr3.{}", encode_body(&raw[..raw.len() - 3]))
        }),
        reject("suffix_appended", "unauthentic", &|v| {
            v.token = format!(
                "mrtr3.{}",
                encode_body(&[raw.as_slice(), b"-TAMPERED"].concat())
            )
        }),
        reject("unknown_kid", "unknown_key", &|v| {
            v.keys = format!("2:{}", key(0x20))
        }),
        reject("kid_rewritten_to_held_key", "unauthentic", &|v| {
            v.keys = format!("1:{},3:{}", key(0x00), key(0x00));
            let mut raw = raw.clone();
            raw[1] = 3;
            v.token = format!("mrtr3.{}", encode_body(&raw));
        }),
        reject("flipped_tag_byte", "unauthentic", &|v| v.token = flip(last)),
        reject("flipped_ciphertext_byte", "unauthentic", &|v| {
            v.token = flip(26)
        }),
        reject("flipped_nonce_byte", "unauthentic", &|v| v.token = flip(2)),
        reject("same_kid_other_key", "unauthentic", &|v| {
            v.keys = format!("1:{}", key(0x20))
        }),
        reject("other_tool", "unauthentic", &|v| {
            v.binding.target = "cancel_trip".into()
        }),
        reject("other_arguments", "unauthentic", &|v| {
            v.binding.arguments = json!({"destination": "Oslo", "nights": 4, "options": {"refundable": true, "class": "economy"}}).as_object().cloned()
        }),
        reject("arguments_absent", "unauthentic", &|v| {
            v.binding.arguments = None
        }),
        reject("other_principal", "unauthentic", &|v| {
            v.binding.principal = Some("user-43".into())
        }),
        reject("principal_absent", "unauthentic", &|v| {
            v.binding.principal = None
        }),
        reject("other_audience", "unauthentic", &|v| {
            v.binding.audience = "other-server".into()
        }),
        reject("other_method", "unauthentic", &|v| {
            v.binding.method = "prompts/get".into()
        }),
        reject("header_cut_short", "undecodable_envelope", &|v| {
            v.token = sealed_plaintext(&[0x03, 0xff, 0xff])
        }),
        reject("overlong_round_varint", "undecodable_envelope", &|v| {
            v.token = sealed_plaintext(&overlong_round)
        }),
        reject("previous_envelope_version", "unsupported_version", &|v| {
            v.token = sealed_plaintext(&version_two)
        }),
        reject("expired", "expired", &|v| v.now = T0 + 600),
        reject("long_expired", "expired", &|v| v.now = T0 + 86_400),
        reject("expires_too_late", "expires_too_late", &|v| {
            v.now = T0 - MAX_CLOCK_SKEW - 1
        }),
    ];

    // The generator checks its own expectations, so a wrong reason never gets blessed.
    for vector in &rejects {
        let sealer = sealer(&vector.keys, vector.now, 600, vector.max_token_bytes);
        let rejection = sealer
            .open(&vector.token, &vector.binding.binding())
            .expect_err(&vector.name);
        assert_eq!(rejection.reason(), vector.reason, "{}", vector.name);
    }

    VectorFile {
        format: "mrtr3".into(),
        comment: vec![
            "Test vectors for the mrtr3 requestState token. Produced once with `MRTR_BLESS=1 cargo test --test token_vectors` (generator in tests/token_vectors.rs); never regenerate for an existing prefix.".into(),
            "token = \"mrtr3.\" || base64url_nopad(kid u16 BE || nonce[24] || XChaCha20-Poly1305(key, nonce, plaintext, associated_data)).".into(),
            "associated_data = lp(\"mrtr3.\") || kid || lp(audience) || lp(method) || lp(target) || sha256(canonical_json(arguments or {})) || (0x00 | 0x01 || lp(principal)); lp = u64 BE length || bytes.".into(),
            "plaintext = format_version (u8, 3) || fingerprint (u64 LE) || expires_at (u32 LE) || round (postcard varint u32) || payload (all remaining bytes, opaque to the token layer).".into(),
            "keys use the MRTR_KEYS format (first entry seals); byte strings are lowercase hex; times are Unix seconds; max clock skew 60 s; ttl 600 s for open/reject; max_token_bytes 65536 unless given.".into(),
            "reject reasons: too_large, wrong_prefix, malformed, unknown_key, unauthentic, unsupported_version, undecodable_envelope, expires_too_late, expired (checked in this order).".into(),
        ],
        generate,
        open,
        reject: rejects,
    }
}

fn decode_body(body: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(body)
        .unwrap()
}

fn encode_body(raw: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

fn base64_with_padding(raw: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE.encode(raw)
}

/// The previous wire formats (`mrtr1` and `mrtr2`, envelope versions 1 and 2) are not read
/// any more: every token recorded in their vector files is refused by its prefix, before any
/// decoding.
#[test]
fn tokens_of_the_previous_formats_are_refused_by_their_prefix() {
    for (file, least) in [("token-v1.json", 9), ("token-v2.json", 3)] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/vectors")
            .join(file);
        let old: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut refused = 0;
        for section in ["generate", "open"] {
            for vector in old[section].as_array().unwrap() {
                let keys = vector["keys"].as_str().unwrap();
                let now = vector["now"].as_u64().unwrap();
                let binding: BindingSpec =
                    serde_json::from_value(vector["binding"].clone()).unwrap();
                let token = vector["token"].as_str().unwrap();
                let rejection = sealer(keys, now, 600, None)
                    .open(token, &binding.binding())
                    .expect_err("an old token must not open");
                assert_eq!(
                    rejection.reason(),
                    "wrong_prefix",
                    "{file}: {}",
                    vector["name"]
                );
                refused += 1;
            }
        }
        assert!(
            refused >= least,
            "{file}: only {refused} old tokens checked"
        );
    }
}
