//! The `_meta` every result carries: `serverInfo` (2026-07-28 asks it of every response)
//! and, when set, the name of the instance that ran the round.

use rmcp::model::{
    CallToolResult, CompleteResult, GetPromptResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, MetaObject,
    ReadResourceResult,
};
use serde_json::Value;
#[cfg(feature = "server-http")]
use serde_json::value::RawValue;

/// What every result's `_meta` carries: `serverInfo` (2026-07-28 asks it of every
/// response) and, when set, the instance id. Serialized once, when the server is built:
/// as values to put into a result, and as the bytes of a whole `_meta` object for a writer
/// that adds it to a result without one as it writes it (the native HTTP path: no copy of
/// the values per reply).
pub(crate) struct Stamp {
    server_info: Value,
    instance: Option<Value>,
    /// `{"io.modelcontextprotocol/serverInfo":…,"io.mrtr/instance":…}`, as JSON text.
    #[cfg(feature = "server-http")]
    written: Box<RawValue>,
}

impl Stamp {
    pub(crate) fn new(info: &Implementation, instance: Option<String>) -> Self {
        let server_info = serde_json::to_value(info).unwrap_or_default();
        let instance = instance.map(Value::String);
        #[cfg_attr(not(feature = "server-http"), allow(unused_mut))]
        let mut stamp = Stamp {
            server_info,
            instance,
            #[cfg(feature = "server-http")]
            written: RawValue::from_string("{}".to_owned()).expect("an empty object is JSON"),
        };
        #[cfg(feature = "server-http")]
        {
            let mut meta = None;
            stamp.apply(&mut meta);
            if let Some(written) = serde_json::to_string(&meta.unwrap_or_default())
                .ok()
                .and_then(|text| RawValue::from_string(text).ok())
            {
                stamp.written = written;
            }
        }
        stamp
    }

    /// The whole `_meta` object of a result that has none, as JSON text.
    #[cfg(feature = "server-http")]
    pub(crate) fn written(&self) -> &RawValue {
        &self.written
    }

    /// Ends the JSON object in `buffer[start..]`, which has no `_meta`, with this stamp as
    /// its `_meta`: before its closing brace, after a comma unless the object is empty.
    /// `false`, and nothing written, when `buffer[start..]` does not end with a brace.
    #[cfg(feature = "server-http")]
    pub(crate) fn write_into(&self, buffer: &mut Vec<u8>, start: usize) -> bool {
        if buffer.len() <= start || buffer.last() != Some(&b'}') {
            return false;
        }
        buffer.pop();
        if buffer.len() > start + 1 {
            buffer.push(b',');
        }
        buffer.extend_from_slice(br#""_meta":"#);
        buffer.extend_from_slice(self.written.get().as_bytes());
        buffer.push(b'}');
        true
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

    #[cfg(feature = "server-http")]
    #[test]
    fn the_written_stamp_is_what_a_stamp_puts_into_an_empty_meta() {
        for instance in [None, Some("node-\"a\"".to_owned())] {
            let stamp = Stamp::new(&Implementation::new("demo", "1.0.0"), instance);
            let mut meta = None;
            stamp.apply(&mut meta);
            let written: MetaObject = serde_json::from_str(stamp.written().get()).unwrap();
            assert_eq!(Some(written), meta);
        }
    }
}
