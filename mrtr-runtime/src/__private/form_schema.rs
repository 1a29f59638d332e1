//! Helpers for `#[derive(Form)]`'s generated code.

use std::collections::BTreeMap;

use rmcp::model::{EnumSchema, MultiSelectEnumSchema, SingleSelectEnumSchema};

pub use crate::form::{ChoiceOption, Form, FormChoice};
pub use rmcp::model::{
    BooleanSchema, ElicitationSchema, IntegerSchema, NumberSchema, PrimitiveSchemaDefinition,
    StringFormat, StringSchema,
};
pub use serde::de::DeserializeOwned;

/// Presentation keywords shared by every property.
#[derive(Debug, Clone, Copy, Default)]
pub struct Labels {
    /// `title`
    pub title: Option<&'static str>,
    /// `description`
    pub description: Option<&'static str>,
}

fn option_schema(
    options: &[ChoiceOption],
    labels: Labels,
) -> rmcp::model::EnumSchemaBuilder<rmcp::model::SingleSelect> {
    let values = options.iter().map(|o| o.value.to_owned()).collect();
    let mut builder = EnumSchema::builder(values);
    if options.iter().any(|o| o.title.is_some()) {
        let titles = options
            .iter()
            .map(|o| o.title.unwrap_or(o.value).to_owned())
            .collect();
        builder = builder
            .enum_titles(titles)
            .expect("one title per option by construction");
    }
    if let Some(title) = labels.title {
        builder = builder.title(title);
    }
    if let Some(description) = labels.description {
        builder = builder.description(description);
    }
    builder
}

/// A single-select property: `enum`, or `oneOf` when any option has a title.
pub fn single_select(
    options: &[ChoiceOption],
    labels: Labels,
    default: Option<&'static str>,
) -> PrimitiveSchemaDefinition {
    let mut schema = option_schema(options, labels).build();
    if let EnumSchema::Single(single) = &mut schema {
        match single {
            SingleSelectEnumSchema::Untitled(s) => s.default = default.map(str::to_owned),
            SingleSelectEnumSchema::Titled(s) => s.default = default.map(str::to_owned),
            _ => {}
        }
    }
    PrimitiveSchemaDefinition::Enum(schema)
}

/// A multi-select property: `items.enum`, or `items.anyOf` when any option has a title.
pub fn multi_select(
    options: &[ChoiceOption],
    labels: Labels,
    min_items: Option<u64>,
    max_items: Option<u64>,
    default: Option<Vec<&'static str>>,
) -> PrimitiveSchemaDefinition {
    let mut schema = option_schema(options, labels).multiselect().build();
    let default = default.map(|d| d.into_iter().map(str::to_owned).collect::<Vec<_>>());
    // Set directly: the builder drops an empty default and re-validates what the macro checked.
    if let EnumSchema::Multi(multi) = &mut schema {
        match multi {
            MultiSelectEnumSchema::Untitled(s) => {
                (s.min_items, s.max_items, s.default) = (min_items, max_items, default)
            }
            MultiSelectEnumSchema::Titled(s) => {
                (s.min_items, s.max_items, s.default) = (min_items, max_items, default)
            }
            _ => {}
        }
    }
    PrimitiveSchemaDefinition::Enum(schema)
}

/// The `requestedSchema` object, properties in declaration order.
pub fn object(
    properties: Vec<(&'static str, PrimitiveSchemaDefinition)>,
    required: &[&'static str],
) -> ElicitationSchema {
    let order = properties
        .iter()
        .map(|(name, _)| (*name).to_owned())
        .collect();
    let properties: BTreeMap<String, PrimitiveSchemaDefinition> = properties
        .into_iter()
        .map(|(name, schema)| (name.to_owned(), schema))
        .collect();
    let mut schema = ElicitationSchema::new(properties);
    schema.property_order = Some(order);
    schema.required =
        (!required.is_empty()).then(|| required.iter().map(|name| (*name).to_owned()).collect());
    schema
}
