use super::formats::{is_absolute_uri, is_date_time, is_email, is_full_date};
use super::*;
use serde_json::json;

fn form(value: Value) -> RequestedForm {
    RequestedForm::parse(&value).unwrap()
}

#[test]
fn accepts_matching_content_and_ignores_unknown_fields() {
    let f = form(
        json!({"type":"object","properties":{"name":{"type":"string","maxLength":5}},"required":["name"]}),
    );
    assert!(f.check(&json!({"name":"Alice","extra":1})).is_ok());
}

#[test]
fn each_violation_names_its_own_field() {
    let f = form(json!({"type":"object","properties":{
        "name":{"type":"string","maxLength":3},
        "age":{"type":"integer","minimum":0},
        "env":{"type":"string","enum":["a","b"]},
        "tags":{"type":"array","items":{"type":"string","enum":["x","y"]},"maxItems":1}
    },"required":["name"]}));
    for (content, field, problem) in [
        (json!({}), "name", "is required"),
        (json!({"name": 5}), "name", "must be a string"),
        (
            json!({"name": "long"}),
            "name",
            "must be at most 3 characters",
        ),
        (
            json!({"name": "ab", "age": -1}),
            "age",
            "must be at least 0",
        ),
        (
            json!({"name": "ab", "age": 1.5}),
            "age",
            "must be a whole number",
        ),
        (
            json!({"name": "ab", "env": "c"}),
            "env",
            "must be one of: a, b",
        ),
        (
            json!({"name": "ab", "tags": ["x", "y"]}),
            "tags",
            "must have at most 1 item(s)",
        ),
        (
            json!({"name": "ab", "tags": ["z"]}),
            "tags",
            "holds \"z\", which is not one of: x, y",
        ),
    ] {
        let error = f.check(&content).unwrap_err();
        assert_eq!(
            (error.field(), error.problem()),
            (Some(field), problem),
            "{content}"
        );
    }
    assert_eq!(
        f.check(&json!("ab")).unwrap_err().to_string(),
        "the answer must be an object"
    );
    assert!(
        f.check(&json!({"name": "ab", "age": 3, "env": "a", "tags": ["y"]}))
            .is_ok()
    );
}

#[test]
fn integers_may_be_written_with_a_zero_fraction() {
    let f = form(json!({"type":"object","properties":{"n":{"type":"integer"}}}));
    assert!(f.check(&json!({"n": 2.0})).is_ok());
}

#[test]
fn email_follows_rfc_5321_mailbox_syntax() {
    for good in [
        "a@b",
        "root@localhost",
        "a.b@example.org",
        "o'hara+tag@ex-ample.co.uk",
        "\"john doe\"@example.org",
        "x@[192.0.2.1]",
        "x@[IPv6:2001:db8::1]",
    ] {
        assert!(is_email(good), "{good}");
    }
    for bad in [
        "no-at-sign",
        "a b@example.org",
        "a@",
        "@b",
        "a@example..org",
        "a..b@example.org",
        ".a@example.org",
        "a@-example.org",
        "a@exa_mple.org",
        "a@[300.0.0.1]",
        "ünï@example.org",
    ] {
        assert!(!is_email(bad), "{bad}");
    }
    assert!(!is_email(&format!("{}@example.org", "a".repeat(65))));
}

#[test]
fn dates_must_exist_and_date_times_need_t_and_an_offset() {
    for good in ["2026-02-28", "2024-02-29", "2026-12-31"] {
        assert!(is_full_date(good), "{good}");
    }
    for bad in [
        "2026-02-31",
        "2026-02-29",
        "2026-13-01",
        "2026-7-28",
        "02/12/2026",
        "+2026-01-01",
        "26-01-02",
        // Ten bytes whose 5th is inside a multi-byte character.
        "2026\u{fffd}-02",
        "20é6-02-28",
    ] {
        assert!(!is_full_date(bad), "{bad}");
    }
    for good in ["2026-12-02T12:38:28Z", "2026-12-02t12:38:28.5+01:00"] {
        assert!(is_date_time(good), "{good}");
    }
    for bad in [
        "2026-12-02 12:38:28Z",
        "2026-12-02T12:38:28",
        "2026-02-31T00:00:00Z",
        "tomorrow",
    ] {
        assert!(!is_date_time(bad), "{bad}");
    }
}

#[test]
fn uris_are_absolute_rfc_3986_uris() {
    for good in [
        "https://example.org/x?y=1",
        "urn:isbn:0451450523",
        "mailto:someone@example.org",
        "a:",
        "a+b-c.d:rest",
        "file:///etc/hosts",
        "http://user:pa%20ss@host:8080/p/a/t/h?q=1&r=a/b?c#frag/ment?",
        "http://host:/",
        "http://[::1]:443/",
        "http://[2001:db8::7]",
        "http://[::ffff:192.0.2.1]/",
        "http://[v1.fe80::a+en1]/",
        "http://192.0.2.16:80/",
        "http:",
        "http://",
        "foo://a/%7Euser/%41",
        "tag:example.org,2026:x!$&'()*+,;=",
        "HTTP://EXAMPLE.ORG",
        "x:/a//b",
        "x:#",
        "x:?",
    ] {
        assert!(is_absolute_uri(good), "{good}");
    }
    for bad in [
        "",
        "not a uri",
        "/relative/path",
        "//host/path",
        "https://example.org/a b",
        ":no-scheme",
        "1http://host",
        "ht_tp://host",
        "-a:b",
        "http://exa mple.org",
        "http://example.org/%",
        "http://example.org/%4",
        "http://example.org/%zz",
        "http://example.org/a|b",
        "http://example.org/{x}",
        "http://example.org/\\",
        "http://example.org/\"",
        "http://example.org/^",
        "http://example.org/`",
        "http://例え.jp/",
        "http://example.org/é",
        "http://[::1",
        "http://[::1]x/",
        "http://[::1%25eth0]/",
        "http://[1:2:3:4:5:6:7:8:9]/",
        "http://[v.x]/",
        "http://[vz.x]/",
        "http://[v1.]/",
        "http://host:80a/",
        "http://a@b@c/",
        "http://a[b/",
        "x:#a#b",
        "x:?a#b c",
        "x\ty:z",
        "http://host/\n",
    ] {
        assert!(!is_absolute_uri(bad), "{bad:?}");
    }
}

proptest::proptest! {
    /// The hand-written check agrees with `fluent-uri` (a strict RFC 3986 parser) on
    /// strings made of URI characters, brackets, `%`, spaces and a non-ASCII letter.
    #[test]
    fn uri_check_agrees_with_fluent_uri(
        text in "[a-z][a-z0-9+.-]{0,3}:(//)?[a-zA-Z0-9:@\\[\\]%/?#._~!$&'()*+,;= é-]{0,24}"
    ) {
        let oracle = fluent_uri::Uri::parse(text.as_str()).is_ok();
        proptest::prop_assert_eq!(is_absolute_uri(&text), oracle, "{:?}", text);
    }

    /// Any shape at all, including no scheme: the same verdict.
    #[test]
    fn uri_check_agrees_with_fluent_uri_on_anything(text in "[a-z:/%\\[\\]@?#1v.]{0,16}") {
        let oracle = fluent_uri::Uri::parse(text.as_str()).is_ok();
        proptest::prop_assert_eq!(is_absolute_uri(&text), oracle, "{:?}", text);
    }
}

#[test]
fn schemas_outside_the_restricted_shape_are_refused_when_parsed() {
    for property in [
        json!({"type": "object"}),
        json!({"type": "array", "items": {"type": "string"}}),
    ] {
        let schema = json!({"type": "object", "properties": {"p": property}});
        assert!(
            RequestedForm::parse(&schema)
                .unwrap_err()
                .to_string()
                .contains("`p`")
        );
    }
}

mod typed_reading {
    use proptest::prelude::*;
    use rmcp::model::{ElicitationSchema, NumberSchema, PrimitiveSchemaDefinition};
    use serde_json::{Value, json};

    use super::super::{RequestedForm, typed};

    fn maybe<T: std::fmt::Debug + Clone + 'static>(
        value: impl Strategy<Value = T> + 'static,
    ) -> BoxedStrategy<Option<T>> {
        proptest::option::of(value).boxed()
    }

    fn labels() -> impl Strategy<Value = (Option<String>, Option<String>)> {
        (maybe("[a-z ]{0,6}"), maybe("[a-z ]{0,6}"))
    }

    fn values() -> impl Strategy<Value = Vec<String>> {
        proptest::collection::vec("[a-z]{1,4}", 1..4)
    }

    /// Every property shape of the 2026-07-28 restricted schema, with every keyword
    /// present or absent.
    fn property() -> impl Strategy<Value = Value> {
        let insert = |mut object: Value, entries: Vec<(&str, Option<Value>)>| {
            for (key, value) in entries {
                if let Some(value) = value {
                    object[key] = value;
                }
            }
            object
        };
        prop_oneof![
            (labels(), maybe(0u32..9), maybe(0u32..9), maybe(0usize..5), maybe("[a-z]{0,3}"))
                .prop_map(move |((t, d), min, max, format, default)| insert(json!({"type": "string"}), vec![
                    ("title", t.map(Value::from)), ("description", d.map(Value::from)),
                    ("minLength", min.map(Value::from)), ("maxLength", max.map(Value::from)),
                    ("format", format.and_then(|i| ["email", "uri", "date", "date-time"].get(i)).map(|f| Value::from(*f))),
                    ("default", default.map(Value::from)),
                ])),
            (labels(), any::<bool>(), maybe(-9i64..9), maybe(-9i64..9), maybe(any::<i64>()))
                .prop_map(move |((t, d), integer, min, max, default)| insert(json!({"type": if integer { "integer" } else { "number" }}), vec![
                    ("title", t.map(Value::from)), ("description", d.map(Value::from)),
                    ("minimum", min.map(Value::from)), ("maximum", max.map(|m| if integer { Value::from(m) } else { Value::from(m as f64 + 0.5) })),
                    ("default", default.map(Value::from)),
                ])),
            (labels(), maybe(any::<bool>())).prop_map(move |((t, d), default)| insert(json!({"type": "boolean"}), vec![
                ("title", t.map(Value::from)), ("description", d.map(Value::from)), ("default", default.map(Value::from)),
            ])),
            (labels(), values(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(move |((t, d), values, titled, legacy, with_default)| {
                let default = with_default.then(|| Value::from(values[0].clone()));
                let shape = if legacy {
                    json!({"type": "string", "enum": values, "enumNames": values.iter().skip(1).map(|v| v.to_uppercase()).collect::<Vec<_>>()})
                } else if titled {
                    json!({"type": "string", "oneOf": values.iter().map(|v| json!({"const": v, "title": v.to_uppercase()})).collect::<Vec<_>>()})
                } else {
                    json!({"type": "string", "enum": values})
                };
                insert(shape, vec![("title", t.map(Value::from)), ("description", d.map(Value::from)), ("default", default)])
            }),
            (labels(), values(), any::<bool>(), maybe(0u64..4), maybe(0u64..4), any::<bool>()).prop_map(move |((t, d), values, titled, min, max, with_default)| {
                let items = if titled {
                    json!({"anyOf": values.iter().map(|v| json!({"const": v, "title": v.to_uppercase()})).collect::<Vec<_>>()})
                } else {
                    json!({"type": "string", "enum": values})
                };
                let default = with_default.then(|| Value::from(vec![values[0].clone()]));
                insert(json!({"type": "array", "items": items}), vec![
                    ("title", t.map(Value::from)), ("description", d.map(Value::from)),
                    ("minItems", min.map(Value::from)), ("maxItems", max.map(Value::from)), ("default", default),
                ])
            }),
        ]
    }

    fn schema() -> impl Strategy<Value = (ElicitationSchema, u8)> {
        (
            proptest::collection::vec(("[a-d]{1,2}", property()), 0..5),
            any::<bool>(),
            0u8..3,
        )
            .prop_map(|(properties, all_required, order)| {
                let mut object = serde_json::Map::new();
                for (name, property) in properties {
                    object.insert(name, property);
                }
                let required: Vec<&String> = object
                    .keys()
                    .filter(|k| all_required || k.len() == 1)
                    .collect();
                let value = json!({"type": "object", "properties": object, "required": required});
                (
                    serde_json::from_value(value).expect("a restricted schema decodes"),
                    order,
                )
            })
    }

    proptest! {
        /// The server's reading of a typed schema is the terminal client's reading of its
        /// JSON, whatever the property order is (wire order, none, or a partial list).
        #[test]
        fn typed_and_json_readings_agree((mut schema, order) in schema()) {
            match order {
                0 => {}
                1 => schema.property_order = None,
                _ => if let Some(order) = &mut schema.property_order {
                    order.reverse();
                    order.pop();
                    order.push("zz".into());
                    order.extend(order.clone());
                },
            }
            let typed = typed::form(&schema).expect("every shape is known");
            let json = RequestedForm::parse(&serde_json::to_value(&schema).unwrap()).unwrap();
            // The typed reading keeps the wire order (`property_order`, then the rest);
            // a JSON object read back keeps it only with serde_json's `preserve_order`.
            let names: Vec<&str> = typed.fields.iter().map(|f| f.name.as_str()).collect();
            let mut wire: Vec<&str> = Vec::new();
            for name in schema.property_order.iter().flatten().chain(schema.properties.keys()) {
                if schema.properties.contains_key(name) && !wire.contains(&name.as_str()) {
                    wire.push(name);
                }
            }
            prop_assert_eq!(names, wire);
            let by_name = |mut form: RequestedForm| { form.fields.sort_by(|a, b| a.name.cmp(&b.name)); form };
            prop_assert_eq!(by_name(typed), by_name(json));
        }
    }

    /// Values JSON cannot hold (only a typed schema built in code has them) read as JSON
    /// would carry them: no bound, and a `null` default.
    #[test]
    fn non_finite_numbers_read_as_their_json() {
        let mut number = NumberSchema::new();
        (number.minimum, number.maximum, number.default) =
            (Some(f64::NAN), Some(f64::INFINITY), Some(f64::NEG_INFINITY));
        let schema = ElicitationSchema::new(
            [("n".to_string(), PrimitiveSchemaDefinition::Number(number))].into(),
        );
        let json = RequestedForm::parse(&serde_json::to_value(&schema).unwrap()).unwrap();
        assert_eq!(typed::form(&schema).unwrap(), json);
        assert_eq!(RequestedForm::from_schema(&schema).unwrap(), json);
    }
}
