//! The schemas of every `#[derive(Form)]` type in the binary, by content key.
//!
//! A pending form question travels in `requestState` so the server can check its answer
//! and ask it again without re-running the tool. Storing its schema as JSON cost about 500
//! bytes per round for a three-field form; instead the derive registers the type's schema
//! builder here (collected at link time by `inventory`), and the state holds an 8-byte key
//! (a hash of the schema's JSON) and the message. Any instance built from the same code
//! finds the same schema under that key; an instance whose form differs has another key,
//! and the state is refused instead of resuming with a question that was never asked.

use std::collections::HashMap;
use std::sync::{LazyLock, OnceLock};

use rmcp::model::ElicitationSchema;
use sha2::{Digest, Sha256};

use super::check::{RequestedForm, UnsupportedSchema};

/// The content key of a form's schema: the first 8 bytes of SHA-256 over a domain tag and
/// the schema's JSON.
pub(crate) type FormKey = [u8; 8];

/// One derived form's schema builder, built and keyed on first use.
///
/// ```
/// # use mrtr_runtime::__private::RegisteredForm;
/// fn schema() -> rmcp::model::ElicitationSchema { mrtr_runtime::__private::object(vec![], &[]) }
/// static FORM: RegisteredForm = RegisteredForm::new(schema);
/// # let _ = &FORM;
/// ```
pub struct RegisteredForm {
    build: fn() -> ElicitationSchema,
    built: OnceLock<(FormKey, ElicitationSchema)>,
    /// What answers are checked against, read from the schema once.
    checked: OnceLock<Result<RequestedForm, UnsupportedSchema>>,
}

/// What `#[derive(Form)]` submits to the registry.
pub struct FormEntry(pub &'static RegisteredForm);

inventory::collect!(FormEntry);

impl RegisteredForm {
    /// A form whose schema `build` returns (the same schema on every call).
    pub const fn new(build: fn() -> ElicitationSchema) -> Self {
        RegisteredForm {
            build,
            built: OnceLock::new(),
            checked: OnceLock::new(),
        }
    }

    fn built(&self) -> &(FormKey, ElicitationSchema) {
        self.built.get_or_init(|| {
            let schema = (self.build)();
            (key_of(&schema), schema)
        })
    }

    /// The key the schema is stored under.
    pub(crate) fn key(&self) -> FormKey {
        self.built().0
    }

    /// The schema, built once per process.
    pub(crate) fn schema(&self) -> &ElicitationSchema {
        &self.built().1
    }

    /// Whether this process can rebuild the form from its key: the registry holds it (it
    /// does unless the platform does not support `inventory`'s link-time collection).
    /// The schema as answers are checked against it ([`RequestedForm::from_schema`]),
    /// read once per process.
    pub(crate) fn requested_form(&self) -> Result<&RequestedForm, &UnsupportedSchema> {
        self.checked
            .get_or_init(|| RequestedForm::from_schema(self.schema()))
            .as_ref()
    }

    pub(crate) fn is_rebuildable(&'static self) -> bool {
        lookup(self.key()).is_some()
    }
}

fn key_of(schema: &ElicitationSchema) -> FormKey {
    let json = serde_json::to_vec(schema).expect("an elicitation schema serializes");
    let digest = Sha256::new()
        .chain_update(b"mrtr form schema\0")
        .chain_update(&json)
        .finalize();
    let mut key = [0; 8];
    key.copy_from_slice(&digest[..8]);
    key
}

static BY_KEY: LazyLock<HashMap<FormKey, &'static RegisteredForm>> = LazyLock::new(|| {
    inventory::iter::<FormEntry>
        .into_iter()
        .map(|entry| (entry.0.key(), entry.0))
        .collect()
});

/// The registered form stored under `key`, if this binary has it.
pub(crate) fn lookup(key: FormKey) -> Option<&'static RegisteredForm> {
    BY_KEY.get(&key).copied()
}

#[cfg(test)]
mod tests {
    use rmcp::model::{BooleanSchema, PrimitiveSchemaDefinition};

    use super::*;

    fn apply() -> ElicitationSchema {
        crate::__private::object(
            vec![(
                "apply",
                PrimitiveSchemaDefinition::Boolean(BooleanSchema::new()),
            )],
            &["apply"],
        )
    }

    /// `sha256(b"mrtr form schema\0" ‖ json)[..8]`, computed outside Rust (Python's hashlib).
    const KEY_OF_APPLY: FormKey = [160, 141, 147, 208, 191, 8, 242, 49];

    static APPLY: RegisteredForm = RegisteredForm::new(apply);
    inventory::submit!(FormEntry(&APPLY));

    #[test]
    fn a_submitted_form_is_found_by_its_key() {
        let found = lookup(APPLY.key()).expect("registered");
        assert!(std::ptr::eq(found, &APPLY));
        assert_eq!(found.schema(), &apply());
        assert!(APPLY.is_rebuildable());
    }

    #[test]
    fn the_key_follows_the_content() {
        let mut other = apply();
        other.description = Some("Apply it?".into());
        assert_ne!(key_of(&other), key_of(&apply()));
        assert_eq!(key_of(&apply()), APPLY.key());
        assert!(lookup(key_of(&other)).is_none());
    }

    /// The key is part of the token format: a schema keeps its key across builds and
    /// versions of this crate (a changed key strands every pending question of that form).
    #[test]
    fn the_key_of_a_schema_is_stable() {
        assert_eq!(
            serde_json::to_string(&apply()).unwrap(),
            r#"{"type":"object","properties":{"apply":{"type":"boolean"}},"required":["apply"]}"#
        );
        assert_eq!(APPLY.key(), KEY_OF_APPLY);
    }
}
