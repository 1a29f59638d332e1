//! Property tests for the sealed `requestState` token: any tampering, truncation, extension
//! or change of a bound field is rejected; honest tokens round-trip; rotation works.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mrtr::token::internals::{Binding, Envelope, Method, SealInput, StateSealer};
use mrtr::token::{KeyId, KeyRing, ManualClock, Rejection, SecretKey};
use proptest::prelude::*;
use serde_json::{Map, Value};

const NOW: u64 = 1_767_225_600;

/// Owned form of a [`Binding`], so strategies can generate it.
#[derive(Debug, Clone, PartialEq)]
struct BindingFields {
    audience: String,
    method: Method,
    target: String,
    arguments: Option<Map<String, Value>>,
    principal: Option<String>,
}

impl BindingFields {
    fn binding(&self) -> Binding<'_> {
        Binding::new(
            &self.audience,
            self.method,
            &self.target,
            self.arguments.as_ref(),
            self.principal.as_deref(),
        )
    }

    /// Arguments as the server sees them: absent and `{}` are the same request.
    fn effective_arguments(&self) -> Map<String, Value> {
        self.arguments.clone().unwrap_or_default()
    }
}

fn sealer(ring: KeyRing) -> StateSealer {
    StateSealer::new(ring).with_clock(Arc::new(ManualClock::new(NOW)))
}

fn ring(kid: u16, byte: u8) -> KeyRing {
    KeyRing::new(KeyId(kid), SecretKey::from_bytes([byte; 32]))
}

fn method() -> impl Strategy<Value = Method> {
    prop_oneof![
        Just(Method::CallTool),
        Just(Method::GetPrompt),
        Just(Method::ReadResource),
    ]
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-zA-Z0-9 é]{0,8}".prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{0,4}", inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

fn arguments() -> impl Strategy<Value = Option<Map<String, Value>>> {
    prop::option::of(
        prop::collection::btree_map("[a-z_]{1,6}", json_value(), 0..4)
            .prop_map(|map: BTreeMap<String, Value>| map.into_iter().collect()),
    )
}

fn binding_fields() -> impl Strategy<Value = BindingFields> {
    (
        "[a-z-]{0,12}",
        method(),
        "[a-zA-Z0-9_:/.]{0,16}",
        arguments(),
        prop::option::of("[a-z@.]{0,10}"),
    )
        .prop_map(
            |(audience, method, target, arguments, principal)| BindingFields {
                audience,
                method,
                target,
                arguments,
                principal,
            },
        )
}

fn seal_input() -> impl Strategy<Value = SealInput> {
    (
        any::<u64>(),
        any::<u32>(),
        prop::collection::vec(any::<u8>(), 0..512),
    )
        .prop_map(|(fingerprint, round, payload)| SealInput {
            fingerprint,
            round,
            payload,
        })
}

/// Rejections decided before or by the AEAD: a forged or damaged token must end in one of
/// these, never reach envelope decoding (which only authentic plaintext may).
fn rejected_before_decoding(result: Result<Envelope, Rejection>) -> bool {
    matches!(
        result,
        Err(Rejection::WrongPrefix
            | Rejection::Malformed { .. }
            | Rejection::UnknownKey { .. }
            | Rejection::Unauthentic
            | Rejection::TooLarge { .. })
    )
}

fn raw_of(token: &str) -> Vec<u8> {
    URL_SAFE_NO_PAD
        .decode(token.strip_prefix("mrtr3.").unwrap())
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn honest_tokens_round_trip(fields in binding_fields(), input in seal_input()) {
        let sealer = sealer(ring(1, 1));
        let token = sealer.seal(&fields.binding(), input.clone()).unwrap();
        let envelope = sealer.open(&token, &fields.binding()).unwrap();
        prop_assert_eq!(envelope, Envelope {
            fingerprint: input.fingerprint,
            expires_at: (NOW + 600) as u32,
            round: input.round,
            payload: input.payload,
        });
    }

    #[test]
    fn flipping_any_bit_of_the_sealed_bytes_is_rejected(
        input in seal_input(),
        position in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let fields = BindingFields {
            audience: "srv".into(), method: Method::CallTool, target: "t".into(),
            arguments: None, principal: None,
        };
        // Two keys, so a flipped key id can also land on a key the server holds.
        let keys = ring(1, 1).with_opening_key(KeyId(3), SecretKey::from_bytes([1; 32])).unwrap();
        let sealer = sealer(keys);
        let token = sealer.seal(&fields.binding(), input).unwrap();
        let mut raw = raw_of(&token);
        let index = position.index(raw.len());
        raw[index] ^= 1 << bit;
        let tampered = format!("mrtr3.{}", URL_SAFE_NO_PAD.encode(&raw));
        // The key id (first two bytes) picks the key; anything else fails the tag. Key 3
        // has the same secret as key 1: the key id is bound in the associated data.
        let kid = u16::from_be_bytes([raw[0], raw[1]]);
        let expected = if index < 2 && kid != 3 {
            Rejection::UnknownKey { kid: KeyId(kid) }
        } else {
            Rejection::Unauthentic
        };
        prop_assert_eq!(sealer.open(&tampered, &fields.binding()), Err(expected));
    }

    #[test]
    fn flipping_any_bit_of_the_token_text_is_rejected(
        input in seal_input(),
        position in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let fields = BindingFields {
            audience: "srv".into(), method: Method::GetPrompt, target: "p".into(),
            arguments: None, principal: Some("alice".into()),
        };
        let sealer = sealer(ring(1, 1));
        let token = sealer.seal(&fields.binding(), input).unwrap();
        let mut bytes = token.into_bytes();
        let index = position.index(bytes.len());
        bytes[index] ^= 1 << bit;
        // A flip may leave ASCII; if not, the lossy text is what a server would see.
        let tampered = String::from_utf8_lossy(&bytes);
        let result = sealer.open(&tampered, &fields.binding());
        if index < "mrtr3.".len() {
            prop_assert_eq!(result, Err(Rejection::WrongPrefix));
        } else {
            prop_assert!(rejected_before_decoding(result.clone()), "{:?}", result);
        }
    }

    #[test]
    fn truncating_at_any_length_is_rejected(
        input in seal_input(),
        position in any::<prop::sample::Index>(),
    ) {
        let fields = BindingFields {
            audience: "srv".into(), method: Method::CallTool, target: "t".into(),
            arguments: None, principal: None,
        };
        let sealer = sealer(ring(1, 1));
        let token = sealer.seal(&fields.binding(), input).unwrap();
        let len = position.index(token.len()); // 0..token.len(): always strictly shorter
        let result = sealer.open(&token[..len], &fields.binding());
        if len < "mrtr3.".len() {
            prop_assert_eq!(result, Err(Rejection::WrongPrefix));
        } else {
            prop_assert!(rejected_before_decoding(result.clone()), "{:?}", result);
        }
    }

    #[test]
    fn appending_any_suffix_is_rejected(
        input in seal_input(),
        suffix in prop_oneof![Just("-TAMPERED".to_owned()), "[A-Za-z0-9_-]{1,8}", "\\PC{1,8}"],
    ) {
        let fields = BindingFields {
            audience: "srv".into(), method: Method::CallTool, target: "t".into(),
            arguments: None, principal: None,
        };
        let sealer = sealer(ring(1, 1));
        let token = sealer.seal(&fields.binding(), input).unwrap();
        let extended = token + &suffix;
        let result = sealer.open(&extended, &fields.binding());
        prop_assert!(rejected_before_decoding(result.clone()), "{:?}", result);
    }

    #[test]
    fn changing_any_bound_field_is_rejected(
        sealed_for in binding_fields(),
        presented in binding_fields(),
        which in 0usize..5,
        input in seal_input(),
    ) {
        // Start from the sealed binding and replace exactly one field.
        let mut changed = sealed_for.clone();
        match which {
            0 => changed.audience = presented.audience,
            1 => changed.method = presented.method,
            2 => changed.target = presented.target,
            3 => changed.arguments = presented.arguments,
            _ => changed.principal = presented.principal,
        }
        let same_request = changed.audience == sealed_for.audience
            && changed.method == sealed_for.method
            && changed.target == sealed_for.target
            && changed.effective_arguments() == sealed_for.effective_arguments()
            && changed.principal == sealed_for.principal;
        prop_assume!(!same_request);

        let sealer = sealer(ring(1, 1));
        let token = sealer.seal(&sealed_for.binding(), input).unwrap();
        prop_assert_eq!(sealer.open(&token, &changed.binding()), Err(Rejection::Unauthentic));
    }

    #[test]
    fn rotation_old_kid_opens_new_kid_seals(
        old_kid in any::<u16>(),
        new_kid in any::<u16>(),
        input in seal_input(),
    ) {
        prop_assume!(old_kid != new_kid);
        let fields = BindingFields {
            audience: "srv".into(), method: Method::CallTool, target: "t".into(),
            arguments: None, principal: None,
        };
        let before = sealer(ring(old_kid, 1));
        let after = sealer(
            ring(new_kid, 2).with_opening_key(KeyId(old_kid), SecretKey::from_bytes([1; 32])).unwrap(),
        );

        let old_token = before.seal(&fields.binding(), input.clone()).unwrap();
        prop_assert!(after.open(&old_token, &fields.binding()).is_ok());

        let new_token = after.seal(&fields.binding(), input).unwrap();
        prop_assert_eq!(&raw_of(&new_token)[..2], &new_kid.to_be_bytes()[..]);
        prop_assert!(after.open(&new_token, &fields.binding()).is_ok());
        prop_assert_eq!(
            before.open(&new_token, &fields.binding()),
            Err(Rejection::UnknownKey { kid: KeyId(new_kid) })
        );
    }

    #[test]
    fn arbitrary_input_never_opens_or_panics(
        text in prop_oneof![
            "\\PC{0,200}",
            prop::collection::vec(any::<u8>(), 0..200)
                .prop_map(|raw| format!("mrtr3.{}", URL_SAFE_NO_PAD.encode(raw))),
            // Known key id 1, then random nonce, ciphertext and tag.
            prop::collection::vec(any::<u8>(), 0..200).prop_map(|tail| {
                let raw = [&[0u8, 1][..], &tail].concat();
                format!("mrtr3.{}", URL_SAFE_NO_PAD.encode(raw))
            }),
        ],
    ) {
        let sealer = sealer(ring(1, 1));
        let binding = Binding::new("srv", Method::CallTool, "t", None, None);
        let result = sealer.open(&text, &binding);
        prop_assert!(rejected_before_decoding(result.clone()), "{:?}", result);
    }
}
