use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::json;

use super::sealer::{HEADER_LEN, NONCE_LEN, TAG_LEN};
use super::*;
use crate::machine::Method;

const NOW: u64 = 1_767_225_600; // 2026-01-01T00:00:00Z

fn ring(kid: u16, byte: u8) -> KeyRing {
    KeyRing::new(KeyId(kid), SecretKey::from_bytes([byte; 32]))
}

fn sealer_at(keys: KeyRing, clock: &Arc<ManualClock>) -> StateSealer {
    StateSealer::new(keys).with_clock(clock.clone())
}

fn input() -> SealInput {
    SealInput {
        fingerprint: 0xABCD,
        round: 1,
        payload: b"pending and state".to_vec(),
    }
}

fn binding() -> Binding<'static> {
    Binding::new("srv", Method::CallTool, "tool", None, Some("alice"))
}

fn raw_of(token: &str) -> Vec<u8> {
    URL_SAFE_NO_PAD
        .decode(token.strip_prefix(TOKEN_PREFIX).unwrap())
        .unwrap()
}

fn token_of(raw: &[u8]) -> String {
    format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(raw))
}

#[test]
fn round_trip_restores_every_field() {
    let clock = Arc::new(ManualClock::new(NOW));
    let sealer = sealer_at(ring(1, 1), &clock);
    let token = sealer.seal(&binding(), input()).unwrap();
    let envelope = sealer.open(&token, &binding()).unwrap();
    assert_eq!(
        envelope,
        Envelope {
            fingerprint: 0xABCD,
            expires_at: (NOW + 600) as u32,
            round: 1,
            payload: b"pending and state".to_vec(),
        }
    );
}

#[test]
fn token_layout_is_prefix_kid_nonce_ciphertext_tag() {
    let clock = Arc::new(ManualClock::new(NOW));
    let sealer = sealer_at(ring(0x0102, 1), &clock);
    let nonce = [9u8; NONCE_LEN];
    let token = sealer.seal_with_nonce(&binding(), input(), nonce).unwrap();
    let raw = raw_of(&token);
    let plaintext_len = Envelope {
        fingerprint: 0xABCD,
        expires_at: (NOW + 600) as u32,
        round: 1,
        payload: b"pending and state".to_vec(),
    }
    .encode()
    .len();
    assert_eq!(&raw[..2], &[1, 2]);
    assert_eq!(&raw[2..26], &nonce);
    assert_eq!(raw.len(), HEADER_LEN + plaintext_len + TAG_LEN);
    // The payload is encrypted, not merely encoded.
    assert!(!raw.windows(5).any(|w| w == b"state"));
}

#[test]
fn oversized_garbage_is_rejected_before_any_decoding() {
    let clock = Arc::new(ManualClock::new(NOW));
    let sealer = sealer_at(ring(1, 1), &clock).with_max_token_bytes(100);
    // Wrong prefix and invalid base64 too: the size check must come first.
    let garbage = "!".repeat(101);
    assert_eq!(
        sealer.open(&garbage, &binding()),
        Err(Rejection::TooLarge {
            size: 101,
            limit: 100
        })
    );
    // Exactly at the cap is not "too large".
    assert_eq!(
        sealer.open(&"!".repeat(100), &binding()),
        Err(Rejection::WrongPrefix)
    );
}

#[test]
fn a_valid_token_over_the_cap_does_not_open() {
    let clock = Arc::new(ManualClock::new(NOW));
    let sealer = sealer_at(ring(1, 1), &clock);
    let token = sealer.seal(&binding(), input()).unwrap();
    let strict = sealer.clone().with_max_token_bytes(token.len() - 1);
    assert_eq!(
        strict.open(&token, &binding()),
        Err(Rejection::TooLarge {
            size: token.len(),
            limit: token.len() - 1
        })
    );
}

#[test]
fn seal_refuses_states_over_the_cap_with_the_exact_size() {
    let clock = Arc::new(ManualClock::new(NOW));
    let sealer = sealer_at(ring(1, 1), &clock);
    let token = sealer.seal(&binding(), input()).unwrap();
    let exact = sealer.clone().with_max_token_bytes(token.len());
    assert!(exact.seal(&binding(), input()).is_ok());
    let short = sealer.with_max_token_bytes(token.len() - 1);
    assert_eq!(
        short.seal(&binding(), input()),
        Err(SealError::TooLarge {
            size: token.len(),
            limit: token.len() - 1
        })
    );
}

#[test]
fn the_default_cap_is_64_kib_for_sealing_and_opening() {
    let clock = Arc::new(ManualClock::new(NOW));
    let sealer = sealer_at(ring(1, 1), &clock);
    // About 48 KiB once sealed: well inside the default cap.
    let big = SealInput {
        payload: vec![7; 36 * 1024],
        ..input()
    };
    let token = sealer.seal(&binding(), big.clone()).unwrap();
    assert!(token.len() > 40 * 1024, "{}", token.len());
    assert_eq!(
        sealer.open(&token, &binding()).unwrap().payload,
        big.payload
    );
    let huge = SealInput {
        payload: vec![7; 64 * 1024],
        ..input()
    };
    match sealer.seal(&binding(), huge) {
        Err(SealError::TooLarge { limit, .. }) => assert_eq!(limit, 65_536),
        other => panic!("expected TooLarge, got {other:?}"),
    }
}

#[test]
fn the_sealer_reports_its_configuration() {
    let sealer = StateSealer::new(ring(3, 1))
        .with_ttl(Duration::from_secs(30))
        .with_max_token_bytes(4096)
        .with_max_clock_skew(Duration::from_secs(5));
    assert_eq!(sealer.ttl(), Duration::from_secs(30));
    assert_eq!(sealer.max_token_bytes(), 4096);
    assert_eq!(sealer.max_clock_skew(), Duration::from_secs(5));
    assert_eq!(sealer.keys().sealing_key_id(), KeyId(3));
}

#[test]
fn the_system_clock_reads_the_system_time() {
    let unix = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    };
    let before = unix();
    let now = SystemClock.now_unix_seconds();
    let after = unix();
    assert!(
        (before..=after).contains(&now),
        "{before} <= {now} <= {after}"
    );
}

#[test]
fn predicted_size_matches_actual_size_for_every_remainder() {
    let clock = Arc::new(ManualClock::new(NOW));
    let sealer = sealer_at(ring(1, 1), &clock);
    for len in 0..6 {
        let mut input = input();
        input.payload = vec![0; len];
        let token = sealer.seal(&binding(), input.clone()).unwrap();
        let exact = sealer.clone().with_max_token_bytes(token.len());
        assert!(exact.seal(&binding(), input).is_ok(), "state length {len}");
    }
}

#[test]
fn structural_rejections_come_in_order() {
    let clock = Arc::new(ManualClock::new(NOW));
    let sealer = sealer_at(ring(1, 1), &clock);
    let token = sealer.seal(&binding(), input()).unwrap();
    let body = token.strip_prefix(TOKEN_PREFIX).unwrap();

    assert_eq!(
        sealer.open(&format!("mrtr2.{body}"), &binding()),
        Err(Rejection::WrongPrefix)
    );
    assert_eq!(sealer.open("", &binding()), Err(Rejection::WrongPrefix));
    for bad in [
        format!("{token}="), // padding
        format!(
            "{TOKEN_PREFIX}{}",
            body.replace('-', "+").replace('_', "/") + "+"
        ), // std alphabet
        format!("{TOKEN_PREFIX} {body}"), // whitespace
        format!("{TOKEN_PREFIX}{}", "A".repeat(57)), // impossible length (4n+1)
    ] {
        assert!(
            matches!(
                sealer.open(&bad, &binding()),
                Err(Rejection::Malformed { .. })
            ),
            "{bad}"
        );
    }
    // Too short: 41 raw bytes, one short of kid + nonce + tag.
    assert!(matches!(
        sealer.open(&token_of(&[0; 41]), &binding()),
        Err(Rejection::Malformed { .. })
    ));
    // Long enough, unknown key id (the ring holds only 1).
    let mut raw = raw_of(&token);
    raw[1] = 2;
    assert_eq!(
        sealer.open(&token_of(&raw), &binding()),
        Err(Rejection::UnknownKey { kid: KeyId(2) })
    );
    // Exactly the minimum with a known kid: authentication fails (no plaintext to decode).
    let mut minimal = vec![0, 1];
    minimal.extend_from_slice(&[0; NONCE_LEN + TAG_LEN]);
    assert_eq!(
        sealer.open(&token_of(&minimal), &binding()),
        Err(Rejection::Unauthentic)
    );
}

#[test]
fn non_canonical_trailing_bits_are_malformed() {
    let clock = Arc::new(ManualClock::new(NOW));
    let sealer = sealer_at(ring(1, 1), &clock);
    // 43 raw bytes encode to 58 characters; the last one carries 4 unused bits.
    let token = token_of(&[0; 43]);
    let mut chars: Vec<char> = token.chars().collect();
    *chars.last_mut().unwrap() = 'B';
    let tampered: String = chars.into_iter().collect();
    assert!(matches!(
        sealer.open(&tampered, &binding()),
        Err(Rejection::Malformed { .. })
    ));
}

#[test]
fn every_bound_field_is_enforced() {
    let clock = Arc::new(ManualClock::new(NOW));
    let sealer = sealer_at(ring(1, 1), &clock);
    let args = json!({"path": "/a", "force": false});
    let same_args_reordered = json!({"force": false, "path": "/a"});
    let other_args = json!({"path": "/b", "force": false});
    let bound = Binding::new(
        "srv",
        Method::CallTool,
        "rm",
        args.as_object(),
        Some("alice"),
    );
    let token = sealer.seal(&bound, input()).unwrap();

    let reordered = Binding::new(
        "srv",
        Method::CallTool,
        "rm",
        same_args_reordered.as_object(),
        Some("alice"),
    );
    assert!(sealer.open(&token, &reordered).is_ok());

    let others = [
        Binding::new(
            "srv2",
            Method::CallTool,
            "rm",
            args.as_object(),
            Some("alice"),
        ),
        Binding::new(
            "srv",
            Method::GetPrompt,
            "rm",
            args.as_object(),
            Some("alice"),
        ),
        Binding::new(
            "srv",
            Method::CallTool,
            "mv",
            args.as_object(),
            Some("alice"),
        ),
        Binding::new(
            "srv",
            Method::CallTool,
            "rm",
            other_args.as_object(),
            Some("alice"),
        ),
        Binding::new("srv", Method::CallTool, "rm", None, Some("alice")),
        Binding::new("srv", Method::CallTool, "rm", args.as_object(), Some("bob")),
        Binding::new("srv", Method::CallTool, "rm", args.as_object(), None),
    ];
    for other in &others {
        assert_eq!(
            sealer.open(&token, other),
            Err(Rejection::Unauthentic),
            "{other:?}"
        );
    }
}

#[test]
fn expiry_follows_the_clock() {
    let clock = Arc::new(ManualClock::new(NOW));
    let sealer = sealer_at(ring(1, 1), &clock).with_ttl(Duration::from_secs(600));
    let token = sealer.seal(&binding(), input()).unwrap();

    clock.set(NOW + 599);
    assert!(sealer.open(&token, &binding()).is_ok());
    clock.set(NOW + 600);
    assert_eq!(
        sealer.open(&token, &binding()),
        Err(Rejection::Expired {
            expires_at: NOW + 600,
            now: NOW + 600
        })
    );
    clock.set(u64::MAX);
    assert!(matches!(
        sealer.open(&token, &binding()),
        Err(Rejection::Expired { .. })
    ));
}

#[test]
fn tokens_from_the_future_are_rejected_beyond_the_skew() {
    let clock = Arc::new(ManualClock::new(NOW));
    let sealer = sealer_at(ring(1, 1), &clock).with_max_clock_skew(Duration::from_secs(60));
    let token = sealer.seal(&binding(), input()).unwrap();

    clock.set(NOW - 60);
    assert!(sealer.open(&token, &binding()).is_ok());
    clock.set(NOW - 61);
    assert_eq!(
        sealer.open(&token, &binding()),
        Err(Rejection::ExpiresTooLate {
            expires_at: NOW + 600,
            now: NOW - 61
        })
    );
    clock.set(0);
    assert!(matches!(
        sealer.open(&token, &binding()),
        Err(Rejection::ExpiresTooLate { .. })
    ));
    // A sealer with a longer TTL is also "too late" for one with a shorter TTL.
    clock.set(NOW);
    let short = sealer.clone().with_ttl(Duration::from_secs(500));
    assert!(matches!(
        short.open(&token, &binding()),
        Err(Rejection::ExpiresTooLate { .. })
    ));
}

#[test]
fn expiry_past_the_u32_range_fails_closed() {
    // Expiry is stored in 32 bits: a clock past 2106 seals tokens that never open.
    let clock = Arc::new(ManualClock::new(u64::from(u32::MAX) - 10));
    let sealer = sealer_at(ring(1, 1), &clock);
    let token = sealer.seal(&binding(), input()).unwrap();
    let envelope = sealer.open(&token, &binding()).unwrap();
    assert_eq!(envelope.expires_at, u32::MAX);
    clock.set(u64::from(u32::MAX) + 1);
    let token = sealer.seal(&binding(), input()).unwrap();
    assert!(matches!(
        sealer.open(&token, &binding()),
        Err(Rejection::Expired { .. })
    ));
}

#[test]
fn rotation_old_kid_opens_new_kid_seals() {
    let clock = Arc::new(ManualClock::new(NOW));
    let old = sealer_at(ring(1, 1), &clock);
    let rotated_keys = ring(2, 2)
        .with_opening_key(KeyId(1), SecretKey::from_bytes([1; 32]))
        .unwrap();
    let rotated = sealer_at(rotated_keys, &clock);

    let old_token = old.seal(&binding(), input()).unwrap();
    assert!(rotated.open(&old_token, &binding()).is_ok());

    let new_token = rotated.seal(&binding(), input()).unwrap();
    assert_eq!(&raw_of(&new_token)[..2], &[0, 2]);
    assert_eq!(
        old.open(&new_token, &binding()),
        Err(Rejection::UnknownKey { kid: KeyId(2) })
    );
}

#[test]
fn same_kid_different_key_is_unauthentic() {
    let clock = Arc::new(ManualClock::new(NOW));
    let a = sealer_at(ring(1, 1), &clock);
    let b = sealer_at(ring(1, 2), &clock);
    let token = a.seal(&binding(), input()).unwrap();
    assert_eq!(b.open(&token, &binding()), Err(Rejection::Unauthentic));
}

#[test]
fn kid_is_authenticated_even_when_both_keys_are_equal() {
    // An attacker who rewrites the kid to another slot holding the same key bytes
    // must still fail, because the kid is bound in the associated data.
    let clock = Arc::new(ManualClock::new(NOW));
    let keys = ring(1, 7)
        .with_opening_key(KeyId(2), SecretKey::from_bytes([7; 32]))
        .unwrap();
    let sealer = sealer_at(keys, &clock);
    let token = sealer.seal(&binding(), input()).unwrap();
    let mut raw = raw_of(&token);
    raw[1] = 2;
    assert_eq!(
        sealer.open(&token_of(&raw), &binding()),
        Err(Rejection::Unauthentic)
    );
}

#[test]
fn authentic_but_unusable_plaintexts_are_classified() {
    let clock = Arc::new(ManualClock::new(NOW));
    let sealer = sealer_at(ring(1, 1), &clock);
    let nonce = [3u8; NONCE_LEN];
    let valid = Envelope {
        fingerprint: 1,
        expires_at: (NOW + 600) as u32,
        round: 0,
        payload: vec![],
    }
    .encode();

    let mut version_one = valid.clone();
    version_one[0] = 1;
    let cases: [(&[u8], Rejection); 3] = [
        (&[], Rejection::UndecodableEnvelope),
        (&valid[..valid.len() - 1], Rejection::UndecodableEnvelope),
        (&version_one, Rejection::UnsupportedVersion { found: 1 }),
    ];
    for (plaintext, expected) in cases {
        let token = sealer
            .seal_plaintext_with_nonce(&binding(), plaintext, nonce)
            .unwrap();
        assert_eq!(
            sealer.open(&token, &binding()),
            Err(expected),
            "{plaintext:?}"
        );
    }
    let token = sealer
        .seal_plaintext_with_nonce(&binding(), &valid, nonce)
        .unwrap();
    assert!(sealer.open(&token, &binding()).is_ok());
}

#[test]
fn a_token_of_the_previous_format_is_refused_by_its_prefix() {
    let clock = Arc::new(ManualClock::new(NOW));
    let sealer = sealer_at(ring(1, 1), &clock);
    let token = sealer.seal(&binding(), input()).unwrap();
    let old = token.replacen(TOKEN_PREFIX, "mrtr2.", 1);
    assert_eq!(sealer.open(&old, &binding()), Err(Rejection::WrongPrefix));
}

#[test]
fn rejections_display_a_reason_without_secrets() {
    let reasons = [
        Rejection::TooLarge { size: 2, limit: 1 },
        Rejection::WrongPrefix,
        Rejection::Malformed { detail: "x" },
        Rejection::UnknownKey { kid: KeyId(3) },
        Rejection::Unauthentic,
        Rejection::UndecodableEnvelope,
        Rejection::UnsupportedVersion { found: 9 },
        Rejection::ExpiresTooLate {
            expires_at: 10_000,
            now: 1,
        },
        Rejection::Expired {
            expires_at: 1,
            now: 10,
        },
        Rejection::FingerprintMismatch {
            sealed: 1,
            expected: 2,
        },
    ];
    let mut codes: Vec<&str> = reasons.iter().map(Rejection::reason).collect();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), reasons.len(), "reason codes are distinct");
    for rejection in reasons {
        assert!(
            rejection.to_string().starts_with("requestState "),
            "{rejection}"
        );
    }
    assert_eq!(
        Rejection::Expired {
            expires_at: 1,
            now: 10
        }
        .to_string(),
        "requestState expired at 1, 9 s ago (now 10)"
    );
}

#[test]
fn sealer_debug_hides_keys() {
    let sealer = StateSealer::new(ring(1, 0x5A));
    let debug = format!("{sealer:?}");
    assert!(debug.contains("KeyId(1)"));
    assert!(!debug.contains("90"), "{debug}"); // 0x5A
    assert!(!debug.contains(&SecretKey::from_bytes([0x5A; 32]).to_base64url()[..8]));
}
