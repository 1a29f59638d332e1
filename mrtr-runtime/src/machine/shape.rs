//! Which kind of value a type's `Deserialize` asks for, found without any input.
//!
//! An accepted single-field answer (`{"text": "…"}`) is decoded as the whole object first
//! and then as its one field. For a type that asks for a scalar or a sequence, serde_json
//! refuses any object, so the first attempt can only fail, and failing costs an error
//! message formatted and thrown away on every answer. Asking the type first is free.

use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};

/// Whether `T` asks its deserializer for a scalar, a string, bytes, unit or a sequence:
/// the kinds serde_json's value deserializer never produces from an object.
///
/// `false` for anything that may read an object (a struct, a map, an enum, an option, a
/// newtype, `deserialize_any`, ignored values).
pub(crate) fn refuses_objects<T: DeserializeOwned>() -> bool {
    let mut asked = None;
    let _ = T::deserialize(Probe(&mut asked));
    asked == Some(Kind::NeverAnObject)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    NeverAnObject,
    MaybeAnObject,
}

/// Records the first method called and stops there.
struct Probe<'a>(&'a mut Option<Kind>);

impl Probe<'_> {
    fn record<T>(self, kind: Kind) -> Result<T, Stopped> {
        self.0.get_or_insert(kind);
        Err(Stopped)
    }
}

/// The probe's only outcome; carries nothing, so building it costs nothing.
#[derive(Debug)]
struct Stopped;

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("stopped after the first request")
    }
}

impl std::error::Error for Stopped {}

impl de::Error for Stopped {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stopped
    }
}

macro_rules! never_an_object {
    ($($method:ident),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stopped> {
                self.record(Kind::NeverAnObject)
            }
        )*
    };
}

macro_rules! maybe_an_object {
    ($($method:ident),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stopped> {
                self.record(Kind::MaybeAnObject)
            }
        )*
    };
}

impl<'de> Deserializer<'de> for Probe<'_> {
    type Error = Stopped;

    never_an_object!(
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_unit,
        deserialize_seq,
        deserialize_identifier,
    );

    maybe_an_object!(
        deserialize_any,
        deserialize_option,
        deserialize_map,
        deserialize_ignored_any,
    );

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: V,
    ) -> Result<V::Value, Stopped> {
        self.record(Kind::NeverAnObject)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Stopped> {
        self.record(Kind::NeverAnObject)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        _: V,
    ) -> Result<V::Value, Stopped> {
        self.record(Kind::NeverAnObject)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: V,
    ) -> Result<V::Value, Stopped> {
        self.record(Kind::MaybeAnObject)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stopped> {
        self.record(Kind::MaybeAnObject)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stopped> {
        // serde_json reads an externally tagged variant from a one-key object.
        self.record(Kind::MaybeAnObject)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;
    use serde_json::{Value, json};

    use super::refuses_objects;

    #[derive(Deserialize)]
    struct Form {
        _name: String,
    }

    #[derive(Deserialize)]
    struct Wrapped(#[allow(dead_code)] String);

    #[derive(Deserialize)]
    enum Choice {
        A,
    }

    /// The claim the probe rests on: for every type it says refuses objects, serde_json
    /// refuses a one-field object; the others are tried as a whole first.
    fn check<T: serde::de::DeserializeOwned>(expected: bool) {
        assert_eq!(
            refuses_objects::<T>(),
            expected,
            "{}",
            std::any::type_name::<T>()
        );
        if expected {
            assert!(serde_json::from_value::<T>(json!({"text": "x"})).is_err());
            assert!(serde_json::from_value::<T>(json!({"A": null})).is_err());
        }
    }

    #[test]
    fn scalars_strings_and_lists_refuse_objects() {
        check::<String>(true);
        check::<bool>(true);
        check::<u32>(true);
        check::<i64>(true);
        check::<f64>(true);
        check::<char>(true);
        check::<()>(true);
        check::<Vec<String>>(true);
        check::<(String, u8)>(true);
    }

    #[test]
    fn anything_that_may_read_an_object_is_tried_whole() {
        check::<Value>(false);
        check::<Form>(false);
        check::<BTreeMap<String, String>>(false);
        check::<Option<String>>(false);
        check::<Wrapped>(false);
        check::<Choice>(false);
        check::<serde::de::IgnoredAny>(false);
        // Shapes serde_json does read from a one-field object.
        assert!(serde_json::from_value::<Choice>(json!({"A": null})).is_ok());
        assert!(serde_json::from_value::<Value>(json!({"text": "x"})).is_ok());
    }
}
