//! The `_meta` every result carries: `serverInfo` (2026-07-28 asks it of every response)
//! and, when set, the name of the instance that ran the round.

use rmcp::model::{
    CallToolResult, CompleteResult, GetPromptResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, MetaObject,
    ReadResourceResult,
};
use serde_json::Value;

/// What every result's `_meta` carries: `serverInfo` (2026-07-28 asks it of every
/// response) and, when set, the instance id. Serialized once, when the server is built.
pub(crate) struct Stamp {
    server_info: Value,
    instance: Option<Value>,
}

impl Stamp {
    pub(crate) fn new(info: &Implementation, instance: Option<String>) -> Self {
        Stamp {
            server_info: serde_json::to_value(info).unwrap_or_default(),
            instance: instance.map(Value::String),
        }
    }

    /// Stamps `meta`, keeping what a result already says under either key.
    pub(crate) fn apply(&self, meta: &mut Option<MetaObject>) {
        let meta = &mut meta.get_or_insert_default().0;
        if !self.server_info.is_null() {
            meta.entry(SERVER_INFO_META_KEY)
                .or_insert_with(|| self.server_info.clone());
        }
        if let Some(instance) = &self.instance {
            meta.entry(INSTANCE_META_KEY)
                .or_insert_with(|| instance.clone());
        }
    }
}

const SERVER_INFO_META_KEY: &str = "io.modelcontextprotocol/serverInfo";
const INSTANCE_META_KEY: &str = "io.mrtr/instance";

/// A result whose `_meta` carries `serverInfo`.
pub(crate) trait WithServerInfo {
    fn meta_mut(&mut self) -> Option<&mut Option<MetaObject>>;
}

impl WithServerInfo for CallToolResult {
    fn meta_mut(&mut self) -> Option<&mut Option<MetaObject>> {
        Some(&mut self.meta)
    }
}

impl WithServerInfo for GetPromptResult {
    fn meta_mut(&mut self) -> Option<&mut Option<MetaObject>> {
        Some(&mut self.meta)
    }
}

impl WithServerInfo for ReadResourceResult {
    fn meta_mut(&mut self) -> Option<&mut Option<MetaObject>> {
        Some(&mut self.meta)
    }
}

macro_rules! with_server_info_meta {
    ($($result:ty),*) => {$(
        impl WithServerInfo for $result {
            fn meta_mut(&mut self) -> Option<&mut Option<MetaObject>> {
                Some(&mut self.meta)
            }
        }
    )*};
}

with_server_info_meta!(
    ListToolsResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    CompleteResult
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_keeps_what_a_result_already_says() {
        let stamp = Stamp::new(&Implementation::new("demo", "1.0.0"), Some("node-a".into()));
        let mut meta = None;
        stamp.apply(&mut meta);
        let meta = meta.unwrap();
        assert_eq!(meta.0[SERVER_INFO_META_KEY]["name"], "demo");
        assert_eq!(meta.0[INSTANCE_META_KEY], "node-a");
        let mut own = Some(MetaObject::default());
        own.as_mut()
            .unwrap()
            .0
            .insert(INSTANCE_META_KEY.into(), "node-b".into());
        stamp.apply(&mut own);
        assert_eq!(own.unwrap().0[INSTANCE_META_KEY], "node-b");
    }
}
