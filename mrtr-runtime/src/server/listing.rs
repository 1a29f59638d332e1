//! How machines are listed: each descriptor's listing with its input kinds in `_meta`,
//! merged page by page with the fallback handler's own listings.

use rmcp::model::{MetaObject, Tool};

use crate::machine::{Listing, MachineDescriptor};

/// The `_meta` key under which a listed tool, prompt or resource names the input kinds it
/// may ask for (e.g. `["elicitation.form", "sampling"]`).
///
/// ```
/// assert_eq!(mrtr_runtime::server::INPUT_KINDS_META_KEY, "io.github.mrtr/inputKinds");
/// ```
pub const INPUT_KINDS_META_KEY: &str = "io.github.mrtr/inputKinds";

/// Adds the machine's input kinds to its listing's `_meta`.
pub(super) fn with_input_kinds(
    meta: Option<MetaObject>,
    machine_kinds: &[crate::machine::InputKind],
) -> Option<MetaObject> {
    if machine_kinds.is_empty() {
        return meta;
    }
    let mut meta = meta.unwrap_or_default();
    let kinds: Vec<&str> = machine_kinds.iter().map(|k| k.as_str()).collect();
    meta.0
        .insert(INPUT_KINDS_META_KEY.into(), serde_json::json!(kinds));
    Some(meta)
}

/// What a listing entry needs so one function can list tools, prompts and resources.
pub(super) trait Listed: Sized {
    fn from_listing(listing: &Listing) -> Option<Self>;
    /// The name requests address it by (tool/prompt name, resource URI).
    fn key(&self) -> &str;
}

impl Listed for Tool {
    fn from_listing(listing: &Listing) -> Option<Self> {
        match listing {
            Listing::Tool(tool) => Some(tool.clone()),
            _ => None,
        }
    }
    fn key(&self) -> &str {
        &self.name
    }
}

impl Listed for rmcp::model::Prompt {
    fn from_listing(listing: &Listing) -> Option<Self> {
        match listing {
            Listing::Prompt(prompt) => Some(prompt.clone()),
            _ => None,
        }
    }
    fn key(&self) -> &str {
        &self.name
    }
}

impl Listed for rmcp::model::Resource {
    fn from_listing(listing: &Listing) -> Option<Self> {
        match listing {
            Listing::Resource(resource) => Some(resource.clone()),
            _ => None,
        }
    }
    fn key(&self) -> &str {
        &self.uri
    }
}

/// How a machine is listed: its descriptor's listing with its input kinds in `_meta`.
pub(super) fn listing_with_input_kinds(descriptor: &MachineDescriptor) -> Listing {
    let mut listing = descriptor.listing.clone();
    let meta = match &mut listing {
        Listing::Tool(tool) => &mut tool.meta,
        Listing::Prompt(prompt) => &mut prompt.meta,
        Listing::Resource(resource) => &mut resource.meta,
    };
    *meta = with_input_kinds(meta.take(), &descriptor.input_kinds);
    if !descriptor.scopes.is_empty() {
        let listed = meta.get_or_insert_with(Default::default);
        listed.0.insert(
            super::REQUIRED_SCOPES_META_KEY.into(),
            serde_json::json!(descriptor.scopes),
        );
    }
    listing
}
