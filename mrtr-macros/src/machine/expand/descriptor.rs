//! The machine's descriptor (`Machine::descriptor`): the listed tool, prompt or resource
//! with its schema or arguments, the input kinds it may ask for, its fingerprint, and the
//! optional parts (required application state, round policy, task support, the literals a
//! sealed state may name).

use std::collections::BTreeSet;

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::machine::parse::{Kind, MachineFn};
use crate::machine::suspension::KindHint;

/// The descriptor expression: [`base`] with the function's optional parts chained on.
pub(super) fn descriptor(
    function: &MachineFn,
    kinds: &BTreeSet<KindHint>,
    fingerprint: u64,
    literals: &[String],
) -> TokenStream {
    let descriptor = base(function, kinds, fingerprint);
    let requirements = function.states.iter().map(|state| {
        let inner = &state.inner;
        quote!(::mrtr::__private::StateRequirement::of::<#inner>())
    });
    let descriptor = if function.states.is_empty() {
        descriptor
    } else {
        quote!(#descriptor.with_states([#(#requirements),*]))
    };
    let descriptor = match &function.args.replay {
        Some(policy) => {
            quote!(#descriptor.with_replay(::mrtr::__private::ReplayPolicy::#policy))
        }
        None => descriptor,
    };
    let descriptor = match function.args.task {
        Some(required) => {
            let support = if required {
                quote!(::mrtr::__private::TaskSupport::required())
            } else {
                quote!(::mrtr::__private::TaskSupport::optional())
            };
            let support = match &function.args.task_after {
                Some(rounds) => quote!(#support.after_rounds(#rounds)),
                None => support,
            };
            quote!(#descriptor.with_task(#support))
        }
        None => descriptor,
    };
    let descriptor = match &function.args.scopes {
        Some(scopes) if !scopes.is_empty() => {
            quote!(#descriptor.with_scopes([#(#scopes),*]))
        }
        _ => descriptor,
    };
    // Fixed questions are sealed as an index into these (see `MachineDescriptor::literals`).
    if literals.is_empty() {
        descriptor
    } else {
        quote!(#descriptor.with_literals(&[#(#literals),*]))
    }
}

/// The listed item, its input kinds and its fingerprint.
fn base(function: &MachineFn, kinds: &BTreeSet<KindHint>, fingerprint: u64) -> TokenStream {
    let listed = function.listed_name();
    let doc = &function.doc;
    let kinds = kinds.iter();
    let fingerprint = Literal::u64_suffixed(fingerprint);
    let model = quote!(::mrtr::__private::rmcp::model);
    let ret = &function.ret;
    match function.kind {
        Kind::Tool => quote! {
            ::mrtr::__private::MachineDescriptor::tool(
                ::mrtr::__private::with_output_schema(
                    #model::Tool::new(#listed, #doc, ::mrtr::__private::arguments_schema::<__MrtrArgs>()),
                    <#ret as ::mrtr::__private::IntoToolResult>::output_schema(),
                ),
                [#(#kinds),*],
                #fingerprint,
            )
        },
        Kind::Prompt => {
            let arguments = function.params.iter().map(|param| {
                let name = param.ident.to_string();
                let description = &param.doc;
                let optional = matches!(&param.ty, syn::Type::Path(path)
                    if path.path.segments.last().is_some_and(|s| s.ident == "Option"));
                let required = !optional;
                let description = if description.is_empty() {
                    quote!(::core::option::Option::None)
                } else {
                    quote!(::core::option::Option::Some(#description.to_string()))
                };
                quote! {{
                    let mut argument = #model::PromptArgument::new(#name);
                    argument.description = #description;
                    argument.required = ::core::option::Option::Some(#required);
                    argument
                }}
            });
            let description = if doc.is_empty() {
                quote!(::core::option::Option::None::<::std::string::String>)
            } else {
                quote!(::core::option::Option::Some(#doc))
            };
            quote! {
                ::mrtr::__private::MachineDescriptor::prompt(
                    #model::Prompt::new(#listed, #description, ::core::option::Option::Some(::std::vec![#(#arguments),*])),
                    [#(#kinds),*],
                    #fingerprint,
                )
            }
        }
        Kind::Resource => {
            let uri = resource_uri(function);
            let description = (!doc.is_empty()).then(
                || quote!(resource.description = ::core::option::Option::Some(#doc.to_string());),
            );
            let mime = function.args.mime_type.as_ref().map(|mime| {
                quote!(resource.mime_type = ::core::option::Option::Some(#mime.to_string());)
            });
            quote! {{
                let mut resource = #model::Resource::new(#uri, #listed);
                #description
                #mime
                ::mrtr::__private::MachineDescriptor::resource(resource, [#(#kinds),*], #fingerprint)
            }}
        }
    }
}

/// The `uri = ".."` of a `#[mrtr::resource]` (empty when absent; `check` reports that).
pub(super) fn resource_uri(function: &MachineFn) -> String {
    function
        .args
        .uri
        .as_ref()
        .map(|uri| uri.value())
        .unwrap_or_default()
}
