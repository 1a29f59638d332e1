//! The schema model of a form: what `#[derive(Form)]` learned from the struct, checked, before
//! any code is generated.

use syn::{
    Data, DeriveInput, Expr, ExprLit, ExprUnary, Field, Fields, FieldsNamed, Ident, Lit, Type, UnOp,
};

use super::types::{FieldType, IntType, Scalar, classify, display};
use crate::internals::attr::{FormArg, SerdeAttrs, container_form_args, form_args, serde_attrs};
use crate::internals::doc::doc_paragraphs;
use crate::internals::errors::Errors;

/// A whole form: the struct and its properties in declaration order.
pub(crate) struct FormModel {
    pub(crate) ident: Ident,
    /// Rejected when not empty, but kept so the emitted impl names the type correctly.
    pub(crate) generics: syn::Generics,
    pub(crate) properties: Vec<Property>,
    /// `#[form(crate = "...")]`: where the `mrtr` facade is, when renamed or re-exported.
    pub(crate) krate: Option<syn::Path>,
}

/// One property of the `requestedSchema`.
pub(crate) struct Property {
    /// The name serde reads (after `rename`/`rename_all`).
    pub(crate) wire_name: String,
    /// The Rust field, for messages.
    pub(crate) field: Ident,
    pub(crate) required: bool,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) kind: Kind,
}

/// The allowed string formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Email,
    Uri,
    Date,
    DateTime,
}

/// A property's schema, with its keywords.
pub(crate) enum Kind {
    String {
        format: Option<Format>,
        min_length: Option<u32>,
        max_length: Option<u32>,
        default: Option<String>,
    },
    Integer {
        minimum: Option<i64>,
        maximum: Option<i64>,
        default: Option<i64>,
    },
    Number {
        minimum: Option<f64>,
        maximum: Option<f64>,
        default: Option<f64>,
    },
    Boolean {
        default: Option<bool>,
    },
    Single {
        ty: Type,
        default: Option<Expr>,
    },
    Multi {
        ty: Type,
        min_items: Option<u64>,
        max_items: Option<u64>,
        default: Option<Expr>,
    },
}

const FIELD_KEYS: &str = "`title`, `description`, `default`, `format`, `min_length`, \
    `max_length`, `minimum`, `maximum`, `min_items`, `max_items`";

pub(crate) const ALLOWED_TYPES: &str = "a form field must be `String`, an integer (`i8`..`i64`, \
    `u8`..`u64`, `isize`, `usize`), `f32`, `f64`, `bool`, an enum deriving `mrtr::FormChoice`, \
    a `Vec` of such an enum (multi-select), or an `Option` of any of these";

/// Reads and checks a `#[derive(Form)]` input. Every problem is reported; the model is
/// returned alongside so the expansion can still emit an impl.
pub(crate) fn form_model(input: &DeriveInput) -> (FormModel, Option<syn::Error>) {
    let mut errors = Errors::default();
    let mut model = FormModel {
        ident: input.ident.clone(),
        generics: input.generics.clone(),
        properties: Vec::new(),
        krate: None,
    };
    let fields = named_fields(input, &mut errors);
    model.krate = check_container(input, &mut errors);
    let container = serde_attrs(&input.attrs);
    for field in fields.into_iter().flat_map(|f| &f.named) {
        if let Some(property) = field_property(field, &container, &mut errors) {
            model.properties.push(property);
        }
    }
    check_duplicates(&model.properties, &mut errors);
    (model, errors.into_error())
}

/// The struct's named fields; `None` (with an error) for any other shape of input.
fn named_fields<'a>(input: &'a DeriveInput, errors: &mut Errors) -> Option<&'a FieldsNamed> {
    let name = &input.ident;
    match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => Some(named),
            Fields::Unnamed(fields) => {
                errors.spanned(
                    fields,
                    format_args!(
                        "`#[derive(Form)]` needs a struct with named fields, but `{name}` is a \
                         tuple struct: name each field, since the field names become the form's \
                         property names"
                    ),
                );
                None
            }
            Fields::Unit => {
                errors.at(
                    name.span(),
                    format_args!(
                        "`#[derive(Form)]` needs a struct with named fields, but `{name}` is a \
                         unit struct: add `{{}}` with the fields to ask for (an empty form is \
                         `struct {name} {{}}`)"
                    ),
                );
                None
            }
        },
        Data::Enum(data) => {
            errors.at(
                data.enum_token.span,
                format_args!(
                    "`#[derive(Form)]` needs a struct with named fields, but `{name}` is an enum: \
                     to offer a choice, derive `mrtr::FormChoice` on the enum and use it as a \
                     field of a form"
                ),
            );
            None
        }
        Data::Union(data) => {
            errors.at(
                data.union_token.span,
                format_args!(
                    "`#[derive(Form)]` needs a struct with named fields, but `{name}` is a union"
                ),
            );
            None
        }
    }
}

/// Checks the struct's generics and container `form` attributes; returns its `crate` path.
fn check_container(input: &DeriveInput, errors: &mut Errors) -> Option<syn::Path> {
    if !input.generics.params.is_empty() {
        errors.spanned(
            &input.generics,
            "`#[derive(Form)]` does not support generic parameters: a form's schema is fixed \
             at compile time",
        );
    }
    let (krate, container_args) = container_form_args(&input.attrs, errors);
    for arg in container_args {
        errors.at(
            arg.key.span(),
            format_args!(
                "unknown `form` attribute `{}` on a struct: `#[form(...)]` goes on fields, with \
                 keys {FIELD_KEYS}; the struct itself takes only `crate = \"...\"`",
                arg.key
            ),
        );
    }
    krate
}

/// One field as a property; `None` when it is skipped or cannot be a property (with an error).
fn field_property(field: &Field, container: &SerdeAttrs, errors: &mut Errors) -> Option<Property> {
    let ident = field.ident.clone().expect("named field");
    let serde = serde_attrs(&field.attrs);
    if serde.skip {
        return None;
    }
    if let Some(key) = &serde.unsupported {
        errors.at(
            key.span(),
            format_args!(
                "field `{ident}`: `#[serde({key})]` is not supported in a form, whose \
                 schema is a flat object of primitives"
            ),
        );
        return None;
    }
    let field_type = match classify(&field.ty) {
        Ok(field_type) => field_type,
        Err(reason) => {
            errors.spanned(
                &field.ty,
                format_args!(
                    "field `{ident}` has type `{}`, which an elicitation form cannot hold \
                     ({reason}); {ALLOWED_TYPES}",
                    display(&field.ty)
                ),
            );
            form_args(&field.attrs, errors);
            return None;
        }
    };
    let unraw = ident.to_string().trim_start_matches("r#").to_owned();
    let wire_name = serde
        .rename
        .clone()
        .or_else(|| container.rename_all.map(|rule| rule.field(&unraw)))
        .unwrap_or(unraw);
    let args = form_args(&field.attrs, errors);
    Some(property(
        &ident,
        wire_name,
        &field_type,
        !(field_type.optional || serde.default || container.default),
        doc_paragraphs(&field.attrs),
        args,
        errors,
    ))
}

/// Reports each property whose wire name repeats an earlier one.
fn check_duplicates(properties: &[Property], errors: &mut Errors) {
    for (i, property) in properties.iter().enumerate() {
        if properties[..i]
            .iter()
            .any(|p| p.wire_name == property.wire_name)
        {
            errors.at(
                property.field.span(),
                format_args!(
                    "field `{}` has the same property name `{}` as an earlier field",
                    property.field, property.wire_name
                ),
            );
        }
    }
}

/// What a type is called in messages.
fn type_label(scalar: &Scalar) -> String {
    match scalar {
        Scalar::String => "`String`".into(),
        Scalar::Int(int) => format!("`{}`", int.name),
        Scalar::Float { single: true } => "`f32`".into(),
        Scalar::Float { single: false } => "`f64`".into(),
        Scalar::Bool => "`bool`".into(),
        Scalar::Choice(ty) => format!("choice `{}`", display(ty)),
        Scalar::Multi(ty) => format!("multi-select `Vec<{}>`", display(ty)),
    }
}

/// Which field types a key applies to.
fn applies_to(key: &str) -> Option<&'static str> {
    Some(match key {
        "title" | "description" | "default" => "every field",
        "format" | "min_length" | "max_length" => "`String` fields",
        "minimum" | "maximum" => "integer and float fields",
        "min_items" | "max_items" => "multi-select (`Vec<Choice>`) fields",
        _ => return None,
    })
}

fn property(
    field: &Ident,
    wire_name: String,
    field_type: &FieldType,
    required: bool,
    doc: Option<String>,
    args: Vec<FormArg>,
    errors: &mut Errors,
) -> Property {
    let mut title = None;
    let mut description = None;
    let mut raw = Keywords::default();
    for arg in args {
        let key = arg.key.to_string();
        let Some(applies) = applies_to(&key) else {
            errors.at(
                arg.key.span(),
                format_args!("unknown `form` attribute `{key}`; expected one of {FIELD_KEYS}"),
            );
            continue;
        };
        let fits = matches!(
            (key.as_str(), &field_type.scalar),
            ("title" | "description" | "default", _)
                | ("format" | "min_length" | "max_length", Scalar::String)
                | ("minimum" | "maximum", Scalar::Int(_) | Scalar::Float { .. })
                | ("min_items" | "max_items", Scalar::Multi(_))
        );
        if !fits {
            errors.at(
                arg.key.span(),
                format_args!(
                    "`{key}` does not apply to field `{field}` of type {}; it applies to {applies}",
                    type_label(&field_type.scalar)
                ),
            );
            continue;
        }
        match key.as_str() {
            "title" => title = string_value(&arg, errors),
            "description" => description = string_value(&arg, errors),
            "format" => raw.format = Some(arg),
            "min_length" => raw.min_length = Some(arg),
            "max_length" => raw.max_length = Some(arg),
            "minimum" => raw.minimum = Some(arg),
            "maximum" => raw.maximum = Some(arg),
            "min_items" => raw.min_items = Some(arg),
            "max_items" => raw.max_items = Some(arg),
            _ => raw.default = Some(arg),
        }
    }
    // The doc comment's first paragraph labels the field and the rest explains it, unless
    // `#[form(title = ..)]` names the label: then the whole doc comment explains it.
    // `#[form(description = ..)]` replaces what the doc comment would explain.
    let (title, description) = match title {
        Some(title) => (Some(title), description.or(doc)),
        None => {
            let (doc_title, doc_rest) = split_summary(doc);
            (doc_title, description.or(doc_rest))
        }
    };
    Property {
        wire_name,
        field: field.clone(),
        required,
        title,
        description,
        kind: kind(field_type, raw, errors),
    }
}

/// A reflowed doc comment split into its first paragraph (the summary) and the rest.
fn split_summary(doc: Option<String>) -> (Option<String>, Option<String>) {
    match doc {
        None => (None, None),
        Some(text) => match text.split_once("\n\n") {
            Some((summary, rest)) => (Some(summary.to_owned()), Some(rest.to_owned())),
            None => (Some(text), None),
        },
    }
}

/// Type-specific keys, checked once the type is known.
#[derive(Default)]
struct Keywords {
    format: Option<FormArg>,
    min_length: Option<FormArg>,
    max_length: Option<FormArg>,
    minimum: Option<FormArg>,
    maximum: Option<FormArg>,
    min_items: Option<FormArg>,
    max_items: Option<FormArg>,
    default: Option<FormArg>,
}

/// The checked kind of a property, from its type and its type-specific keys.
fn kind(field_type: &FieldType, raw: Keywords, errors: &mut Errors) -> Kind {
    // An inverted range is reported on its upper bound.
    let upper = [&raw.max_length, &raw.maximum, &raw.max_items]
        .into_iter()
        .flatten()
        .next()
        .map(|arg| arg.value.clone());
    match &field_type.scalar {
        Scalar::String => string_kind(raw, upper, errors),
        Scalar::Int(int) => integer_kind(*int, raw, upper, errors),
        Scalar::Float { single } => float_kind(*single, raw, upper, errors),
        Scalar::Bool => Kind::Boolean {
            default: raw.default.and_then(|arg| match &arg.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Bool(b), ..
                }) => Some(b.value),
                other => {
                    errors.spanned(
                        other,
                        "the default of a `bool` field must be `true` or `false`",
                    );
                    None
                }
            }),
        },
        Scalar::Choice(ty) => Kind::Single {
            ty: ty.clone(),
            default: raw
                .default
                .and_then(|arg| choice_default(arg, ty, false, errors)),
        },
        Scalar::Multi(ty) => multi_kind(ty, raw, upper, errors),
    }
}

/// A `String` field's kind: format, length range and default.
fn string_kind(raw: Keywords, upper: Option<Expr>, errors: &mut Errors) -> Kind {
    let format = raw.format.and_then(|arg| string_format(&arg, errors));
    let min_length = raw.min_length.and_then(|a| count::<u32>(&a, errors));
    let max_length = raw.max_length.and_then(|a| count::<u32>(&a, errors));
    ordered(
        ("min_length", min_length),
        ("max_length", max_length),
        upper,
        errors,
    );
    let default = raw.default.and_then(|arg| {
        let Some(text) = literal_str(&arg.value) else {
            errors.spanned(
                &arg.value,
                "the default of a `String` field must be a string literal, e.g. \
                 `default = \"text\"`",
            );
            return None;
        };
        let length = text.chars().count() as u64;
        if min_length.is_some_and(|min| length < min.into())
            || max_length.is_some_and(|max| length > max.into())
        {
            errors.spanned(
                &arg.value,
                "the default is outside `min_length`..`max_length`",
            );
        }
        Some(text)
    });
    Kind::String {
        format,
        min_length,
        max_length,
        default,
    }
}

/// The value of a `format = "..."` key; `None` (with an error if unknown).
fn string_format(arg: &FormArg, errors: &mut Errors) -> Option<Format> {
    let text = string_value(arg, errors)?;
    let format = match text.as_str() {
        "email" => Format::Email,
        "uri" => Format::Uri,
        "date" => Format::Date,
        "date-time" => Format::DateTime,
        _ => {
            errors.spanned(
                &arg.value,
                format_args!(
                    "unknown format `{text}`; expected one of `email`, `uri`, \
                     `date`, `date-time`"
                ),
            );
            return None;
        }
    };
    Some(format)
}

/// An integer field's kind: range (unsigned types start at 0) and default.
fn integer_kind(int: IntType, raw: Keywords, upper: Option<Expr>, errors: &mut Errors) -> Kind {
    let bound =
        |arg: Option<FormArg>, errors: &mut Errors| arg.and_then(|a| integer_in(&a, int, errors));
    let mut minimum = bound(raw.minimum, errors);
    let maximum = bound(raw.maximum, errors);
    if minimum.is_none() && int.unsigned() {
        minimum = Some(0);
    }
    ordered(("minimum", minimum), ("maximum", maximum), upper, errors);
    let default = raw.default.and_then(|arg| {
        let value = integer_in(&arg, int, errors)?;
        within_bounds(
            &arg,
            value as f64,
            minimum.map(|m| m as f64),
            maximum.map(|m| m as f64),
            errors,
        );
        Some(value)
    });
    Kind::Integer {
        minimum,
        maximum,
        default,
    }
}

/// A float field's kind: range and default.
fn float_kind(single: bool, raw: Keywords, upper: Option<Expr>, errors: &mut Errors) -> Kind {
    let bound = |arg: Option<FormArg>, errors: &mut Errors| {
        arg.and_then(|a| float_value(&a, single, errors))
    };
    let minimum = bound(raw.minimum, errors);
    let maximum = bound(raw.maximum, errors);
    ordered(("minimum", minimum), ("maximum", maximum), upper, errors);
    let default = raw.default.and_then(|arg| {
        let value = float_value(&arg, single, errors)?;
        within_bounds(&arg, value, minimum, maximum, errors);
        Some(value)
    });
    Kind::Number {
        minimum,
        maximum,
        default,
    }
}

/// A multi-select field's kind: item-count range and default.
fn multi_kind(ty: &Type, raw: Keywords, upper: Option<Expr>, errors: &mut Errors) -> Kind {
    let min_items = raw.min_items.and_then(|a| count::<u64>(&a, errors));
    let max_items = raw.max_items.and_then(|a| count::<u64>(&a, errors));
    ordered(
        ("min_items", min_items),
        ("max_items", max_items),
        upper,
        errors,
    );
    let default = raw.default.and_then(|arg| {
        if let Expr::Array(array) = &arg.value {
            let length = array.elems.len() as u64;
            if min_items.is_some_and(|min| length < min)
                || max_items.is_some_and(|max| length > max)
            {
                errors.spanned(
                    &arg.value,
                    "the default has fewer than `min_items` or more than `max_items` \
                     options",
                );
            }
        }
        choice_default(arg, ty, true, errors)
    });
    Kind::Multi {
        ty: ty.clone(),
        min_items,
        max_items,
        default,
    }
}

/// A choice default is a Rust value of the enum (type-checked by rustc), not its wire string.
fn choice_default(arg: FormArg, ty: &Type, multi: bool, errors: &mut Errors) -> Option<Expr> {
    let has_string = match &arg.value {
        Expr::Array(array) => array.elems.iter().any(|e| literal_str(e).is_some()),
        other => literal_str(other).is_some(),
    };
    if has_string {
        let ty = display(ty);
        let example = if multi {
            format!("default = [{ty}::First, {ty}::Second]")
        } else {
            format!("default = {ty}::First")
        };
        errors.spanned(
            &arg.value,
            format_args!(
                "the default of a choice field is written with the enum's variants, \
                 e.g. `{example}`"
            ),
        );
        return None;
    }
    Some(arg.value)
}

fn literal_str(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(text),
            ..
        }) => Some(text.value()),
        _ => None,
    }
}

fn string_value(arg: &FormArg, errors: &mut Errors) -> Option<String> {
    let text = literal_str(&arg.value);
    if text.is_none() {
        errors.spanned(
            &arg.value,
            format_args!(
                "`{}` expects a string literal, e.g. `{} = \"...\"`",
                arg.key, arg.key
            ),
        );
    }
    text
}

/// A numeric literal, possibly negated: the integer if it is one, and its value as `f64`.
fn number(expr: &Expr) -> Option<(Option<i128>, f64)> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(int), ..
        }) => {
            let value = int.base10_parse::<i128>().ok()?;
            Some((Some(value), value as f64))
        }
        Expr::Lit(ExprLit {
            lit: Lit::Float(float),
            ..
        }) => Some((None, float.base10_parse::<f64>().ok()?)),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => number(expr).map(|(int, float)| (int.map(|i| -i), -float)),
        Expr::Group(group) => number(&group.expr),
        _ => None,
    }
}

fn count<T: TryFrom<i128> + Into<u64>>(arg: &FormArg, errors: &mut Errors) -> Option<T> {
    match number(&arg.value) {
        Some((Some(value), _)) => match T::try_from(value) {
            Ok(value) => Some(value),
            Err(_) => {
                errors.spanned(
                    &arg.value,
                    format_args!(
                        "`{}` must be a non-negative count that fits the schema",
                        arg.key
                    ),
                );
                None
            }
        },
        _ => {
            errors.spanned(
                &arg.value,
                format_args!(
                    "`{}` expects an integer literal, e.g. `{} = 10`",
                    arg.key, arg.key
                ),
            );
            None
        }
    }
}

fn integer_in(arg: &FormArg, int: IntType, errors: &mut Errors) -> Option<i64> {
    match number(&arg.value) {
        Some((Some(value), _)) if (int.min..=int.max).contains(&value) => {
            Some(i64::try_from(value).expect("range is within i64"))
        }
        Some((Some(value), _)) => {
            errors.spanned(
                &arg.value,
                format_args!(
                    "`{} = {value}` is out of range for `{}` ({}..={})",
                    arg.key, int.name, int.min, int.max
                ),
            );
            None
        }
        _ => {
            errors.spanned(
                &arg.value,
                format_args!(
                    "`{}` of a field of type `{}` expects an integer literal, e.g. `{} = 10`",
                    arg.key, int.name, arg.key
                ),
            );
            None
        }
    }
}

fn float_value(arg: &FormArg, single: bool, errors: &mut Errors) -> Option<f64> {
    let Some((_, value)) = number(&arg.value) else {
        errors.spanned(
            &arg.value,
            format_args!(
                "`{}` of a float field expects a number literal, e.g. `{} = 0.5`",
                arg.key, arg.key
            ),
        );
        return None;
    };
    let limit = if single { f32::MAX as f64 } else { f64::MAX };
    if !value.is_finite() || value.abs() > limit {
        errors.spanned(
            &arg.value,
            format_args!(
                "`{} = {value}` is out of range for the field's type",
                arg.key
            ),
        );
        return None;
    }
    Some(value)
}

fn ordered<T: PartialOrd + std::fmt::Display>(
    (low_key, low): (&str, Option<T>),
    (high_key, high): (&str, Option<T>),
    upper: Option<Expr>,
    errors: &mut Errors,
) {
    if let (Some(low), Some(high), Some(upper)) = (low, high, upper)
        && low > high
    {
        errors.spanned(
            upper,
            format_args!("`{low_key}` ({low}) is greater than `{high_key}` ({high})"),
        );
    }
}

fn within_bounds(
    arg: &FormArg,
    value: f64,
    minimum: Option<f64>,
    maximum: Option<f64>,
    errors: &mut Errors,
) {
    if minimum.is_some_and(|min| value < min) || maximum.is_some_and(|max| value > max) {
        errors.spanned(&arg.value, "the default is outside `minimum`..`maximum`");
    }
}
