//! Whole-derive tests on token streams: the model, its checks and the emitted code.

use quote::quote;

use super::model::{Format, Kind, form_model};
use super::{choice, derive_form, derive_form_choice};

fn model(tokens: proc_macro2::TokenStream) -> (super::model::FormModel, Vec<String>) {
    let input = syn::parse2(tokens).unwrap();
    let (model, errors) = form_model(&input);
    let messages = errors
        .map(|e| e.into_iter().map(|e| e.to_string()).collect())
        .unwrap_or_default();
    (model, messages)
}

fn errors(tokens: proc_macro2::TokenStream) -> Vec<String> {
    model(tokens).1
}

#[test]
fn a_doc_comment_gives_the_title_from_its_summary_and_the_description_from_the_rest() {
    let (model, errors) = model(quote! {
        struct Order {
            /// How many?
            ///
            /// Up to nine per dish;
            /// more by phone.
            quantity: u8,
            /// Kept whole when the title is named.
            #[form(title = "Note")]
            note: String,
            /// Replaced by the attribute.
            ///
            /// This too.
            #[form(description = "Said here")]
            more: bool,
        }
    });
    assert!(errors.is_empty(), "{errors:?}");
    let labels: Vec<(Option<&str>, Option<&str>)> = model
        .properties
        .iter()
        .map(|p| (p.title.as_deref(), p.description.as_deref()))
        .collect();
    assert_eq!(
        labels,
        [
            (
                Some("How many?"),
                Some("Up to nine per dish; more by phone.")
            ),
            (Some("Note"), Some("Kept whole when the title is named.")),
            (Some("Replaced by the attribute."), Some("Said here")),
        ]
    );
}

#[test]
fn confirm_example_becomes_a_boolean_and_an_optional_bounded_string() {
    let (model, errors) = model(quote! {
        struct Confirm {
            /// Apply the plan now?
            apply: bool,
            #[form(max_length = 200)]
            reason: Option<String>,
        }
    });
    assert!(errors.is_empty(), "{errors:?}");
    let [apply, reason] = model.properties.as_slice() else {
        panic!("two properties")
    };
    assert_eq!(apply.wire_name, "apply");
    assert!(apply.required);
    // The doc comment's summary labels the field (hosts show `title` on the input).
    assert_eq!(apply.title.as_deref(), Some("Apply the plan now?"));
    assert_eq!(apply.description, None);
    assert!(matches!(apply.kind, Kind::Boolean { default: None }));
    assert!(!reason.required);
    assert!(matches!(
        reason.kind,
        Kind::String {
            max_length: Some(200),
            min_length: None,
            format: None,
            default: None
        }
    ));
}

#[test]
fn serde_renames_decide_property_names_and_defaults_make_fields_optional() {
    let (model, errors) = model(quote! {
        #[serde(rename_all = "camelCase")]
        struct Deploy {
            dry_run: bool,
            #[serde(rename = "svc")]
            service_name: String,
            #[serde(default)]
            retry_count: u8,
            #[serde(skip)]
            cache: std::collections::HashMap<String, String>,
            r#type: String,
        }
    });
    assert!(errors.is_empty(), "{errors:?}");
    let names: Vec<_> = model
        .properties
        .iter()
        .map(|p| (p.wire_name.as_str(), p.required))
        .collect();
    assert_eq!(
        names,
        [
            ("dryRun", true),
            ("svc", true),
            ("retryCount", false),
            ("type", true)
        ]
    );
}

#[test]
fn unsigned_integers_get_minimum_zero_unless_given() {
    let (model, _) = model(quote! {
        struct F { a: u32, #[form(minimum = 5, maximum = 9, default = 7)] b: u8, c: i64 }
    });
    let bounds: Vec<_> = model
        .properties
        .iter()
        .map(|p| match p.kind {
            Kind::Integer {
                minimum,
                maximum,
                default,
            } => (minimum, maximum, default),
            _ => panic!("integer"),
        })
        .collect();
    assert_eq!(
        bounds,
        [
            (Some(0), None, None),
            (Some(5), Some(9), Some(7)),
            (None, None, None)
        ]
    );
}

#[test]
fn string_keywords_are_read() {
    let (model, errors) = model(quote! {
        struct F {
            #[form(format = "date-time", min_length = 1, max_length = 40, title = "When", description = "Start", default = "2026-01-01T00:00:00Z")]
            at: String,
        }
    });
    assert!(errors.is_empty(), "{errors:?}");
    let p = &model.properties[0];
    assert_eq!(p.title.as_deref(), Some("When"));
    assert_eq!(p.description.as_deref(), Some("Start"));
    assert!(matches!(
        &p.kind,
        Kind::String { format: Some(Format::DateTime), min_length: Some(1), max_length: Some(40), default: Some(d) } if d == "2026-01-01T00:00:00Z"
    ));
}

#[test]
fn every_bad_field_is_reported_at_once() {
    let errors = errors(quote! {
        struct F {
            ok: String,
            nested: Vec<String>,
            map: HashMap<String, u8>,
            pair: (u8, u8),
            text: &'static str,
        }
    });
    assert_eq!(errors.len(), 4, "{errors:?}");
    for (message, field) in errors.iter().zip(["nested", "map", "pair", "text"]) {
        assert!(
            message.starts_with(&format!("field `{field}` has type")),
            "{message}"
        );
        assert!(
            message.contains("a form field must be `String`"),
            "{message}"
        );
    }
}

#[test]
fn shape_errors_name_the_item() {
    assert!(
        errors(quote!(
            struct T(u8);
        ))[0]
            .contains("`T` is a tuple struct")
    );
    assert!(
        errors(quote!(
            struct U;
        ))[0]
            .contains("`U` is a unit struct")
    );
    assert!(
        errors(quote!(
            enum E {
                A,
            }
        ))[0]
            .contains("`E` is an enum")
    );
    assert!(
        errors(quote!(
            struct G<T> {
                t: T,
            }
        ))[0]
            .contains("generic parameters")
    );
}

#[test]
fn attribute_errors_are_specific() {
    let cases = [
        (
            quote!(
                struct F {
                    #[form(colour = "red")]
                    a: String,
                }
            ),
            "unknown `form` attribute `colour`; expected one of `title`",
        ),
        (
            quote!(
                struct F {
                    #[form(max_length = "200")]
                    a: String,
                }
            ),
            "`max_length` expects an integer literal",
        ),
        (
            quote!(
                struct F {
                    #[form(format = "email")]
                    a: u8,
                }
            ),
            "`format` does not apply to field `a` of type `u8`; it applies to `String` fields",
        ),
        (
            quote!(
                struct F {
                    #[form(minimum = 1)]
                    a: bool,
                }
            ),
            "`minimum` does not apply to field `a` of type `bool`",
        ),
        (
            quote!(
                struct F {
                    #[form(format = "phone")]
                    a: String,
                }
            ),
            "unknown format `phone`",
        ),
        (
            quote!(
                struct F {
                    #[form(maximum = 300)]
                    a: u8,
                }
            ),
            "`maximum = 300` is out of range for `u8` (0..=255)",
        ),
        (
            quote!(
                struct F {
                    #[form(minimum = -1)]
                    a: u32,
                }
            ),
            "`minimum = -1` is out of range for `u32`",
        ),
        (
            quote!(
                struct F {
                    #[form(minimum = 5, maximum = 1)]
                    a: i32,
                }
            ),
            "`minimum` (5) is greater than `maximum` (1)",
        ),
        (
            quote!(
                struct F {
                    #[form(default = 5)]
                    a: String,
                }
            ),
            "the default of a `String` field must be a string literal",
        ),
        (
            quote!(
                struct F {
                    #[form(max_length = 2, default = "abc")]
                    a: String,
                }
            ),
            "the default is outside `min_length`..`max_length`",
        ),
        (
            quote!(
                struct F {
                    #[form(maximum = 1.5, default = 2.0)]
                    a: f64,
                }
            ),
            "the default is outside `minimum`..`maximum`",
        ),
        (
            quote!(
                struct F {
                    #[form(default = "prod")]
                    a: Env,
                }
            ),
            "e.g. `default = Env::First`",
        ),
        (
            quote!(
                struct F {
                    #[form(min_items = 1)]
                    a: Env,
                }
            ),
            "`min_items` does not apply to field `a` of type choice `Env`",
        ),
        (
            quote!(
                struct F {
                    #[form(min_items = 2, default = [Env::A])]
                    a: Vec<Env>,
                }
            ),
            "fewer than `min_items`",
        ),
        (
            quote!(
                struct F {
                    #[serde(flatten)]
                    a: Inner,
                }
            ),
            "`#[serde(flatten)]` is not supported",
        ),
        (
            quote!(
                #[form(title = "x")]
                struct F {
                    a: u8,
                }
            ),
            "on a struct: `#[form(...)]` goes on fields",
        ),
        (
            quote!(
                struct F {
                    #[form(title = "a", title = "b")]
                    a: u8,
                }
            ),
            "duplicate `title` attribute",
        ),
        (
            quote!(
                struct F {
                    a: u8,
                    #[serde(rename = "a")]
                    b: u8,
                }
            ),
            "same property name `a`",
        ),
        (
            quote!(
                struct F {
                    #[form(default = 1)]
                    a: bool,
                }
            ),
            "must be `true` or `false`",
        ),
        (
            quote!(
                struct F {
                    #[form(minimum = 0.5)]
                    a: i8,
                }
            ),
            "expects an integer literal",
        ),
    ];
    for (tokens, expected) in cases {
        let errors = errors(tokens.clone());
        assert_eq!(errors.len(), 1, "{tokens}: {errors:?}");
        assert!(errors[0].contains(expected), "{tokens}: {errors:?}");
    }
}

#[test]
fn expansion_refers_to_runtime_items_by_absolute_paths() {
    let out = derive_form(quote! {
        struct Pick { #[form(default = Env::Prod)] env: Env, tags: Option<Vec<Tag>> }
    })
    .to_string();
    assert!(out.contains(":: mrtr :: form :: Form for Pick"), "{out}");
    assert!(
        out.contains(":: mrtr :: __private :: single_select"),
        "{out}"
    );
    assert!(
        out.contains(":: mrtr :: __private :: multi_select"),
        "{out}"
    );
    assert!(
        out.contains("field `env` of form `Pick` has type `{Self}`"),
        "{out}"
    );
    assert!(out.contains("& [\"env\"]"), "{out}");
    assert!(!out.contains("compile_error"), "{out}");
    // The schema is registered, and the impl says where.
    assert!(
        out.contains(":: mrtr :: __private :: inventory :: submit !"),
        "{out}"
    );
    assert!(
        out.contains("fn __registered ()") && out.contains("Some (& REGISTERED)"),
        "{out}"
    );
}

#[test]
fn expansion_with_errors_still_emits_the_impl() {
    let out = derive_form(quote!(
        struct Bad {
            a: (u8, u8),
        }
    ))
    .to_string();
    assert!(out.contains("compile_error"), "{out}");
    assert!(out.contains(":: mrtr :: form :: Form for Bad"), "{out}");
    assert!(out.contains("unreachable"), "{out}");
    // Nothing is registered whose schema would panic to build.
    assert!(!out.contains("inventory"), "{out}");
}

#[test]
fn choice_values_follow_serde_and_titles_follow_docs() {
    let input = syn::parse2(quote! {
        #[serde(rename_all = "kebab-case")]
        enum Strategy {
            /// Blue/green
            BlueGreen,
            #[form(title = "Canary release")]
            Canary,
            #[serde(rename = "all")]
            AllAtOnce,
            #[serde(skip)]
            Hidden,
        }
    })
    .unwrap();
    let (choices, _, errors) = choice::choice_model(&input);
    assert!(errors.is_none());
    let seen: Vec<_> = choices
        .iter()
        .map(|c| (c.value.as_str(), c.title.as_deref(), c.offered))
        .collect();
    assert_eq!(
        seen,
        [
            ("blue-green", Some("Blue/green"), true),
            ("canary", Some("Canary release"), true),
            ("all", None, true),
            ("hidden", None, false),
        ]
    );
    let out = derive_form_choice(quote!(
        enum E {
            A,
            B,
        }
    ))
    .to_string();
    assert!(out.contains(":: mrtr :: form :: FormChoice for E"), "{out}");
    assert!(out.contains("Self :: A => \"A\""), "{out}");
}

#[test]
fn choice_errors_are_specific() {
    let cases = [
        (
            quote!(
                struct S {
                    a: u8,
                }
            ),
            "`S` is not an enum; a struct with named fields is a form",
        ),
        (
            quote!(
                enum E {
                    A(u8),
                    B,
                }
            ),
            "variant `A` of `E` has fields",
        ),
        (
            quote!(
                enum E {}
            ),
            "`E` offers no options",
        ),
        (
            quote!(
                #[serde(untagged)]
                enum E {
                    A,
                }
            ),
            "`#[serde(untagged)]` is not supported on a form choice",
        ),
        (
            quote!(
                enum E {
                    #[form(label = "x")]
                    A,
                }
            ),
            "unknown `form` attribute `label` on a choice variant",
        ),
        (
            quote!(
                enum E {
                    A,
                    #[serde(rename = "A")]
                    B,
                }
            ),
            "same value `A`",
        ),
    ];
    for (tokens, expected) in cases {
        let input = syn::parse2(tokens.clone()).unwrap();
        let (_, _, errors) = choice::choice_model(&input);
        let errors: Vec<String> = errors.unwrap().into_iter().map(|e| e.to_string()).collect();
        assert_eq!(errors.len(), 1, "{tokens}: {errors:?}");
        assert!(errors[0].contains(expected), "{tokens}: {errors:?}");
    }
}

#[test]
fn crate_option_points_both_derives_at_the_renamed_facade() {
    let form = derive_form(quote! {
        #[form(crate = "crate::deps::facade")]
        struct Pick { env: Env, note: Option<String> }
    })
    .to_string();
    assert!(!form.contains(":: mrtr ::"), "{form}");
    assert!(
        form.contains("crate :: deps :: facade :: form :: Form for Pick"),
        "{form}"
    );
    assert!(!form.contains("compile_error"), "{form}");

    let choice = derive_form_choice(quote! {
        #[form(crate = "::my_mrtr")]
        enum Env { Prod, Staging }
    })
    .to_string();
    assert!(!choice.contains(":: mrtr ::"), "{choice}");
    assert!(choice.contains(":: my_mrtr ::"), "{choice}");
    assert!(!choice.contains("compile_error"), "{choice}");
}

#[test]
fn a_container_takes_only_the_crate_option() {
    let out = derive_form(quote! {
        #[form(crate = 3, title = "x")]
        struct Pick { note: String }
    })
    .to_string();
    assert!(
        out.contains("`crate` takes the path of the `mrtr` crate as a string"),
        "{out}"
    );
    assert!(
        out.contains("the struct itself takes only `crate = \\\"...\\\"`"),
        "{out}"
    );
}
