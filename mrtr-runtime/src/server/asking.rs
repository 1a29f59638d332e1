//! The reply that asks for input (`resultType: "input_required"`), written in one pass.
//!
//! rmcp writes each input request's params by first turning them into a
//! [`serde_json::Value`] tree (to merge a `_meta` it may carry) and each form's schema
//! through a clone of the whole schema; a round's reply is mostly that. Here a form
//! elicitation that carries no `_meta` anywhere — what machines ask — is written straight
//! from its fields, in the order and shape rmcp writes it, and every other request (a
//! sampling or roots request, a URL elicitation, anything with `_meta`) by rmcp's own
//! code. The bytes are the same either way (tested below against rmcp's writer).

use rmcp::model::{
    ElicitRequestParams, ElicitationCreateRequestMethod, ElicitationSchema, InputRequest,
    InputRequiredResult, MetaObject, RequestId, RequestMetaObject,
};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;

/// The whole JSON-RPC response carrying `result`, as rmcp writes a
/// `JsonRpcMessage::Response` holding `ServerResult::InputRequiredResult`.
pub(crate) struct AskingReply<'a> {
    pub(crate) id: &'a RequestId,
    pub(crate) result: &'a InputRequiredResult,
    /// Written as the result's `_meta` when it has none.
    pub(crate) stamp: Option<&'a RawValue>,
}

impl Serialize for AskingReply<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", self.id)?;
        map.serialize_entry("result", &Asking(self.result, self.stamp))?;
        map.end()
    }
}

/// `InputRequiredResult`, field for field as its derive writes it, and the stamp as its
/// `_meta` when it has none.
pub(crate) struct Asking<'a>(
    pub(crate) &'a InputRequiredResult,
    pub(crate) Option<&'a RawValue>,
);

impl Serialize for Asking<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let result = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("resultType", &result.result_type)?;
        if let Some(requests) = &result.input_requests {
            map.serialize_entry("inputRequests", &Requests(requests))?;
        }
        if let Some(state) = &result.request_state {
            map.serialize_entry("requestState", state)?;
        }
        match (&result.meta, self.1) {
            (Some(meta), _) => map.serialize_entry("_meta", meta)?,
            (None, Some(stamp)) => map.serialize_entry("_meta", stamp)?,
            (None, None) => {}
        }
        map.end()
    }
}

struct Requests<'a>(&'a std::collections::BTreeMap<String, InputRequest>);

impl Serialize for Requests<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, request) in self.0 {
            match plain_form(request) {
                Some((method, message, schema)) => map.serialize_entry(
                    key,
                    &Form {
                        method,
                        message,
                        schema,
                    },
                )?,
                None => map.serialize_entry(key, request)?,
            }
        }
        map.end()
    }
}

/// A form elicitation without `_meta` (in its params or its extensions): its method, message
/// and schema.
fn plain_form(
    request: &InputRequest,
) -> Option<(&ElicitationCreateRequestMethod, &str, &ElicitationSchema)> {
    let InputRequest::Elicitation(request) = request else {
        return None;
    };
    if request.extensions.get::<RequestMetaObject>().is_some()
        || request.extensions.get::<MetaObject>().is_some()
    {
        return None;
    }
    match &request.params {
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema,
        } => Some((&request.method, message, requested_schema)),
        _ => None,
    }
}

/// `{"method": "elicitation/create", "params": {"mode": "form", "message", "requestedSchema"}}`.
struct Form<'a> {
    method: &'a ElicitationCreateRequestMethod,
    message: &'a str,
    schema: &'a ElicitationSchema,
}

impl Serialize for Form<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("method", self.method)?;
        map.serialize_entry(
            "params",
            &FormParams {
                message: self.message,
                schema: self.schema,
            },
        )?;
        map.end()
    }
}

struct FormParams<'a> {
    message: &'a str,
    schema: &'a ElicitationSchema,
}

impl Serialize for FormParams<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("mode", "form")?;
        map.serialize_entry("message", self.message)?;
        if self
            .schema
            .property_order
            .as_ref()
            .is_some_and(|order| order.len() > SHORT_ORDER)
        {
            map.serialize_entry("requestedSchema", self.schema)?;
        } else {
            map.serialize_entry("requestedSchema", &Schema(self.schema))?;
        }
        map.end()
    }
}

/// An `ElicitationSchema` as its wire form writes it, without cloning it first.
struct Schema<'a>(&'a ElicitationSchema);

impl Serialize for Schema<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let schema = self.0;
        let mut map = serializer.serialize_map(None)?;
        if let Some(dialect) = &schema.schema {
            map.serialize_entry("$schema", dialect)?;
        }
        map.serialize_entry("type", &schema.type_)?;
        if let Some(title) = &schema.title {
            map.serialize_entry("title", title)?;
        }
        map.serialize_entry("properties", &Properties(schema))?;
        if let Some(required) = &schema.required {
            map.serialize_entry("required", required)?;
        }
        if let Some(description) = &schema.description {
            map.serialize_entry("description", description)?;
        }
        map.end()
    }
}

/// The properties in wire order: those `property_order` names first (each once, skipping
/// names with no property), then the rest in the map's (sorted) order.
struct Properties<'a>(&'a ElicitationSchema);

/// Longer orders are written by rmcp's code: the checks below are linear in the order.
const SHORT_ORDER: usize = 32;

impl Serialize for Properties<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let schema = self.0;
        let order = schema.property_order.as_deref().unwrap_or_default();
        let mut map = serializer.serialize_map(Some(schema.properties.len()))?;
        for (at, name) in order.iter().enumerate() {
            if order[..at].contains(name) {
                continue;
            }
            if let Some(definition) = schema.properties.get(name) {
                map.serialize_entry(name, definition)?;
            }
        }
        for (name, definition) in &schema.properties {
            if !order.contains(name) {
                map.serialize_entry(name, definition)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rmcp::model::{JsonRpcMessage, ServerJsonRpcMessage, ServerResult};
    use serde_json::json;

    use super::*;
    use crate::machine::input;

    /// The bytes rmcp writes for the same reply.
    fn rmcp_bytes(id: &RequestId, result: &InputRequiredResult) -> Vec<u8> {
        let message: ServerJsonRpcMessage = JsonRpcMessage::response(
            ServerResult::InputRequiredResult(result.clone()),
            id.clone(),
        );
        serde_json::to_vec(&message).unwrap()
    }

    fn assert_written_as_rmcp_writes(requests: Vec<(&str, InputRequest)>) {
        let requests: BTreeMap<String, InputRequest> = requests
            .into_iter()
            .map(|(key, request)| (key.to_owned(), request))
            .collect();
        for (id, state) in [
            (RequestId::Number(7), Some("mrtr3.abc".to_owned())),
            (RequestId::String("a\"b".into()), None),
        ] {
            let result = InputRequiredResult::new(Some(requests.clone()), state);
            let ours = serde_json::to_vec(&AskingReply {
                id: &id,
                result: &result,
                stamp: None,
            })
            .unwrap();
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                String::from_utf8(rmcp_bytes(&id, &result)).unwrap()
            );
        }
    }

    fn form(schema: serde_json::Value) -> InputRequest {
        serde_json::from_value(json!({
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Fill \u{e9} in", "requestedSchema": schema}
        }))
        .unwrap()
    }

    fn rich_schema() -> serde_json::Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "title": "Profile",
            "properties": {
                "zeta": {"type": "string", "format": "email", "minLength": 3, "default": "a@b.c"},
                "alpha": {"type": "number", "minimum": 0.5, "maximum": 9.5},
                "count": {"type": "integer", "minimum": 1},
                "ok": {"type": "boolean", "default": true},
                "color": {"type": "string", "enum": ["red", "green"]},
                "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}]},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}},
            },
            "required": ["zeta", "ok"],
            "description": "Who you are",
        })
    }

    #[test]
    fn what_machines_ask_is_written_as_rmcp_writes_it() {
        assert_written_as_rmcp_writes(vec![
            ("name", input::text("Name?").into_request()),
            ("sure", input::confirm("Sure?").into_request()),
            ("pick", input::choice("Pick", ["b", "a"]).into_request()),
            (
                "many",
                input::multi_choice("Many", ["x", "y"]).into_request(),
            ),
            (
                "visit",
                input::url("Go", "https://example.com/x").into_request(),
            ),
            ("llm", input::prompt("Say hi").into_request()),
            ("roots", input::roots().into_request()),
        ]);
        assert!(plain_form(&input::text("Name?").into_request()).is_some());
        assert!(plain_form(&input::prompt("Say hi").into_request()).is_none());
    }

    #[test]
    fn forms_keep_their_property_order_and_every_schema_field() {
        // Wire order, as read.
        assert_written_as_rmcp_writes(vec![("f", form(rich_schema()))]);
        let set_order = |order: Option<Vec<&str>>| {
            let mut request = form(rich_schema());
            let InputRequest::Elicitation(elicit) = &mut request else {
                unreachable!()
            };
            let ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } = &mut elicit.params
            else {
                unreachable!()
            };
            requested_schema.property_order =
                order.map(|names| names.into_iter().map(str::to_owned).collect());
            request
        };
        // No order (sorted), an order that repeats and names missing properties, and one
        // long enough to be written by rmcp's code.
        assert_written_as_rmcp_writes(vec![("none", set_order(None))]);
        assert_written_as_rmcp_writes(vec![(
            "odd",
            set_order(Some(vec!["ok", "nope", "zeta", "ok", "count"])),
        )]);
        let long: Vec<String> = (0..40).map(|i| format!("p{i}")).collect();
        let mut long_order: Vec<&str> = long.iter().map(String::as_str).collect();
        long_order.push("alpha");
        let long_request = set_order(Some(long_order));
        assert_written_as_rmcp_writes(vec![("long", long_request)]);
    }

    #[test]
    fn requests_with_meta_are_left_to_rmcp() {
        let mut in_extensions = form(rich_schema());
        let InputRequest::Elicitation(elicit) = &mut in_extensions else {
            unreachable!()
        };
        let mut meta = RequestMetaObject::new();
        meta.0.0.insert("k".into(), json!(1));
        elicit.extensions.insert(meta);
        assert!(plain_form(&in_extensions).is_none());
        let in_params: InputRequest = serde_json::from_value(json!({
            "method": "elicitation/create",
            "params": {"mode": "form", "_meta": {"m": [1]}, "message": "x",
                       "requestedSchema": {"type": "object", "properties": {}}}
        }))
        .unwrap();
        assert_written_as_rmcp_writes(vec![("ext", in_extensions), ("par", in_params)]);
    }

    #[test]
    fn a_result_without_requests_or_with_meta_is_written_as_rmcp_writes_it() {
        let id = RequestId::Number(1);
        let mut result = InputRequiredResult::new(None, Some("s".into()));
        let written = |result: &InputRequiredResult, stamp: Option<&RawValue>| {
            serde_json::to_vec(&AskingReply {
                id: &id,
                result,
                stamp,
            })
            .unwrap()
        };
        assert_eq!(written(&result, None), rmcp_bytes(&id, &result));
        // The stamp is written as a `_meta` the result does not have.
        let stamp = RawValue::from_string(r#"{"io.mrtr/instance":"a"}"#.to_owned()).unwrap();
        let stamped = written(&result, Some(&stamp));
        let mut meta = MetaObject::default();
        meta.0.insert("io.mrtr/instance".into(), json!("a"));
        result.meta = Some(meta);
        assert_eq!(stamped, rmcp_bytes(&id, &result));
        // A `_meta` of its own is written as it is.
        let mut meta = MetaObject::default();
        meta.0.insert("trace".into(), json!("t"));
        result.meta = Some(meta);
        assert_eq!(written(&result, None), rmcp_bytes(&id, &result));
        assert_eq!(written(&result, Some(&stamp)), rmcp_bytes(&id, &result));
    }
}
