//! A dry walk over a state before it is encoded, so a value postcard would lose or could
//! not read back is refused by the name of the local that holds it, and the largest local
//! is known when the state is too large.
//!
//! The walk is a `Serializer` that writes nothing. It sees every value's Rust type
//! (`std::any::type_name`) and every serde call, which is enough to find what postcard
//! (a positional, not self-describing format) cannot keep:
//!
//! - an `Rc`/`Arc`/`Weak`: serde stores what it points to, so handles that shared one
//!   value before the suspension each get their own copy after it (a write through one is
//!   lost to the others);
//! - a `serde_json::Value` or `serde_json::Map`: written, but read back only by a
//!   self-describing format;
//! - a field left out by `#[serde(skip_serializing_if = ..)]` (serde calls `skip_field`):
//!   the fields after it would be read from the wrong bytes;
//! - a map or sequence of unknown length (`#[serde(flatten)]`).
//!
//! The fields of the outermost struct or struct variant are the locals: the generated state
//! enum names each field like the local it keeps.

use std::fmt;

use serde::ser::{self, Serialize};

/// Why a state cannot be stored, and the local that holds the value (when the state names
/// its locals).
#[derive(Debug)]
pub(crate) struct Problem {
    pub(crate) local: Option<&'static str>,
    pub(crate) reason: String,
}

/// What the walk found in a storable state.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    /// The largest local (name, encoded bytes), when the state names its locals.
    pub(crate) largest: Option<(&'static str, usize)>,
}

/// Walks `state`, refusing what postcard would lose (see the module docs).
pub(crate) fn inspect<S: Serialize + ?Sized>(state: &S) -> Result<Walked, Problem> {
    let mut cx = Cx::default();
    match state.serialize(Walk { cx: &mut cx }) {
        Ok(()) => Ok(Walked {
            largest: cx.largest,
        }),
        Err(Stop(reason)) => Err(Problem {
            local: cx.path.first().and_then(|segment| match segment {
                Segment::Field(name) => Some(*name),
                Segment::Index(_) => None,
            }),
            reason,
        }),
    }
}

#[derive(Debug, Clone, Copy)]
enum Segment {
    Field(&'static str),
    Index(usize),
}

#[derive(Default)]
struct Cx {
    /// Where the walk is: the local, then fields and indices inside it.
    path: Vec<Segment>,
    largest: Option<(&'static str, usize)>,
}

impl Cx {
    /// The path as the author would write it: `profile.extra[2]`.
    fn place(&self) -> String {
        let mut out = String::new();
        for segment in &self.path {
            match segment {
                Segment::Field(name) if out.is_empty() => out.push_str(name),
                Segment::Field(name) => {
                    out.push('.');
                    out.push_str(name);
                }
                Segment::Index(index) => out.push_str(&format!("[{index}]")),
            }
        }
        if out.is_empty() {
            "the state".to_string()
        } else {
            format!("`{out}`")
        }
    }

    /// Refuses a value by its type: shared handles and JSON values.
    fn check<T: ?Sized>(&self) -> Result<(), Stop> {
        // `collect_seq`/`collect_map` pass elements by reference: look through `&`.
        let ty = std::any::type_name::<T>().trim_start_matches(['&', ' ']);
        let ty = ty.strip_prefix("mut ").unwrap_or(ty);
        const SHARED: [&str; 6] = [
            "alloc::rc::Rc<",
            "alloc::sync::Arc<",
            "alloc::rc::Weak<",
            "alloc::sync::Weak<",
            "std::rc::Rc<",
            "std::sync::Arc<",
        ];
        if SHARED.iter().any(|shared| ty.starts_with(shared)) {
            return Err(Stop(format!(
                "{} is an `Rc`/`Arc` handle (`{ty}`): the sealed state stores a copy of what it \
                 points to, so after the suspension the handles that shared it no longer do and \
                 a write through one is lost to the others. Keep the value itself, unwrapped, in \
                 one local (or take a `State<T>` parameter for state shared by every call)",
                self.place()
            )));
        }
        if ty.starts_with("serde_json::value::Value") || ty.starts_with("serde_json::map::Map<") {
            return Err(Stop(format!(
                "{} is a `serde_json` value, which postcard (the state's format) writes but \
                 cannot read back; keep it in `mrtr::machine::AsJson(..)`",
                self.place()
            )));
        }
        Ok(())
    }

    fn unknown_length(&self) -> Stop {
        Stop(format!(
            "{} is a map or sequence of unknown length (a `#[serde(flatten)]` field, or a \
             `Serialize` impl that does not give its length), which postcard cannot store; \
             drop `flatten`, or keep the value in `mrtr::machine::AsJson(..)`",
            self.place()
        ))
    }

    /// Walks `value` at `segment`, checking its type first.
    fn nested<T: Serialize + ?Sized>(&mut self, segment: Segment, value: &T) -> Result<(), Stop> {
        self.path.push(segment);
        self.check::<T>()?;
        value.serialize(Walk { cx: &mut *self })?;
        if let [Segment::Field(local)] = self.path.as_slice() {
            let local = *local;
            let size = postcard::experimental::serialized_size(value).unwrap_or(0);
            if self.largest.is_none_or(|(_, largest)| size > largest) {
                self.largest = Some((local, size));
            }
        }
        self.path.pop();
        Ok(())
    }
}

/// The walk's error: the reason, already naming the place.
#[derive(Debug)]
struct Stop(String);

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Stop {}

impl ser::Error for Stop {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Stop(message.to_string())
    }
}

struct Walk<'a> {
    cx: &'a mut Cx,
}

/// A struct, tuple, sequence or map being walked: counts its elements for the path.
struct Compound<'a> {
    cx: &'a mut Cx,
    index: usize,
}

impl<'a> Walk<'a> {
    fn compound(self) -> Compound<'a> {
        Compound {
            cx: self.cx,
            index: 0,
        }
    }
}

macro_rules! leaves {
    ($($method:ident($ty:ty);)*) => {$(
        fn $method(self, _: $ty) -> Result<(), Stop> {
            Ok(())
        }
    )*};
}

impl<'a> ser::Serializer for Walk<'a> {
    type Ok = ();
    type Error = Stop;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    leaves! {
        serialize_bool(bool);
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_i128(i128);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_u128(u128);
        serialize_f32(f32);
        serialize_f64(f64);
        serialize_char(char);
        serialize_str(&str);
        serialize_bytes(&[u8]);
        serialize_unit_struct(&'static str);
    }

    fn serialize_none(self) -> Result<(), Stop> {
        Ok(())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Stop> {
        self.cx.check::<T>()?;
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Stop> {
        Ok(())
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Stop> {
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        self.cx.check::<T>()?;
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        self.cx.check::<T>()?;
        value.serialize(self)
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a>, Stop> {
        match len {
            Some(_) => Ok(self.compound()),
            None => Err(self.cx.unknown_length()),
        }
    }

    fn serialize_tuple(self, _: usize) -> Result<Compound<'a>, Stop> {
        Ok(self.compound())
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Stop> {
        Ok(self.compound())
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Stop> {
        Ok(self.compound())
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a>, Stop> {
        match len {
            Some(_) => Ok(self.compound()),
            None => Err(self.cx.unknown_length()),
        }
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Stop> {
        Ok(self.compound())
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Stop> {
        Ok(self.compound())
    }
}

impl Compound<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        let index = self.index;
        self.index += 1;
        self.cx.nested(Segment::Index(index), value)
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Stop> {
        self.cx.nested(Segment::Field(key), value)
    }

    fn skipped(&mut self, key: &'static str) -> Result<(), Stop> {
        Err(Stop(format!(
            "{} leaves out its field `{key}` (`#[serde(skip_serializing_if = ..)]`): postcard \
             stores fields by position, so every field after it would be read back from the \
             wrong bytes. Drop the attribute from that type, or keep the value in \
             `mrtr::machine::AsJson(..)`",
            self.cx.place()
        )))
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        self.element(value)
    }
    fn end(self) -> Result<(), Stop> {
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        self.element(value)
    }
    fn end(self) -> Result<(), Stop> {
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        self.element(value)
    }
    fn end(self) -> Result<(), Stop> {
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        self.element(value)
    }
    fn end(self) -> Result<(), Stop> {
        Ok(())
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Stop> {
        // A key and its value share the entry's index.
        self.cx.nested(Segment::Index(self.index), key)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        self.element(value)
    }
    fn end(self) -> Result<(), Stop> {
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        self.field(key, value)
    }
    fn skip_field(&mut self, key: &'static str) -> Result<(), Stop> {
        self.skipped(key)
    }
    fn end(self) -> Result<(), Stop> {
        Ok(())
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        self.field(key, value)
    }
    fn skip_field(&mut self, key: &'static str) -> Result<(), Stop> {
        self.skipped(key)
    }
    fn end(self) -> Result<(), Stop> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
