//! What a token is bound to: the request it continues and who sent it.
//!
//! The server knows all of this again when the client retries, so none of it travels in the
//! token. It goes into the AEAD associated data instead: a token presented for another
//! server, method, tool, argument set or principal fails authentication.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::keyring::KeyId;
use super::wire::TOKEN_PREFIX;
use crate::method::Method;
pub use crate::method::UnknownMethod;

/// The MCP request a token continues (the former name of
/// [`machine::Method`](crate::machine::Method)).
#[cfg(feature = "token-internals")]
#[deprecated(
    since = "0.1.0",
    note = "one type for both: `mrtr_runtime::machine::Method`"
)]
pub type BoundMethod = Method;

/// Everything a token is bound to. Built by the server from the incoming request, once when
/// sealing and again when opening; the two must be equal for the token to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding<'a> {
    audience: &'a str,
    method: Method,
    target: &'a str,
    arguments_digest: [u8; 32],
    principal: Option<&'a str>,
}

impl<'a> Binding<'a> {
    /// Binds to `audience` (the server's name unless configured otherwise), `method`,
    /// `target` (tool name, prompt name or resource URI), the request `arguments` (absent
    /// counts as `{}`), and the authenticated `principal` (`None` when there is no
    /// authentication; `Some("")` is a different principal).
    #[cfg_attr(not(feature = "token-internals"), allow(dead_code))]
    pub fn new(
        audience: &'a str,
        method: Method,
        target: &'a str,
        arguments: Option<&Map<String, Value>>,
        principal: Option<&'a str>,
    ) -> Self {
        Self::with_arguments_digest(
            audience,
            method,
            target,
            arguments_digest(arguments),
            principal,
        )
    }

    /// The same binding with the arguments' digest already made (a request that opens
    /// one state and seals the next binds both to the same arguments: hashed once).
    pub(crate) fn with_arguments_digest(
        audience: &'a str,
        method: Method,
        target: &'a str,
        arguments_digest: [u8; 32],
        principal: Option<&'a str>,
    ) -> Self {
        Self {
            audience,
            method,
            target,
            arguments_digest,
            principal,
        }
    }

    /// SHA-256 of the canonical JSON of the arguments (see [`canonical_json`]).
    #[cfg_attr(not(feature = "token-internals"), allow(dead_code))]
    pub fn arguments_digest(&self) -> &[u8; 32] {
        &self.arguments_digest
    }

    /// The associated data for a token sealed under key `kid`:
    ///
    /// ```text
    /// lp("mrtr3.") || kid (u16 BE) || lp(audience) || lp(method) || lp(target)
    ///   || sha256(canonical_json(arguments)) (32 bytes)
    ///   || 0x00                       when there is no principal
    ///    | 0x01 || lp(principal)      when there is one
    /// ```
    ///
    /// where `lp(x)` is the byte length of `x` as a u64 big-endian followed by the bytes.
    /// Length prefixes make the encoding injective: two different bindings never share
    /// associated data.
    pub fn associated_data(&self, kid: KeyId) -> Vec<u8> {
        let principal_len = self.principal.map_or(0, |p| 8 + p.len());
        let mut aad = Vec::with_capacity(
            8 * 4
                + TOKEN_PREFIX.len()
                + 2
                + self.audience.len()
                + self.method.as_str().len()
                + self.target.len()
                + 32
                + 1
                + principal_len,
        );
        push_length_prefixed(&mut aad, TOKEN_PREFIX.as_bytes());
        aad.extend_from_slice(&kid.to_be_bytes());
        push_length_prefixed(&mut aad, self.audience.as_bytes());
        push_length_prefixed(&mut aad, self.method.as_str().as_bytes());
        push_length_prefixed(&mut aad, self.target.as_bytes());
        aad.extend_from_slice(&self.arguments_digest);
        match self.principal {
            None => aad.push(0),
            Some(principal) => {
                aad.push(1);
                push_length_prefixed(&mut aad, principal.as_bytes());
            }
        }
        aad
    }
}

fn push_length_prefixed(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
    out.extend_from_slice(bytes);
}

pub(crate) fn arguments_digest(arguments: Option<&Map<String, Value>>) -> [u8; 32] {
    let empty = Map::new();
    let canonical = canonical_json_object(arguments.unwrap_or(&empty));
    Sha256::digest(&canonical).into()
}

/// The canonical JSON text of `value`: compact, with the keys of every object sorted by
/// their UTF-8 bytes, recursively. The result does not depend on whether serde_json keeps
/// insertion order (its `preserve_order` feature), so the client may resend the arguments
/// with keys in any order. Numbers and strings are printed as serde_json prints them.
#[cfg_attr(not(feature = "token-internals"), allow(dead_code))]
pub fn canonical_json(value: &Value) -> String {
    // Serializing a `Value` has no failure path (keys are strings, no I/O).
    serde_json::to_string(&Canonical(value)).unwrap_or_default()
}

/// The canonical JSON text of a map whose keys are already in byte order, as a
/// `BTreeMap<String, _>` keeps them: the same text as [`canonical_json`] of the map turned
/// into a `Value`, without building that `Value`.
pub(crate) fn canonical_json_sorted(map: &std::collections::BTreeMap<String, Value>) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    // `String`'s order is its UTF-8 bytes' order: the keys are already canonical.
    let entries = map.iter().map(|(key, value)| (key, Canonical(value)));
    let _ = serde_json::to_writer(&mut out, &SortedObject(std::cell::Cell::new(Some(entries))));
    out
}

/// Serializes an iterator of entries already in canonical order, once.
struct SortedObject<I>(std::cell::Cell<Option<I>>);

impl<'a, 'k, I: Iterator<Item = (&'k String, Canonical<'a>)>> Serialize for SortedObject<I> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.take().into_iter().flatten())
    }
}

fn canonical_json_object(object: &Map<String, Value>) -> Vec<u8> {
    serde_json::to_vec(&CanonicalObject(object)).unwrap_or_default()
}

struct Canonical<'a>(&'a Value);

impl Serialize for Canonical<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(object) => CanonicalObject(object).serialize(serializer),
            Value::Array(items) => serializer.collect_seq(items.iter().map(Canonical)),
            scalar => scalar.serialize(serializer),
        }
    }
}

struct CanonicalObject<'a>(&'a Map<String, Value>);

impl Serialize for CanonicalObject<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut entries: Vec<(&String, &Value)> = self.0.iter().collect();
        entries.sort_unstable_by(|(a, _), (b, _)| a.as_bytes().cmp(b.as_bytes()));
        let mut map = serializer.serialize_map(Some(entries.len()))?;
        for (key, value) in entries {
            map.serialize_entry(key, &Canonical(value))?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(object) => object,
            _ => unreachable!("test input is an object"),
        }
    }

    #[test]
    fn methods_display_and_parse_as_their_json_rpc_names() {
        for (method, name) in [
            (Method::CallTool, "tools/call"),
            (Method::GetPrompt, "prompts/get"),
            (Method::ReadResource, "resources/read"),
        ] {
            assert_eq!(method.to_string(), name);
            assert_eq!(name.parse::<Method>(), Ok(method));
        }
        assert_eq!("tools/list".parse::<Method>(), Err(UnknownMethod));
    }

    /// A `BTreeMap`'s canonical text is that of the same map as a `Value`, byte for byte
    /// (the round ledger's answers digest, compared across instances, depends on it).
    #[test]
    fn a_sorted_maps_canonical_text_is_that_of_its_value() {
        let maps = [
            json!({}),
            json!({"b": {"z": [1, {"y": 2, "x": null}], "a": "\u{e9}"}, "a": true, "B": 1.5}),
            json!({"\u{e9}": 1, "e": 2, "\u{1f600}": {"k": "v"}, "": []}),
        ];
        for value in maps {
            let map: std::collections::BTreeMap<String, Value> =
                serde_json::from_value(value.clone()).unwrap();
            let expected = canonical_json(&serde_json::to_value(&map).unwrap());
            assert_eq!(
                String::from_utf8(canonical_json_sorted(&map)).unwrap(),
                expected
            );
        }
    }

    #[test]
    fn canonical_json_sorts_keys_recursively_and_is_compact() {
        let value = json!({
            "zeta": {"y": 1, "x": [ {"b": 2, "a": 1} ]},
            "alpha": "text with \"quotes\" and \u{e9}",
            "Beta": 1.5,
            "": null
        });
        assert_eq!(
            canonical_json(&value),
            r#"{"":null,"Beta":1.5,"alpha":"text with \"quotes\" and é","zeta":{"x":[{"a":1,"b":2}],"y":1}}"#
        );
    }

    #[test]
    fn canonical_json_ignores_insertion_order() {
        let mut forward = Map::new();
        forward.insert("a".into(), json!(1));
        forward.insert("b".into(), json!({"d": 4, "c": 3}));
        let mut backward = Map::new();
        backward.insert("b".into(), json!({"c": 3, "d": 4}));
        backward.insert("a".into(), json!(1));
        assert_eq!(
            canonical_json_object(&forward),
            canonical_json_object(&backward)
        );
        assert_eq!(
            canonical_json_object(&forward),
            br#"{"a":1,"b":{"c":3,"d":4}}"#
        );
    }

    #[test]
    fn keys_sort_by_bytes_not_by_chars_or_case() {
        // 'Z' (0x5A) < 'a' (0x61) < 'é' (0xC3 0xA9)
        let value = json!({"é": 1, "a": 2, "Z": 3});
        assert_eq!(canonical_json(&value), r#"{"Z":3,"a":2,"é":1}"#);
    }

    #[test]
    fn absent_arguments_equal_empty_object() {
        assert_eq!(arguments_digest(None), arguments_digest(Some(&Map::new())));
        assert_ne!(
            arguments_digest(None),
            arguments_digest(Some(&object(json!({"a": null}))))
        );
    }

    #[test]
    fn associated_data_layout_is_as_documented() {
        let binding = Binding::new("au", Method::CallTool, "t", None, Some("p"));
        let aad = binding.associated_data(KeyId(0x0102));
        let mut expected = Vec::new();
        expected.extend_from_slice(&6u64.to_be_bytes());
        expected.extend_from_slice(b"mrtr3.");
        expected.extend_from_slice(&[1, 2]);
        expected.extend_from_slice(&2u64.to_be_bytes());
        expected.extend_from_slice(b"au");
        expected.extend_from_slice(&10u64.to_be_bytes());
        expected.extend_from_slice(b"tools/call");
        expected.extend_from_slice(&1u64.to_be_bytes());
        expected.extend_from_slice(b"t");
        expected.extend_from_slice(&Sha256::digest(b"{}"));
        expected.push(1);
        expected.extend_from_slice(&1u64.to_be_bytes());
        expected.extend_from_slice(b"p");
        assert_eq!(aad, expected);
    }

    #[test]
    fn every_bound_field_changes_the_associated_data() {
        let args = object(json!({"n": 1}));
        let other_args = object(json!({"n": 2}));
        let base = Binding::new("srv", Method::CallTool, "tool", Some(&args), Some("alice"));
        let variants = [
            Binding::new("srv2", Method::CallTool, "tool", Some(&args), Some("alice")),
            Binding::new("srv", Method::GetPrompt, "tool", Some(&args), Some("alice")),
            Binding::new(
                "srv",
                Method::ReadResource,
                "tool",
                Some(&args),
                Some("alice"),
            ),
            Binding::new("srv", Method::CallTool, "tool2", Some(&args), Some("alice")),
            Binding::new(
                "srv",
                Method::CallTool,
                "tool",
                Some(&other_args),
                Some("alice"),
            ),
            Binding::new("srv", Method::CallTool, "tool", None, Some("alice")),
            Binding::new("srv", Method::CallTool, "tool", Some(&args), Some("bob")),
            Binding::new("srv", Method::CallTool, "tool", Some(&args), Some("")),
            Binding::new("srv", Method::CallTool, "tool", Some(&args), None),
        ];
        let base_aad = base.associated_data(KeyId(1));
        assert_ne!(
            base_aad,
            base.associated_data(KeyId(2)),
            "kid must be bound"
        );
        let mut seen = vec![base_aad];
        for variant in &variants {
            let aad = variant.associated_data(KeyId(1));
            assert!(!seen.contains(&aad), "{variant:?} collides");
            seen.push(aad);
        }
    }

    #[test]
    fn field_boundaries_cannot_shift() {
        // Moving characters between adjacent fields must change the associated data.
        let pairs = [(("ab", "c"), ("a", "bc")), (("", "abc"), ("abc", ""))];
        for ((audience_a, target_a), (audience_b, target_b)) in pairs {
            let a = Binding::new(audience_a, Method::CallTool, target_a, None, None);
            let b = Binding::new(audience_b, Method::CallTool, target_b, None, None);
            assert_ne!(a.associated_data(KeyId(0)), b.associated_data(KeyId(0)));
        }
        let a = Binding::new("x", Method::CallTool, "t", None, Some("p"));
        let b = Binding::new("x", Method::CallTool, "t", None, Some("pp"));
        assert_ne!(a.associated_data(KeyId(0)), b.associated_data(KeyId(0)));
    }

    #[test]
    fn method_names_round_trip() {
        for method in [Method::CallTool, Method::GetPrompt, Method::ReadResource] {
            assert_eq!(method.as_str().parse(), Ok(method));
        }
        assert_eq!("Tools/Call".parse::<Method>(), Err(UnknownMethod));
    }
}
