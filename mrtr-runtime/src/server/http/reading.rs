//! A 2026-07-28 request's typed read on the native path: rmcp's own request types, read
//! from the body's raw `params`, with what the path checks in `_meta` beside them.
//!
//! The round-trip methods (`tools/call`, `prompts/get`, `resources/read`) are read in one
//! pass, and their `_meta` is read for the two keys 2026-07-28 requires and kept as nothing
//! else: no JSON map of it is built for a request nothing reads it from (each of its values
//! is a map of its own, a dozen allocations and hashed inserts a request). Any read this
//! one refuses is left to rmcp's own read ([`typed`]), which decides, so what is served
//! here is exactly what rmcp's read takes.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientRequest, GetMeta as _, GetPromptRequestParams,
    ReadResourceRequestParams, Request, RequestMetaObject,
};
use serde::de::value::{BorrowedStrDeserializer, StringDeserializer};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, de};
use serde_json::value::RawValue;

/// Where a 2026-07-28 request's `_meta` names its protocol version.
pub(super) const PROTOCOL_VERSION_META_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// Where a 2026-07-28 request's `_meta` declares the client's capabilities.
const CLIENT_CAPABILITIES_META_KEY: &str = "io.modelcontextprotocol/clientCapabilities";

/// What a request's `_meta` says under the keys 2026-07-28 requires of it.
#[derive(Debug, Default, PartialEq)]
pub(super) struct RequiredMeta<'a> {
    /// The protocol version, when it is a string (rmcp's read takes any string as it is).
    pub(super) protocol_version: Option<Cow<'a, str>>,
    /// The declared capabilities, when they read as rmcp reads them.
    pub(super) client_capabilities: Option<ClientCapabilities>,
}

/// `request` and what its `_meta` requires, read from `method`'s raw `params`; `None`
/// sends the request the rmcp way (a method this path does not read, or params rmcp's read
/// refuses).
pub(super) fn typed_request<'a>(
    method: &'a str,
    params: Option<&'a RawValue>,
) -> Option<(ClientRequest, RequiredMeta<'a>)> {
    if is_round_trip(method)
        && let Some(params) = params
    {
        let mut json = serde_json::Deserializer::from_str(params.get());
        let read = read_round_trip(method, &mut json).and_then(|read| json.end().map(|()| read));
        if let Ok(read) = read {
            return Some(read);
        }
    }
    let request = Some(match method {
        "tools/call" => ClientRequest::CallToolRequest(typed(method, params)?),
        "tools/list" => ClientRequest::ListToolsRequest(typed(method, params)?),
        "prompts/get" => ClientRequest::GetPromptRequest(typed(method, params)?),
        "prompts/list" => ClientRequest::ListPromptsRequest(typed(method, params)?),
        "resources/read" => ClientRequest::ReadResourceRequest(typed(method, params)?),
        "resources/list" => ClientRequest::ListResourcesRequest(typed(method, params)?),
        "resources/templates/list" => {
            ClientRequest::ListResourceTemplatesRequest(typed(method, params)?)
        }
        "server/discover" => ClientRequest::DiscoverRequest(typed(method, params)?),
        "ping" => ClientRequest::PingRequest(typed(method, params)?),
        "completion/complete" => ClientRequest::CompleteRequest(typed(method, params)?),
        "tasks/get" => ClientRequest::GetTaskRequest(typed(method, params)?),
        "tasks/update" => ClientRequest::UpdateTaskRequest(typed(method, params)?),
        "tasks/cancel" => ClientRequest::CancelTaskRequest(typed(method, params)?),
        _ => return None,
    })?;
    let required = RequiredMeta::of(request.get_meta());
    Some((request, required))
}

impl RequiredMeta<'_> {
    /// What `meta`, read by rmcp, says under the required keys.
    fn of(meta: &RequestMetaObject) -> Self {
        RequiredMeta {
            protocol_version: meta
                .get(PROTOCOL_VERSION_META_KEY)
                .and_then(serde_json::Value::as_str)
                .map(|version| Cow::Owned(version.to_owned())),
            client_capabilities: meta.client_capabilities(),
        }
    }
}

/// Whether `method` is a round-trip method, whose params [`read_round_trip`] reads.
pub(super) fn is_round_trip(method: &str) -> bool {
    matches!(method, "tools/call" | "prompts/get" | "resources/read")
}

/// Reads a round-trip method's params (a type with a `_meta` field of its own) straight
/// from `params`, `_meta` diverted into [`RequiredMeta`] (the params' own field stays
/// empty). rmcp reads params through a flattening wrapper that first buffers every value of
/// the object (arguments and answers included) and then reads the type from the buffer;
/// this reads the same fields into the same types in one pass. An error (anything rmcp's
/// read might take otherwise) leaves the request to rmcp's read, which decides.
pub(super) fn read_round_trip<'de, D: Deserializer<'de>>(
    method: &str,
    params: D,
) -> Result<(ClientRequest, RequiredMeta<'de>), D::Error> {
    Ok(match method {
        "tools/call" => {
            let (request, meta) = direct::<_, _, CallToolRequestParams>(params)?;
            (ClientRequest::CallToolRequest(request), meta)
        }
        "prompts/get" => {
            let (request, meta) = direct::<_, _, GetPromptRequestParams>(params)?;
            (ClientRequest::GetPromptRequest(request), meta)
        }
        "resources/read" => {
            let (request, meta) = direct::<_, _, ReadResourceRequestParams>(params)?;
            (ClientRequest::ReadResourceRequest(request), meta)
        }
        _ => return Err(de::Error::custom("not a round-trip method")),
    })
}

/// One round-trip method's params and what its `_meta` requires (see [`read_round_trip`]).
fn direct<'de, D: Deserializer<'de>, M: Default, P: Deserialize<'de>>(
    params: D,
) -> Result<(Request<M, P>, RequiredMeta<'de>), D::Error> {
    let mut meta = None;
    let read = P::deserialize(Diverting {
        inner: params,
        meta: &mut meta,
    })?;
    Ok((Request::new(read), meta.flatten().unwrap_or_default()))
}

/// Reads one of rmcp's request types from a message's method and raw params, exactly as
/// rmcp reads it from the whole message (its types take `method` and `params` and ignore
/// the rest).
pub(super) fn typed<'a, T: Deserialize<'a>>(
    method: &'a str,
    params: Option<&'a RawValue>,
) -> Option<T> {
    T::deserialize(MethodAndParams {
        method,
        params,
        read: 0,
    })
    .ok()
}

/// A message's `method` and raw `params`, as the map rmcp's request types read.
struct MethodAndParams<'a> {
    method: &'a str,
    params: Option<&'a RawValue>,
    /// Keys handed out so far.
    read: u8,
}

impl<'de> Deserializer<'de> for MethodAndParams<'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_map(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

impl<'de> MapAccess<'de> for MethodAndParams<'de> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        let key = match (self.read, self.params) {
            (0, _) => "method",
            (1, Some(_)) => "params",
            _ => return Ok(None),
        };
        self.read += 1;
        seed.deserialize(BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        match (self.read, self.params) {
            (1, _) => seed.deserialize(BorrowedStrDeserializer::new(self.method)),
            (_, Some(params)) => {
                let mut json = serde_json::Deserializer::from_str(params.get());
                let value = seed.deserialize(&mut json)?;
                json.end()?;
                Ok(value)
            }
            _ => Err(de::Error::custom("a value without a key")),
        }
    }
}

/// A JSON object's deserializer that reads its `_meta` entry into `meta` (`Some(None)`
/// for `null`) and hands every other entry to the type being read. Anything but an object
/// is refused (the direct read then leaves the request to rmcp's).
struct Diverting<'m, 'de, D> {
    inner: D,
    meta: &'m mut Option<Option<RequiredMeta<'de>>>,
}

impl<'m, 'de, D: Deserializer<'de>> Deserializer<'de> for Diverting<'m, 'de, D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_map(Divert {
            visitor,
            meta: self.meta,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

/// The visitor [`Diverting`] hands its deserializer: an object's entries go to `visitor`
/// but for `_meta`.
struct Divert<'m, 'de, V> {
    visitor: V,
    meta: &'m mut Option<Option<RequiredMeta<'de>>>,
}

impl<'m, 'de, V: Visitor<'de>> Visitor<'de> for Divert<'m, 'de, V> {
    type Value = V::Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        self.visitor.expecting(formatter)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(DivertedMap {
            map,
            meta: self.meta,
        })
    }
}

/// An object's entries without its `_meta`, which goes to `meta`.
struct DivertedMap<'m, 'de, A> {
    map: A,
    meta: &'m mut Option<Option<RequiredMeta<'de>>>,
}

impl<'m, 'de, A: MapAccess<'de>> MapAccess<'de> for DivertedMap<'m, 'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(Text(key)) = self.map.next_key::<Text<'de>>()? else {
                return Ok(None);
            };
            if key != "_meta" {
                return match key {
                    Cow::Borrowed(key) => seed.deserialize(BorrowedStrDeserializer::new(key)),
                    Cow::Owned(key) => seed.deserialize(StringDeserializer::new(key)),
                }
                .map(Some);
            }
            // As the params' own derived read would: a field given twice is refused.
            if self.meta.is_some() {
                return Err(de::Error::duplicate_field("_meta"));
            }
            *self.meta = Some(self.map.next_value::<Option<RequiredMeta<'de>>>()?);
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// Reads a string, borrowed when the input lends it.
struct TextVisitor<'de>(PhantomData<&'de ()>);

impl<'de> Visitor<'de> for TextVisitor<'de> {
    type Value = Cow<'de, str>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(text))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(text.to_owned()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(text))
    }
}

/// `_meta` is an object (as rmcp's map of it reads it): its two required keys are read,
/// every other value is skipped, a key given twice is refused.
impl<'de> Deserialize<'de> for RequiredMeta<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MetaVisitor<'de>(PhantomData<&'de ()>);

        impl<'de> Visitor<'de> for MetaVisitor<'de> {
            type Value = RequiredMeta<'de>;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a `_meta` object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut version, mut capabilities) = (None, None);
                while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
                    match &*key {
                        PROTOCOL_VERSION_META_KEY if version.is_none() => {
                            version = Some(map.next_value::<Text<'de>>()?.0);
                        }
                        // `null` reads as no capabilities, as rmcp's decode of it does.
                        CLIENT_CAPABILITIES_META_KEY if capabilities.is_none() => {
                            capabilities = Some(map.next_value::<Option<ClientCapabilities>>()?);
                        }
                        // rmcp's map keeps the last of a repeated key: left to its read.
                        PROTOCOL_VERSION_META_KEY | CLIENT_CAPABILITIES_META_KEY => {
                            return Err(de::Error::custom(format_args!("`{key}` given twice")));
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(RequiredMeta {
                    protocol_version: version,
                    client_capabilities: capabilities.flatten(),
                })
            }
        }

        deserializer.deserialize_map(MetaVisitor(PhantomData))
    }
}

/// A string (a value or an object's key), borrowed from the body when it has no escapes.
pub(super) struct Text<'de>(pub(super) Cow<'de, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_str(TextVisitor(PhantomData))
            .map(Text)
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{
        CallToolRequestMethod, GetPromptRequestMethod, ProtocolVersion, ReadResourceRequestMethod,
    };

    use super::*;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).unwrap()
    }

    #[test]
    fn typed_requests_keep_what_meta_requires_and_null_params_read_as_rmcp_reads_them() {
        let params = raw(
            r#"{"name":"t","arguments":{"a":1},"requestState":"s","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}}"#,
        );
        let (request, meta) = typed_request("tools/call", Some(&params)).unwrap();
        let ClientRequest::CallToolRequest(call) = &request else {
            panic!("a tools/call")
        };
        assert_eq!(call.params.name, "t");
        assert_eq!(call.params.request_state.as_deref(), Some("s"));
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
        assert!(meta.client_capabilities.unwrap().elicitation.is_some());
        // Nothing else is kept of `_meta`.
        assert!(call.params.meta.is_none());
        assert!(request.get_meta().is_empty());
        // Other methods read `_meta` as rmcp does, and the required keys are found there.
        let listing = raw(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#);
        let (request, meta) = typed_request("tools/list", Some(&listing)).unwrap();
        assert_eq!(
            request.get_meta().protocol_version(),
            Some(ProtocolVersion::V_2026_07_28)
        );
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
        assert!(meta.client_capabilities.is_none());
        let null = raw("null");
        assert!(typed_request("tools/list", Some(&null)).is_some());
        assert!(typed_request("tools/call", Some(&null)).is_none());
        // A non-string requestState is rmcp's to answer (-32602 through its custom request).
        let bad = raw(r#"{"name":"t","requestState":7}"#);
        assert!(typed_request("tools/call", Some(&bad)).is_none());
        assert!(typed_request("initialize", None).is_none());
    }

    /// rmcp's read of the same params, and what it finds under the required keys.
    fn rmcps<M, P>(method: &str, params: &RawValue) -> Option<(P, RequiredMeta<'static>)>
    where
        Request<M, P>: serde::de::DeserializeOwned,
        P: Clone,
    {
        let request: Request<M, P> = typed(method, Some(params))?;
        let meta = request
            .extensions
            .get::<RequestMetaObject>()
            .cloned()
            .unwrap_or_default();
        Some((request.params, RequiredMeta::of(&meta)))
    }

    /// The one-pass read of the round-trip methods gives what rmcp's own read gives, field
    /// by field and the required `_meta` keys included, or nothing (and rmcp's read
    /// decides).
    #[test]
    fn direct_reads_agree_with_rmcps_read() {
        fn same<M, P>(method: &str, params: &str, take: fn(&mut P)) -> bool
        where
            M: Default,
            P: serde::de::DeserializeOwned + PartialEq + fmt::Debug + Clone,
            Request<M, P>: serde::de::DeserializeOwned,
        {
            let raw = raw(params);
            let slow = rmcps::<M, P>(method, &raw);
            let mut json = serde_json::Deserializer::from_str(raw.get());
            let Ok((fast, fast_meta)) =
                direct::<_, M, P>(&mut json).and_then(|read| json.end().map(|()| read))
            else {
                return false;
            };
            let (mut slow, slow_meta) =
                slow.unwrap_or_else(|| panic!("rmcp refuses what the direct read took: {params}"));
            take(&mut slow);
            assert_eq!(fast.params, slow, "{params}");
            assert_eq!(fast_meta, slow_meta, "{params}");
            true
        }
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{"form":{}}},"progressToken":7,"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}"#;
        let calls = [
            r#"{"name":"t"}"#.to_owned(),
            format!(r#"{{"name":"t","arguments":{{"a":[1,{{"b":null}}],"c":"d"}},{meta}}}"#),
            format!(
                r#"{{{meta},"name":"t","requestState":"s.t","inputResponses":{{"k":{{"action":"accept","content":{{"x":1}}}}}}}}"#
            ),
            r#"{"name":"t","arguments":null,"_meta":null,"unknown":{"deep":[1,2]}}"#.to_owned(),
            r#"{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":7}}"#.to_owned(),
            r#"{"name":"t","_meta":{"io.modelcontextprotocol/clientCapabilities":null}}"#
                .to_owned(),
            r#"{"na\u006de":"t","_meta":{"io.modelcontextprotocol/protocol\u0056ersion":"v\n"}}"#
                .to_owned(),
        ];
        let take_call = |p: &mut CallToolRequestParams| p.meta = None;
        let mut taken = 0;
        for params in &calls {
            taken += usize::from(same::<CallToolRequestMethod, CallToolRequestParams>(
                "tools/call",
                params,
                take_call,
            ));
        }
        // Those whose `_meta` is not a string version are left to rmcp's read.
        assert_eq!(taken, calls.len() - 1);
        let prompt = format!(r#"{{"name":"p","arguments":{{"x":"y"}},{meta},"requestState":"s"}}"#);
        assert!(same::<GetPromptRequestMethod, GetPromptRequestParams>(
            "prompts/get",
            &prompt,
            |p| p.meta = None
        ));
        let read = format!(r#"{{"uri":"file:///a","inputResponses":{{}},{meta}}}"#);
        assert!(
            same::<ReadResourceRequestMethod, ReadResourceRequestParams>(
                "resources/read",
                &read,
                |p| p.meta = None
            )
        );
        // What either read refuses, or reads differently, the direct one leaves to rmcp's.
        for refused in [
            r#"null"#,
            r#"{"arguments":{}}"#,
            r#"{"name":7}"#,
            r#"{"name":"t","name":"u"}"#,
            r#"{"name":"t","requestState":7}"#,
            r#"{"name":"t","_meta":[1]}"#,
            r#"{"name":"t","_meta":["2026-07-28",{}]}"#,
            r#"{"name":"t","_meta":{},"_meta":{}}"#,
            r#"{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"a","io.modelcontextprotocol/protocolVersion":"b"}}"#,
            r#"{"name":"t","_meta":{"io.modelcontextprotocol/clientCapabilities":"all"}}"#,
            r#"[1]"#,
            r#"[null,"t",null,null,null]"#,
        ] {
            assert!(
                !same::<CallToolRequestMethod, CallToolRequestParams>(
                    "tools/call",
                    refused,
                    take_call
                ),
                "{refused}"
            );
        }
    }
}
