//! Decoding a postcard-encoded state whose type borrows `&'static str`.
//!
//! A tool body that keeps a string literal across a suspension stores a state containing
//! `&'static str`, which is `Deserialize<'static>` but not `DeserializeOwned`. Decoding it
//! from short-lived bytes would need the input to live forever (leaking it). Instead, the
//! deserializer here presents itself as `Deserializer<'static>` over short-lived input and
//! resolves every borrowed string against the string literals of the tool body: the
//! decoded reference points into those literals, so nothing is allocated for `'static`,
//! and a string that is not one of them cannot become a `&'static str`.
//!
//! Every level of the value (options, newtypes, sequences, maps, enums and their
//! variants, and the seeds serde threads through them) is wrapped, so nested strings go
//! through the same lookup.
//!
//! Postcard discards the message of custom serde errors (`invalid type: …`); the adapter
//! keeps the last message raised through it so [`DecodeError`] can report it.
#![forbid(unsafe_code)]

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, Visitor};

/// Why a state could not be decoded.
///
/// ```
/// use mrtr_runtime::machine::decode_state;
///
/// // Two bytes of state but only one is used.
/// let error = decode_state::<u8>(&[7, 0], &[]).unwrap_err();
/// assert_eq!(error.to_string(), "state has 1 trailing byte(s)");
/// ```
#[derive(Debug)]
pub struct DecodeError {
    repr: Repr,
    /// The field of the outermost struct variant being read when it failed: in a state
    /// `#[mrtr::tool]` generates, the local.
    local: Option<&'static str>,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.repr, f)
    }
}

impl std::error::Error for DecodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.repr)
    }
}

#[derive(Debug, thiserror::Error)]
enum Repr {
    /// Postcard reported the error itself.
    #[error("invalid state: {0}")]
    Postcard(postcard::Error),
    /// A serde error, with its message.
    #[error("invalid state: {0}")]
    Message(Box<str>),
    /// The value ended before the input did.
    #[error("state has {0} trailing byte(s)")]
    TrailingBytes(usize),
}

impl DecodeError {
    fn new(repr: Repr) -> Self {
        Self { repr, local: None }
    }

    fn message(message: impl fmt::Display) -> Self {
        Self::new(Repr::Message(message.to_string().into_boxed_str()))
    }

    /// The local being read when decoding failed, when the state is an enum of struct
    /// variants whose fields are named like the locals (as `#[mrtr::tool]` generates).
    ///
    /// ```
    /// # use mrtr_runtime::machine::decode_state;
    /// #[derive(serde::Serialize, serde::Deserialize, Debug)]
    /// enum State { S0 { count: u8, label: &'static str } }
    /// let bytes = postcard::to_allocvec(&State::S0 { count: 1, label: "other" }).unwrap();
    /// let error = decode_state::<State>(&bytes, &["known"]).unwrap_err();
    /// assert_eq!(error.local(), Some("label"));
    /// ```
    pub fn local(&self) -> Option<&'static str> {
        self.local
    }
}

impl From<postcard::Error> for DecodeError {
    fn from(error: postcard::Error) -> Self {
        Self::new(Repr::Postcard(error))
    }
}

impl de::Error for DecodeError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Self::message(message)
    }
}

/// Decodes a postcard-encoded state.
///
/// Every `&'static str` in `S` must decode to one of `literals` (the string literals of the
/// tool body, sorted and deduplicated by the macro); the decoded reference points into
/// `literals`, so nothing is leaked and an attacker cannot make the server allocate
/// `'static` memory. Any other string for a borrowed `&str` is a decode error. Owned
/// strings (`String`, `Cow<'static, str>`) decode any string. Borrowed bytes
/// (`&'static [u8]`) are never supported. All bytes must be consumed.
///
/// For a `DeserializeOwned` type, the result is the same as `postcard::from_bytes` except
/// that trailing bytes are an error.
///
/// ```
/// use mrtr_runtime::machine::decode_state;
///
/// #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
/// struct State { env: &'static str, round: u32 }
///
/// static LITERALS: &[&str] = &["production", "staging"];
/// let bytes = postcard::to_allocvec(&State { env: "staging", round: 2 }).unwrap();
/// let state: State = decode_state(&bytes, LITERALS).unwrap();
/// assert_eq!(state, State { env: "staging", round: 2 });
/// assert!(std::ptr::eq(state.env, LITERALS[1]));
///
/// // A string that is not a literal of the tool body is refused.
/// let forged = postcard::to_allocvec(&State { env: "elsewhere", round: 2 }).unwrap();
/// let error = decode_state::<State>(&forged, LITERALS).unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     r#"invalid state: invalid type: string "elsewhere", expected a borrowed string"#
/// );
/// ```
pub fn decode_state<S: de::Deserialize<'static>>(
    bytes: &[u8],
    literals: &'static [&'static str],
) -> Result<S, DecodeError> {
    debug_assert!(
        literals.windows(2).all(|pair| pair[0] < pair[1]),
        "decode_state: literals must be sorted and deduplicated"
    );
    let cx = Cx {
        literals,
        pending: Cell::new(None),
        depth: Cell::new(0),
        fields: Cell::new(None),
        next_field: Cell::new(0),
        reading: Cell::new(None),
    };
    let mut inner = postcard::Deserializer::from_bytes(bytes);
    let value = S::deserialize(De {
        inner: &mut inner,
        cx: &cx,
    })
    .map_err(|mut error| {
        error.local = cx.reading.get();
        error
    })?;
    let rest = inner.finalize()?;
    if !rest.is_empty() {
        return Err(DecodeError::new(Repr::TrailingBytes(rest.len())));
    }
    Ok(value)
}

/// Shared by every adapter of one decode.
struct Cx {
    literals: &'static [&'static str],
    /// The error last handed to the inner deserializer, which (postcard) would drop its
    /// message; taken back where the inner deserializer returns.
    pending: Cell<Option<DecodeError>>,
    /// How deep the decode is (values entered through a seed).
    depth: Cell<usize>,
    /// The fields of the outermost struct variant (a generated state's locals).
    fields: Cell<Option<&'static [&'static str]>>,
    next_field: Cell<usize>,
    /// The outermost field being read.
    reading: Cell<Option<&'static str>>,
}

impl Cx {
    fn literal(&self, s: &str) -> Option<&'static str> {
        let index = self.literals.binary_search_by(|lit| (*lit).cmp(s)).ok()?;
        Some(self.literals[index])
    }

    /// Our error → the inner deserializer's error type.
    fn outward<E: de::Error>(&self, error: DecodeError) -> E {
        let inner = E::custom(&error);
        self.pending.set(Some(error));
        inner
    }

    /// The inner deserializer's error → ours, preferring the message it dropped.
    fn inward<E: de::Error>(&self, error: E) -> DecodeError {
        self.pending
            .take()
            .unwrap_or_else(|| DecodeError::message(error))
    }

    fn out<T, E: de::Error>(&self, result: Result<T, DecodeError>) -> Result<T, E> {
        result.map_err(|error| self.outward(error))
    }

    fn back<T, E: de::Error>(&self, result: Result<T, E>) -> Result<T, DecodeError> {
        result.map_err(|error| self.inward(error))
    }
}

/// `Deserializer<'static>` over an inner `Deserializer<'c>`.
///
/// The input lifetime is tied to the context borrow (both are local to
/// [`decode_state`]), which keeps the lifetime parameter constrained.
struct De<'c, D> {
    inner: D,
    cx: &'c Cx,
}

/// `Visitor<'c>` for the inner deserializer, driving the user's `Visitor<'static>`.
struct Vis<'c, V> {
    inner: V,
    cx: &'c Cx,
}

/// `DeserializeSeed<'c>` for the inner deserializer, driving the user's seed.
struct Seed<'c, T> {
    inner: T,
    cx: &'c Cx,
}

/// Sequence, map and enum accesses: `'static` outward, `'c` inward.
struct Seq<'c, A> {
    inner: A,
    cx: &'c Cx,
}

struct Map<'c, A> {
    inner: A,
    cx: &'c Cx,
}

struct Enum<'c, A> {
    inner: A,
    cx: &'c Cx,
}

struct Variant<'c, A> {
    inner: A,
    cx: &'c Cx,
}

impl<'c, D> De<'c, D> {
    fn vis<V>(&self, visitor: V) -> Vis<'c, V> {
        Vis {
            inner: visitor,
            cx: self.cx,
        }
    }
}

/// Forwards `deserialize_*` methods (with the given extra arguments) to the inner
/// deserializer through a [`Vis`].
macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'static>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, DecodeError> {
            let vis = self.vis(visitor);
            self.cx.back(self.inner.$method($($arg,)* vis))
        }
    )*};
}

impl<'c, D: Deserializer<'c>> Deserializer<'static> for De<'c, D> {
    type Error = DecodeError;

    /// postcard never implements it (it is not self-describing): say which shapes ask for it.
    fn deserialize_any<V: Visitor<'static>>(self, _: V) -> Result<V::Value, DecodeError> {
        Err(DecodeError::message(
            "a value that only a self-describing format can read back (an internally tagged \
             `#[serde(tag = ..)]` or `#[serde(untagged)]` enum, a `#[serde(flatten)]` field, a \
             `serde_json::Value`); keep it in `mrtr::machine::AsJson(..)`",
        ))
    }

    forward! {
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
        deserialize_ignored_any();
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// Forwards `visit_*` methods taking a plain value.
macro_rules! visit_value {
    ($($method:ident($ty:ty);)*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
            self.cx.out(self.inner.$method(v))
        }
    )*};
}

impl<'c, V: Visitor<'static>> Visitor<'c> for Vis<'c, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    visit_value! {
        visit_bool(bool);
        visit_i8(i8);
        visit_i16(i16);
        visit_i32(i32);
        visit_i64(i64);
        visit_i128(i128);
        visit_u8(u8);
        visit_u16(u16);
        visit_u32(u32);
        visit_u64(u64);
        visit_u128(u128);
        visit_f32(f32);
        visit_f64(f64);
        visit_char(char);
        visit_bytes(&[u8]);
        visit_byte_buf(Vec<u8>);
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        let result = match self.cx.literal(v) {
            Some(literal) => self.inner.visit_borrowed_str(literal),
            None => self.inner.visit_str(v),
        };
        self.cx.out(result)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'c str) -> Result<V::Value, E> {
        self.visit_str(v)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        let result = match self.cx.literal(&v) {
            Some(literal) => self.inner.visit_borrowed_str(literal),
            None => self.inner.visit_string(v),
        };
        self.cx.out(result)
    }

    fn visit_borrowed_bytes<E: de::Error>(self, v: &'c [u8]) -> Result<V::Value, E> {
        self.cx.out(self.inner.visit_bytes(v))
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.cx.out(self.inner.visit_none())
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.cx.out(self.inner.visit_unit())
    }

    fn visit_some<D: Deserializer<'c>>(self, inner: D) -> Result<V::Value, D::Error> {
        let cx = self.cx;
        cx.out(self.inner.visit_some(De { inner, cx }))
    }

    fn visit_newtype_struct<D: Deserializer<'c>>(self, inner: D) -> Result<V::Value, D::Error> {
        let cx = self.cx;
        cx.out(self.inner.visit_newtype_struct(De { inner, cx }))
    }

    fn visit_seq<A: de::SeqAccess<'c>>(self, inner: A) -> Result<V::Value, A::Error> {
        let cx = self.cx;
        cx.out(self.inner.visit_seq(Seq { inner, cx }))
    }

    fn visit_map<A: de::MapAccess<'c>>(self, inner: A) -> Result<V::Value, A::Error> {
        let cx = self.cx;
        cx.out(self.inner.visit_map(Map { inner, cx }))
    }

    fn visit_enum<A: de::EnumAccess<'c>>(self, inner: A) -> Result<V::Value, A::Error> {
        let cx = self.cx;
        cx.out(self.inner.visit_enum(Enum { inner, cx }))
    }
}

impl<'c, T: DeserializeSeed<'static>> DeserializeSeed<'c> for Seed<'c, T> {
    type Value = T::Value;

    fn deserialize<D: Deserializer<'c>>(self, inner: D) -> Result<T::Value, D::Error> {
        let cx = self.cx;
        let depth = cx.depth.get();
        if depth == 0
            && let Some(fields) = cx.fields.get()
        {
            let index = cx.next_field.get();
            cx.reading.set(fields.get(index).copied());
            cx.next_field.set(index + 1);
        }
        cx.depth.set(depth + 1);
        let result = self.inner.deserialize(De { inner, cx });
        cx.depth.set(depth);
        cx.out(result)
    }
}

impl<'c, T> Seed<'c, T> {
    fn new(inner: T, cx: &'c Cx) -> Self {
        Self { inner, cx }
    }
}

impl<'c, A: de::SeqAccess<'c>> de::SeqAccess<'static> for Seq<'c, A> {
    type Error = DecodeError;

    fn next_element_seed<T: DeserializeSeed<'static>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DecodeError> {
        let result = self.inner.next_element_seed(Seed::new(seed, self.cx));
        self.cx.back(result)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'c, A: de::MapAccess<'c>> de::MapAccess<'static> for Map<'c, A> {
    type Error = DecodeError;

    fn next_key_seed<K: DeserializeSeed<'static>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DecodeError> {
        let result = self.inner.next_key_seed(Seed::new(seed, self.cx));
        self.cx.back(result)
    }

    fn next_value_seed<T: DeserializeSeed<'static>>(
        &mut self,
        seed: T,
    ) -> Result<T::Value, DecodeError> {
        let result = self.inner.next_value_seed(Seed::new(seed, self.cx));
        self.cx.back(result)
    }

    fn next_entry_seed<K: DeserializeSeed<'static>, T: DeserializeSeed<'static>>(
        &mut self,
        key: K,
        value: T,
    ) -> Result<Option<(K::Value, T::Value)>, DecodeError> {
        let result = self
            .inner
            .next_entry_seed(Seed::new(key, self.cx), Seed::new(value, self.cx));
        self.cx.back(result)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'c, A: de::EnumAccess<'c>> de::EnumAccess<'static> for Enum<'c, A> {
    type Error = DecodeError;
    type Variant = Variant<'c, A::Variant>;

    fn variant_seed<T: DeserializeSeed<'static>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), DecodeError> {
        let cx = self.cx;
        let (value, inner) = cx.back(self.inner.variant_seed(Seed::new(seed, cx)))?;
        Ok((value, Variant { inner, cx }))
    }
}

impl<'c, A: de::VariantAccess<'c>> de::VariantAccess<'static> for Variant<'c, A> {
    type Error = DecodeError;

    fn unit_variant(self) -> Result<(), DecodeError> {
        self.cx.back(self.inner.unit_variant())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'static>>(
        self,
        seed: T,
    ) -> Result<T::Value, DecodeError> {
        let cx = self.cx;
        cx.back(self.inner.newtype_variant_seed(Seed::new(seed, cx)))
    }

    fn tuple_variant<V: Visitor<'static>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        let cx = self.cx;
        let vis = Vis { inner: visitor, cx };
        cx.back(self.inner.tuple_variant(len, vis))
    }

    fn struct_variant<V: Visitor<'static>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        let cx = self.cx;
        if cx.depth.get() == 0 && cx.fields.get().is_none() {
            cx.fields.set(Some(fields));
        }
        let vis = Vis { inner: visitor, cx };
        cx.back(self.inner.struct_variant(fields, vis))
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::collections::{BTreeMap, HashMap};
    use std::fmt::Debug;

    use proptest::prelude::*;
    use serde::{Deserialize, Serialize};

    use super::*;

    static LITERALS: &[&str] = &["", "perf", "production", "security", "staging"];

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    enum Phase {
        Start,
        Asked { area: &'static str, index: u32 },
        Pair(&'static str, Option<&'static str>),
        Nested(Inner),
        Owned(String),
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    enum Inner {
        Leaf,
        Deep {
            label: &'static str,
            more: Option<Box<Inner>>,
        },
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    struct Newtype(&'static str);

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    struct State {
        env: &'static str,
        maybe: Option<&'static str>,
        none: Option<&'static str>,
        areas: Vec<&'static str>,
        pair: [&'static str; 2],
        tuple: (u8, &'static str, i64),
        owned: String,
        counts: HashMap<String, u32>,
        keyed: BTreeMap<&'static str, Vec<&'static str>>,
        phase: Phase,
        phases: Vec<Phase>,
        cow: Cow<'static, str>,
        newtype: Newtype,
        unit: (),
        float: f64,
        ch: char,
        bytes: Vec<u8>,
    }

    fn sample() -> State {
        State {
            env: "production",
            maybe: Some("staging"),
            none: None,
            areas: vec!["security", "perf", ""],
            pair: ["perf", "security"],
            tuple: (7, "staging", -3),
            owned: "not a literal".to_string(),
            counts: HashMap::from([("a".to_string(), 1), ("perf".to_string(), 2)]),
            keyed: BTreeMap::from([("perf", vec!["security"]), ("staging", vec![])]),
            phase: Phase::Asked {
                area: "security",
                index: 3,
            },
            phases: vec![
                Phase::Start,
                Phase::Pair("perf", None),
                Phase::Pair("perf", Some("staging")),
                Phase::Nested(Inner::Deep {
                    label: "production",
                    more: Some(Box::new(Inner::Deep {
                        label: "perf",
                        more: Some(Box::new(Inner::Leaf)),
                    })),
                }),
                Phase::Owned("anything at all".to_string()),
            ],
            cow: Cow::Borrowed("free text"),
            newtype: Newtype("staging"),
            unit: (),
            float: 1.5,
            ch: 'é',
            bytes: vec![0, 1, 255],
        }
    }

    fn encode<T: Serialize>(value: &T) -> Vec<u8> {
        postcard::to_allocvec(value).unwrap()
    }

    fn literal_ptr(s: &str) -> &'static str {
        LITERALS[LITERALS.binary_search(&s).unwrap()]
    }

    #[test]
    fn literals_are_sorted() {
        assert!(LITERALS.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn state_round_trips() {
        let state = sample();
        let decoded: State = decode_state(&encode(&state), LITERALS).unwrap();
        assert_eq!(decoded, state);
    }

    #[test]
    fn decoded_str_points_into_literals() {
        let decoded: State = decode_state(&encode(&sample()), LITERALS).unwrap();
        assert!(std::ptr::eq(decoded.env, literal_ptr("production")));
        assert!(std::ptr::eq(decoded.maybe.unwrap(), literal_ptr("staging")));
        for area in &decoded.areas {
            assert!(std::ptr::eq(*area, literal_ptr(area)));
        }
        assert!(std::ptr::eq(decoded.pair[1], literal_ptr("security")));
        assert!(std::ptr::eq(decoded.tuple.1, literal_ptr("staging")));
        assert!(std::ptr::eq(decoded.newtype.0, literal_ptr("staging")));
        let Phase::Asked { area, .. } = decoded.phase else {
            panic!("wrong variant")
        };
        assert!(std::ptr::eq(area, literal_ptr("security")));
        let Phase::Nested(Inner::Deep { label, .. }) = &decoded.phases[3] else {
            panic!("wrong variant")
        };
        assert!(std::ptr::eq(*label, literal_ptr("production")));
    }

    #[test]
    fn bare_static_str_round_trips() {
        let decoded: &'static str = decode_state(&encode(&"perf"), LITERALS).unwrap();
        assert!(std::ptr::eq(decoded, literal_ptr("perf")));
        let decoded: Vec<&'static str> =
            decode_state(&encode(&vec!["", "staging"]), LITERALS).unwrap();
        assert_eq!(decoded, ["", "staging"]);
    }

    #[test]
    fn unknown_borrowed_str_is_an_error() {
        let mut state = sample();
        state.env = "forged";
        let error = decode_state::<State>(&encode(&state), LITERALS).unwrap_err();
        assert!(
            error.to_string().contains("expected a borrowed string"),
            "{error}"
        );

        // Deep inside a struct variant inside a Vec inside a Box.
        let mut state = sample();
        state.phases[3] = Phase::Nested(Inner::Deep {
            label: "perf",
            more: Some(Box::new(Inner::Deep {
                label: "forged",
                more: None,
            })),
        });
        assert!(decode_state::<State>(&encode(&state), LITERALS).is_err());

        // As a map key and in an Option.
        let keyed = BTreeMap::from([("forged", 1u8)]);
        assert!(decode_state::<BTreeMap<&'static str, u8>>(&encode(&keyed), LITERALS).is_err());
        assert!(decode_state::<Option<&'static str>>(&encode(&Some("forged")), LITERALS).is_err());

        // No literals at all.
        assert!(decode_state::<&'static str>(&encode(&"perf"), &[]).is_err());
    }

    #[test]
    fn owned_strings_accept_anything() {
        let value = (
            "forged".to_string(),
            Cow::<'static, str>::Owned("perf".to_string()),
        );
        let decoded: (String, Cow<'static, str>) = decode_state(&encode(&value), &[]).unwrap();
        assert_eq!(decoded, value);
    }

    #[test]
    fn borrowed_bytes_are_refused() {
        let bytes: &[u8] = &[1, 2, 3];
        let encoded = encode(&SerBytes(bytes));
        assert!(decode_state::<BorrowedBytes>(&encoded, LITERALS).is_err());
    }

    /// Serializes as postcard bytes (not a sequence).
    struct SerBytes<'a>(&'a [u8]);
    impl Serialize for SerBytes<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }

    #[derive(Deserialize, Debug)]
    struct BorrowedBytes(#[allow(dead_code)] &'static [u8]);

    #[test]
    fn trailing_bytes_are_an_error() {
        let mut bytes = encode(&sample());
        bytes.push(0);
        let error = decode_state::<State>(&bytes, LITERALS).unwrap_err();
        assert_eq!(error.to_string(), "state has 1 trailing byte(s)");
    }

    #[test]
    fn truncated_input_is_an_error() {
        let bytes = encode(&sample());
        for len in 0..bytes.len() {
            assert!(
                decode_state::<State>(&bytes[..len], LITERALS).is_err(),
                "decoded from {len} of {} bytes",
                bytes.len()
            );
        }
    }

    #[test]
    fn postcard_errors_keep_their_message() {
        let error = decode_state::<u32>(&[], LITERALS).unwrap_err();
        assert!(error.to_string().contains("end of buffer"), "{error}");
        let error = decode_state::<bool>(&[2], LITERALS).unwrap_err();
        assert!(error.to_string().contains("bool"), "{error}");
    }

    fn same_as_postcard<T>(value: &T)
    where
        T: Serialize + serde::de::DeserializeOwned + PartialEq + Debug,
    {
        let bytes = encode(value);
        let ours: T = decode_state(&bytes, LITERALS).unwrap();
        let theirs: T = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(ours, theirs);
        assert_eq!(&ours, value);
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    enum OwnedPhase {
        A,
        B(String, Vec<u16>),
        C { x: Option<i128>, y: [u8; 3] },
    }

    #[test]
    fn owned_types_decode_like_postcard() {
        same_as_postcard(&0u8);
        same_as_postcard(&u128::MAX);
        same_as_postcard(&-12345i64);
        same_as_postcard(&f32::MIN_POSITIVE);
        same_as_postcard(&"perf".to_string());
        same_as_postcard(&Some(vec![Some(1u32), None]));
        same_as_postcard(&HashMap::from([("staging".to_string(), 9u32)]));
        same_as_postcard(&vec![
            OwnedPhase::A,
            OwnedPhase::B("x".into(), vec![1, 2]),
            OwnedPhase::C {
                x: Some(-1),
                y: [1, 2, 3],
            },
        ]);
        same_as_postcard(&(('z', true), (), Cow::<'static, str>::from("security")));
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = decode_state::<State>(&bytes, LITERALS);
            let _ = decode_state::<Vec<Phase>>(&bytes, LITERALS);
            let _ = decode_state::<(Option<&'static str>, HashMap<String, u32>)>(&bytes, LITERALS);
        }

        #[test]
        fn owned_random_bytes_agree_with_postcard(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let ours = decode_state::<Vec<OwnedPhase>>(&bytes, LITERALS).ok();
            let theirs = postcard::take_from_bytes::<Vec<OwnedPhase>>(&bytes)
                .ok()
                .filter(|(_, rest)| rest.is_empty())
                .map(|(value, _)| value);
            prop_assert_eq!(ours, theirs);
        }

        #[test]
        fn mutated_states_never_panic(index in any::<prop::sample::Index>(), byte in any::<u8>()) {
            let mut bytes = encode(&sample());
            let i = index.index(bytes.len());
            bytes[i] = byte;
            if let Ok(state) = decode_state::<State>(&bytes, LITERALS) {
                // Whatever decodes still points into the literals.
                prop_assert!(LITERALS.iter().any(|lit| std::ptr::eq(*lit, state.env)));
            }
        }
    }
}
