//! One POST body's JSON-RPC envelope, read once and borrowed from the body.
//!
//! A round-trip method's params (`tools/call`, `prompts/get`, `resources/read`) are read
//! into their type as the envelope is read, when the caller may serve the request natively
//! and `method` comes before `params` (as clients write them): the params are not scanned
//! once to be skipped and again to be read. Other params stay raw until the method's own
//! type reads them.

use std::borrow::Cow;
use std::fmt;

use rmcp::model::{ClientRequest, RequestId};
use serde::Deserializer;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::reading::{RequiredMeta, Text, is_round_trip, read_round_trip};

/// A body nested this deep (objects and arrays) is left to the gate's envelope check, whose
/// parser refuses what is deeper than serde_json's limit (128).
const MAX_NATIVE_DEPTH: usize = 100;

/// One POST body's JSON-RPC envelope, borrowed from the body.
pub(super) struct Envelope<'a> {
    pub(super) jsonrpc: Cow<'a, str>,
    pub(super) id: Option<RequestId>,
    pub(super) method: Option<Cow<'a, str>>,
    pub(super) params: Params<'a>,
    /// Whether the body has a `result` or an `error` (a client's response), even `null`.
    pub(super) answers: bool,
}

/// A request's params, as the envelope's read left them.
pub(super) enum Params<'a> {
    /// No `params`.
    Absent,
    /// The params' JSON, for the method's own type to read.
    Raw(&'a RawValue),
    /// A round-trip method's params, read into its request, and what its `_meta` requires.
    Read(Box<(ClientRequest, RequiredMeta<'a>)>),
}

impl<'a> Envelope<'a> {
    /// The envelope of `body`, when it is one JSON-RPC object this parse understands (an
    /// integer or string id, a string method); `None` sends the body to the gate's own
    /// check, which says what is wrong with it. With `read_params`, a round-trip method's
    /// params are read into its request as well, and a body whose params that read refuses
    /// is left to the gate's check too (whose rmcp path then reads and answers it).
    pub(super) fn parse(body: &'a [u8], read_params: bool) -> Option<Self> {
        // One object only: anything else (a batch, a scalar) is the gate's check's to
        // answer.
        let first = body
            .iter()
            .find(|byte| !matches!(byte, b' ' | b'\t' | b'\n' | b'\r'));
        if first != Some(&b'{') {
            return None;
        }
        // Raw and ignored values are skipped without serde_json's depth limit: a deep body
        // is left to the gate's check, which refuses what is too deep to parse.
        if !shallower_than(body, MAX_NATIVE_DEPTH) {
            return None;
        }
        let mut json = serde_json::Deserializer::from_slice(body);
        let envelope = json.deserialize_map(EnvelopeVisitor { read_params }).ok()?;
        json.end().ok()?;
        Some(envelope)
    }

    /// The id and method, as the gate's envelope check finds them, when the envelope is
    /// valid JSON-RPC 2.0 (a request, a notification, or a client's response).
    pub(super) fn id_and_method(&self) -> Option<(Option<RequestId>, Option<String>)> {
        if self.jsonrpc != "2.0" {
            return None;
        }
        match &self.method {
            Some(method) => Some((self.id.clone(), Some(method.to_string()))),
            None if self.answers => Some((self.id.clone(), None)),
            None => None,
        }
    }
}

/// Reads the envelope's object: each known key at most once (a key given twice fails the
/// read, as a derived read would), unknown keys skipped.
struct EnvelopeVisitor {
    read_params: bool,
}

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<'de>, A::Error> {
        let mut jsonrpc = None;
        let mut id = None;
        let mut method: Option<Option<Cow<'de, str>>> = None;
        let mut params = None;
        let (mut result, mut error) = (false, false);
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            match &*key {
                "jsonrpc" => {
                    once(jsonrpc.is_some(), "jsonrpc")?;
                    jsonrpc = Some(map.next_value::<Text<'de>>()?.0);
                }
                "id" => {
                    once(id.is_some(), "id")?;
                    id = Some(map.next_value_seed(IntegerOrString)?);
                }
                "method" => {
                    once(method.is_some(), "method")?;
                    method = Some(map.next_value::<Option<Text<'de>>>()?.map(|text| text.0));
                }
                "params" => {
                    once(params.is_some(), "params")?;
                    params = Some(match method.as_ref().and_then(Option::as_deref) {
                        Some(method) if self.read_params => {
                            map.next_value_seed(ParamsOf { method })?
                        }
                        _ => Params::Raw(map.next_value::<&'de RawValue>()?),
                    });
                }
                "result" => {
                    once(result, "result")?;
                    map.next_value::<IgnoredAny>()?;
                    result = true;
                }
                "error" => {
                    once(error, "error")?;
                    map.next_value::<IgnoredAny>()?;
                    error = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Envelope {
            jsonrpc: jsonrpc.ok_or_else(|| de::Error::missing_field("jsonrpc"))?,
            id,
            method: method.flatten(),
            params: params.unwrap_or(Params::Absent),
            answers: result || error,
        })
    }
}

/// Refuses a key read before.
fn once<E: de::Error>(seen: bool, key: &'static str) -> Result<(), E> {
    if seen {
        return Err(E::duplicate_field(key));
    }
    Ok(())
}

/// `method`'s params: read into its request when it is a round-trip method, else raw.
struct ParamsOf<'m> {
    method: &'m str,
}

impl<'de> DeserializeSeed<'de> for ParamsOf<'_> {
    type Value = Params<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Params<'de>, D::Error> {
        if is_round_trip(self.method) {
            read_round_trip(self.method, deserializer).map(|read| Params::Read(Box::new(read)))
        } else {
            <&'de RawValue as serde::Deserialize>::deserialize(deserializer).map(Params::Raw)
        }
    }
}

/// A JSON-RPC id: a string, or an integer rmcp keeps (`i64`). Anything else — `null`, a
/// float, a larger integer — fails the parse, and the gate's own check answers it.
struct IntegerOrString;

impl<'de> DeserializeSeed<'de> for IntegerOrString {
    type Value = RequestId;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<RequestId, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Visitor<'_> for IntegerOrString {
    type Value = RequestId;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a string or an integer")
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<RequestId, E> {
        Ok(RequestId::Number(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<RequestId, E> {
        i64::try_from(value)
            .map(RequestId::Number)
            .map_err(|_| E::custom("id beyond i64"))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<RequestId, E> {
        Ok(RequestId::String(value.into()))
    }
}

/// Whether `json` nests objects and arrays less than `limit` deep.
fn shallower_than(json: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut at = 0;
    while let Some(&byte) = json.get(at) {
        at += 1;
        match byte {
            // A string: skip to its closing quote (most of a body is strings).
            b'"' => loop {
                let rest = json.get(at..).unwrap_or_default();
                match memchr::memchr2(b'"', b'\\', rest) {
                    None => return true,
                    Some(found) if json[at + found] == b'\\' => at += found + 2,
                    Some(found) => {
                        at += found + 1;
                        break;
                    }
                }
            },
            b'{' | b'[' => {
                depth += 1;
                if depth >= limit {
                    return false;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_reads_what_the_gate_reads() {
        for read_params in [false, true] {
            let parse = |body: &'static [u8]| Envelope::parse(body, read_params);
            let envelope =
                parse(b"\r\n\t {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/list\"}")
                    .unwrap();
            assert_eq!(
                envelope.id_and_method(),
                Some((
                    Some(RequestId::String("a".into())),
                    Some("tools/list".into())
                ))
            );
            for response in [
                &br#"{"jsonrpc":"2.0","id":4,"result":null}"#[..],
                br#"{"jsonrpc":"2.0","id":4,"error":{"code":1}}"#,
            ] {
                assert_eq!(
                    parse(response).unwrap().id_and_method(),
                    Some((Some(RequestId::Number(4)), None))
                );
            }
            // What the gate refuses is left to it.
            for body in [
                &br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#[..],
                br#"{"jsonrpc":"2.0","id":1}"#,
                br#"{"jsonrpc":"2.0","id":1,"method":null}"#,
            ] {
                assert_eq!(parse(body).unwrap().id_and_method(), None);
            }
            for body in [
                &br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#[..],
                br#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#,
                br#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#,
                br#"{"jsonrpc":"2.0","id":1,"method":7}"#,
                br#"{"id":1,"method":"ping"}"#,
                br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                br#"["2.0",1,"ping"]"#,
                b" \n[\"2.0\",1,\"ping\"]",
                br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
                br#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"ping"}"#,
                br#"{"jsonrpc":"2.0","id":1,"method":"ping","method":"ping"}"#,
                br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{},"params":{}}"#,
                br#"{"jsonrpc":"2.0","id":1,"result":1,"result":2}"#,
                br#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#,
                b"{not json",
            ] {
                assert!(parse(body).is_none(), "{}", String::from_utf8_lossy(body));
            }
        }
    }

    /// A round-trip method's params are read with the envelope when asked and `method`
    /// comes first; otherwise they stay raw, and params that read refuses leave the whole
    /// body to the gate's check.
    #[test]
    fn round_trip_params_are_read_with_the_envelope_when_asked() {
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let Params::Read(read) = Envelope::parse(call, true).unwrap().params else {
            panic!("read with the envelope")
        };
        let (ClientRequest::CallToolRequest(request), meta) = *read else {
            panic!("a tools/call")
        };
        assert_eq!(request.params.name, "t");
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
        assert!(matches!(
            Envelope::parse(call, false).unwrap().params,
            Params::Raw(_)
        ));
        let params_first =
            br#"{"jsonrpc":"2.0","id":1,"params":{"name":"t"},"method":"tools/call"}"#;
        assert!(matches!(
            Envelope::parse(params_first, true).unwrap().params,
            Params::Raw(_)
        ));
        let listing = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
        assert!(matches!(
            Envelope::parse(listing, true).unwrap().params,
            Params::Raw(_)
        ));
        let refused = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#;
        assert!(Envelope::parse(refused, true).is_none());
        assert!(matches!(
            Envelope::parse(refused, false).unwrap().params,
            Params::Raw(_)
        ));
        let none = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#;
        assert!(matches!(
            Envelope::parse(none, true).unwrap().params,
            Params::Absent
        ));
    }

    #[test]
    fn depth_is_counted_outside_strings_only() {
        assert!(shallower_than(br#"{"a":[[1]]}"#, 4));
        assert!(!shallower_than(br#"{"a":[[1]]}"#, 3));
        assert!(shallower_than(br#"{"a":"[[[[[\"[["}"#, 2));
        assert!(!shallower_than(br#"{"a":"\\",[[1]]}"#, 3));
        // Cut off inside a string, even right after a backslash: nothing more to count.
        assert!(shallower_than(br#"{"a":"[[\"#, 2));
        assert!(shallower_than(br#"{"a":"[[\\"#, 2));
        // What the envelope parse would skip unchecked goes to the gate's own check.
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"x","junk":{}1{}}}"#,
            "[".repeat(150),
            "]".repeat(150)
        );
        assert!(Envelope::parse(deep.as_bytes(), true).is_none());
    }
}
