//! [`RequestedForm::from_schema`](super::RequestedForm::from_schema) over rmcp's typed
//! schema, field for field what [`RequestedForm::parse`](super::RequestedForm::parse) reads
//! from its JSON.

use rmcp::model::{
    ElicitationSchema, EnumSchema, MultiSelectEnumSchema, PrimitiveSchemaDefinition,
    SingleSelectEnumSchema, StringFormat,
};
use serde_json::Value;

use super::model::{Field, FieldKind, RequestedForm};

/// `None` when a property has a shape added to rmcp after this was written.
pub(super) fn form(schema: &ElicitationSchema) -> Option<RequestedForm> {
    let required = schema.required.as_deref().unwrap_or_default();
    // The wire order, as rmcp writes it: `property_order` first (each property once),
    // then the properties it does not name.
    let mut names: Vec<&String> = Vec::with_capacity(schema.properties.len());
    for name in schema.property_order.iter().flatten() {
        if schema.properties.contains_key(name) && !names.contains(&name) {
            names.push(name);
        }
    }
    let listed = names.len();
    for name in schema.properties.keys() {
        if !names[..listed].contains(&name) {
            names.push(name);
        }
    }
    let fields = names
        .into_iter()
        .map(|name| {
            let is_required = required.iter().any(|r| r == name);
            field(name, &schema.properties[name], is_required)
        })
        .collect::<Option<_>>()?;
    Some(RequestedForm { fields })
}

/// The form `{"properties": {name: property}, "required": [name]}`, without building
/// that schema.
pub(super) fn single_field_form(
    name: &str,
    property: &PrimitiveSchemaDefinition,
) -> Option<RequestedForm> {
    Some(RequestedForm {
        fields: vec![field(name, property, true)?],
    })
}

fn field(name: &str, property: &PrimitiveSchemaDefinition, required: bool) -> Option<Field> {
    let (title, description, default, kind) = match property {
        PrimitiveSchemaDefinition::String(s) => (
            &s.title,
            &s.description,
            s.default.clone().map(Value::String),
            FieldKind::Text {
                min_length: s.min_length.map(u64::from),
                max_length: s.max_length.map(u64::from),
                format: match s.format {
                    Some(format) => Some(format_name(format)?.to_owned()),
                    None => None,
                },
            },
        ),
        PrimitiveSchemaDefinition::Integer(s) => (
            &s.title,
            &s.description,
            s.default.map(Value::from),
            FieldKind::Integer {
                minimum: s.minimum.map(|n| n as f64),
                maximum: s.maximum.map(|n| n as f64),
            },
        ),
        PrimitiveSchemaDefinition::Number(s) => (
            &s.title,
            &s.description,
            // A non-finite default is `null` in JSON, which `parse` reads as a value.
            s.default
                .map(|n| serde_json::to_value(n).unwrap_or(Value::Null)),
            FieldKind::Number {
                // Non-finite bounds are `null` in JSON: no bound.
                minimum: s.minimum.filter(|n| n.is_finite()),
                maximum: s.maximum.filter(|n| n.is_finite()),
            },
        ),
        PrimitiveSchemaDefinition::Boolean(s) => (
            &s.title,
            &s.description,
            s.default.map(Value::Bool),
            FieldKind::Boolean,
        ),
        PrimitiveSchemaDefinition::Enum(schema) => enum_field(schema)?,
        _ => return None,
    };
    Some(Field {
        name: name.to_owned(),
        label: title.as_deref().unwrap_or(name).to_owned(),
        description: description.as_deref().map(str::to_owned),
        required,
        default,
        kind,
    })
}

type Parts<'a> = (
    &'a Option<std::borrow::Cow<'static, str>>,
    &'a Option<std::borrow::Cow<'static, str>>,
    Option<Value>,
    FieldKind,
);

fn enum_field(schema: &EnumSchema) -> Option<Parts<'_>> {
    let untitled = |values: &[String]| {
        values
            .iter()
            .map(|v| (Value::String(v.clone()), v.clone()))
            .collect::<Vec<_>>()
    };
    let titled = |options: &[rmcp::model::ConstTitle]| {
        options
            .iter()
            .map(|o| (Value::String(o.const_.clone()), o.title.clone()))
            .collect::<Vec<_>>()
    };
    let strings = |values: &Option<Vec<String>>| {
        values.as_ref().map(|v| {
            Value::from(
                v.iter()
                    .map(|s| Value::String(s.clone()))
                    .collect::<Vec<_>>(),
            )
        })
    };
    Some(match schema {
        EnumSchema::Single(SingleSelectEnumSchema::Untitled(s)) => (
            &s.title,
            &s.description,
            s.default.clone().map(Value::String),
            FieldKind::Choice {
                options: untitled(&s.enum_),
            },
        ),
        EnumSchema::Single(SingleSelectEnumSchema::Titled(s)) => (
            &s.title,
            &s.description,
            s.default.clone().map(Value::String),
            FieldKind::Choice {
                options: titled(&s.one_of),
            },
        ),
        EnumSchema::Multi(MultiSelectEnumSchema::Untitled(s)) => (
            &s.title,
            &s.description,
            strings(&s.default),
            FieldKind::MultiChoice {
                options: untitled(&s.items.enum_),
                min_items: s.min_items,
                max_items: s.max_items,
            },
        ),
        EnumSchema::Multi(MultiSelectEnumSchema::Titled(s)) => (
            &s.title,
            &s.description,
            strings(&s.default),
            FieldKind::MultiChoice {
                options: titled(&s.items.any_of),
                min_items: s.min_items,
                max_items: s.max_items,
            },
        ),
        EnumSchema::Legacy(s) => {
            let names = s.enum_names.as_deref().unwrap_or_default();
            let options = s
                .enum_
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let title = names.get(i).unwrap_or(v).clone();
                    (Value::String(v.clone()), title)
                })
                .collect();
            (
                &s.title,
                &s.description,
                s.default.clone().map(Value::String),
                FieldKind::Choice { options },
            )
        }
        _ => return None,
    })
}

fn format_name(format: StringFormat) -> Option<&'static str> {
    Some(match format {
        StringFormat::Email => "email",
        StringFormat::Uri => "uri",
        StringFormat::Date => "date",
        StringFormat::DateTime => "date-time",
        _ => return None,
    })
}
