//! Recognising field types. A proc macro sees only syntax, so types are recognised by the
//! last segment of their path (`String`, `bool`, `u8`, `Option`, `Vec`, ...); any other plain
//! path is taken to be a choice enum, and the generated code makes rustc check that it
//! implements `FormChoice`.

use syn::{GenericArgument, PathArguments, Type};

/// An integer type and the range a schema bound on it may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IntType {
    pub(crate) name: &'static str,
    pub(crate) min: i128,
    /// Capped at `i64::MAX`: the wire schema carries integer bounds as `i64`.
    pub(crate) max: i128,
}

impl IntType {
    pub(crate) fn unsigned(self) -> bool {
        self.min == 0
    }
}

const INTS: [IntType; 10] = [
    IntType {
        name: "i8",
        min: i8::MIN as i128,
        max: i8::MAX as i128,
    },
    IntType {
        name: "i16",
        min: i16::MIN as i128,
        max: i16::MAX as i128,
    },
    IntType {
        name: "i32",
        min: i32::MIN as i128,
        max: i32::MAX as i128,
    },
    IntType {
        name: "i64",
        min: i64::MIN as i128,
        max: i64::MAX as i128,
    },
    IntType {
        name: "isize",
        min: i64::MIN as i128,
        max: i64::MAX as i128,
    },
    IntType {
        name: "u8",
        min: 0,
        max: u8::MAX as i128,
    },
    IntType {
        name: "u16",
        min: 0,
        max: u16::MAX as i128,
    },
    IntType {
        name: "u32",
        min: 0,
        max: u32::MAX as i128,
    },
    IntType {
        name: "u64",
        min: 0,
        max: i64::MAX as i128,
    },
    IntType {
        name: "usize",
        min: 0,
        max: i64::MAX as i128,
    },
];

/// What one (non-`Option`) field type becomes in the schema.
#[derive(Debug, Clone)]
pub(crate) enum Scalar {
    String,
    Int(IntType),
    /// `f32` (`true`) or `f64`.
    Float {
        single: bool,
    },
    Bool,
    /// A single-select over this enum type.
    Choice(Type),
    /// A multi-select over this enum type (`Vec<Choice>`).
    Multi(Type),
}

/// A recognised field type: the schema shape and whether it is `Option<_>`.
#[derive(Debug, Clone)]
pub(crate) struct FieldType {
    pub(crate) scalar: Scalar,
    pub(crate) optional: bool,
}

/// Why a type is not allowed (appended to the general message).
pub(crate) type Rejection = &'static str;

/// Classifies a field type, or says why it cannot be a form field.
pub(crate) fn classify(ty: &Type) -> Result<FieldType, Rejection> {
    let ty = unwrap_groups(ty);
    if let Some(inner) = single_arg(ty, "Option") {
        if single_arg(unwrap_groups(inner), "Option").is_some() {
            return Err("`Option<Option<_>>` cannot be told apart from `Option<_>` in a form");
        }
        return scalar(inner).map(|scalar| FieldType {
            scalar,
            optional: true,
        });
    }
    scalar(ty).map(|scalar| FieldType {
        scalar,
        optional: false,
    })
}

fn scalar(ty: &Type) -> Result<Scalar, Rejection> {
    let ty = unwrap_groups(ty);
    if let Some(item) = single_arg(ty, "Vec") {
        return match choice_candidate(unwrap_groups(item)) {
            Ok(()) => Ok(Scalar::Multi(unwrap_groups(item).clone())),
            Err(_) => {
                Err("a `Vec` is a multi-select, so its items must be an enum deriving `FormChoice`")
            }
        };
    }
    match last_segment_name(ty).as_deref() {
        Some("String") if no_args(ty) => return Ok(Scalar::String),
        Some("bool") => return Ok(Scalar::Bool),
        Some("f32") => return Ok(Scalar::Float { single: true }),
        Some("f64") => return Ok(Scalar::Float { single: false }),
        Some(name) => {
            if let Some(int) = INTS.iter().find(|i| i.name == name) {
                return Ok(Scalar::Int(*int));
            }
        }
        None => {}
    }
    choice_candidate(ty).map(|()| Scalar::Choice(ty.clone()))
}

/// A plain path that is not a known non-choice type may be a choice enum.
fn choice_candidate(ty: &Type) -> Result<(), Rejection> {
    match ty {
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last().expect("a path has a segment");
            match last.ident.to_string().as_str() {
                "String" | "bool" | "f32" | "f64" | "i8" | "i16" | "i32" | "i64" | "isize"
                | "u8" | "u16" | "u32" | "u64" | "usize" => Err("not an enum"),
                "i128" | "u128" => Err("128-bit integers do not fit a JSON Schema integer"),
                "char" | "str" => Err("use `String` (with `max_length = 1` for one character)"),
                "Value" | "Map" | "HashMap" | "BTreeMap" | "IndexMap" => {
                    Err("maps and arbitrary JSON cannot be elicited: the schema is flat")
                }
                "Option" => Err("`Option` may only wrap the whole field type"),
                "Vec" | "HashSet" | "BTreeSet" | "VecDeque" => {
                    Err("only a `Vec` of a choice enum (a multi-select) is allowed")
                }
                "Box" | "Rc" | "Arc" | "Cow" => Err("use the inner type directly"),
                "Self" => Err("a form cannot contain itself"),
                _ if !matches!(last.arguments, PathArguments::None) => {
                    Err("generic types cannot be elicited")
                }
                _ => Ok(()),
            }
        }
        Type::Reference(_) => Err("references cannot be deserialized into an owned form"),
        Type::Tuple(_) => Err("tuples cannot be elicited: give each value its own field"),
        Type::Array(_) | Type::Slice(_) => Err("use `Vec<_>` of a choice enum for a multi-select"),
        _ => Err("this kind of type cannot be elicited"),
    }
}

fn unwrap_groups(ty: &Type) -> &Type {
    match ty {
        Type::Group(group) => unwrap_groups(&group.elem),
        Type::Paren(paren) => unwrap_groups(&paren.elem),
        _ => ty,
    }
}

fn last_segment_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(path) if path.qself.is_none() => {
            path.path.segments.last().map(|s| s.ident.to_string())
        }
        _ => None,
    }
}

fn no_args(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|s| matches!(s.arguments, PathArguments::None)),
        _ => false,
    }
}

/// The `T` of `Wrapper<T>` when the last path segment is `wrapper`.
fn single_arg<'a>(ty: &'a Type, wrapper: &str) -> Option<&'a Type> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let last = path.path.segments.last()?;
    if last.ident != wrapper {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.iter().collect::<Vec<_>>().as_slice() {
        [GenericArgument::Type(inner)] => Some(inner),
        _ => None,
    }
}

/// A type as written, without the token spacing `quote` adds.
pub(crate) fn display(ty: &Type) -> String {
    let text = quote::quote!(#ty).to_string();
    text.replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" < ", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
        .replace("& ", "&")
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn kind(ty: Type) -> Result<(String, bool), Rejection> {
        classify(&ty).map(|f| {
            let name = match f.scalar {
                Scalar::String => "string".to_owned(),
                Scalar::Int(i) => i.name.to_owned(),
                Scalar::Float { single } => if single { "f32" } else { "f64" }.to_owned(),
                Scalar::Bool => "bool".to_owned(),
                Scalar::Choice(t) => format!("choice {}", display(&t)),
                Scalar::Multi(t) => format!("multi {}", display(&t)),
            };
            (name, f.optional)
        })
    }

    #[test]
    fn recognises_primitives_by_last_segment() {
        assert_eq!(
            kind(parse_quote!(String)).unwrap(),
            ("string".into(), false)
        );
        assert_eq!(
            kind(parse_quote!(std::string::String)).unwrap(),
            ("string".into(), false)
        );
        assert_eq!(kind(parse_quote!(Option<u8>)).unwrap(), ("u8".into(), true));
        assert_eq!(
            kind(parse_quote!(core::option::Option<f32>)).unwrap(),
            ("f32".into(), true)
        );
        assert_eq!(kind(parse_quote!(bool)).unwrap(), ("bool".into(), false));
    }

    #[test]
    fn other_plain_paths_are_choices() {
        assert_eq!(
            kind(parse_quote!(Env)).unwrap(),
            ("choice Env".into(), false)
        );
        assert_eq!(
            kind(parse_quote!(crate::Env)).unwrap(),
            ("choice crate::Env".into(), false)
        );
        assert_eq!(
            kind(parse_quote!(Option<Vec<Env>>)).unwrap(),
            ("multi Env".into(), true)
        );
    }

    #[test]
    fn rejects_what_a_flat_schema_cannot_hold() {
        for ty in [
            parse_quote!(Vec<String>),
            parse_quote!(Vec<u8>),
            parse_quote!(HashMap<String, String>),
            parse_quote!(serde_json::Value),
            parse_quote!((u8, u8)),
            parse_quote!(&'static str),
            parse_quote!([Env; 2]),
            parse_quote!(Option<Option<u8>>),
            parse_quote!(Box<Env>),
            parse_quote!(u128),
            parse_quote!(char),
            parse_quote!(Vec<Vec<Env>>),
            parse_quote!(Wrapper<Env>),
        ] {
            let ty: Type = ty;
            assert!(classify(&ty).is_err(), "{}", display(&ty));
        }
    }

    #[test]
    fn display_is_compact() {
        let ty: Type = parse_quote!(std::collections::HashMap<String, Vec<u8>>);
        assert_eq!(display(&ty), "std::collections::HashMap<String, Vec<u8>>");
    }
}
