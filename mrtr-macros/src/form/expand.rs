//! Code generation: the `Form` impl for a checked [`FormModel`].

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::model::{ALLOWED_TYPES, FormModel, Format, Kind, Property};

/// The `impl ::mrtr::form::Form` for a form, which also registers the schema so a pending
/// question travels in `requestState` as a key instead of its JSON. With errors, the impl is
/// still emitted (with a body that is never run, since compilation fails) so that uses of the
/// form raise no follow-on errors.
pub(crate) fn expand_form(model: &FormModel, errors: Option<syn::Error>) -> TokenStream {
    let ident = &model.ident;
    let Some(errors) = errors else {
        let body = schema_body(model);
        return quote! {
            const _: () = {
                static REGISTERED: ::mrtr::__private::RegisteredForm =
                    ::mrtr::__private::RegisteredForm::new(
                        <#ident as ::mrtr::form::Form>::requested_schema,
                    );
                ::mrtr::__private::inventory::submit! {
                    ::mrtr::__private::FormEntry(&REGISTERED)
                }
                #[automatically_derived]
                impl ::mrtr::form::Form for #ident {
                    fn requested_schema() -> ::mrtr::__private::ElicitationSchema {
                        #body
                    }
                    fn __registered() -> ::core::option::Option<
                        &'static ::mrtr::__private::RegisteredForm,
                    > {
                        ::core::option::Option::Some(&REGISTERED)
                    }
                }
            };
        };
    };
    let errors = errors.to_compile_error();
    // Generics are among the errors; the stub names the type with them.
    let (impl_generics, ty_generics, _) = model.generics.split_for_impl();
    let bound = (!model.generics.params.is_empty())
        .then(|| quote!(where Self: ::mrtr::__private::DeserializeOwned));
    quote! {
        #errors
        #[automatically_derived]
        impl #impl_generics ::mrtr::form::Form for #ident #ty_generics #bound {
            fn requested_schema() -> ::mrtr::__private::ElicitationSchema {
                ::core::unreachable!("this form failed to compile")
            }
        }
    }
}

fn schema_body(model: &FormModel) -> TokenStream {
    let form = model.ident.to_string();
    let mut choice_checks = Vec::new();
    let mut properties = Vec::new();
    for (index, property) in model.properties.iter().enumerate() {
        let name = &property.wire_name;
        let schema = property_schema(property, index, &form, &mut choice_checks);
        properties.push(quote!((#name, #schema)));
    }
    let required = model
        .properties
        .iter()
        .filter(|p| p.required)
        .map(|p| &p.wire_name);
    quote! {
        #(#choice_checks)*
        ::mrtr::__private::object(
            ::std::vec![#(#properties),*],
            &[#(#required),*],
        )
    }
}

fn some<T: quote::ToTokens>(value: Option<T>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

/// The schema expression for one property; pushes the choice-check trait of a choice field.
fn property_schema(
    property: &Property,
    index: usize,
    form: &str,
    choice_checks: &mut Vec<TokenStream>,
) -> TokenStream {
    let private = quote!(::mrtr::__private);
    let labels = label_calls(property);
    match &property.kind {
        Kind::String {
            format,
            min_length,
            max_length,
            default,
        } => string_schema(labels, *format, *min_length, *max_length, default.as_ref()),
        Kind::Integer {
            minimum,
            maximum,
            default,
        } => integer_schema(labels, *minimum, *maximum, *default),
        Kind::Number {
            minimum,
            maximum,
            default,
        } => number_schema(labels, *minimum, *maximum, *default),
        Kind::Boolean { default } => {
            let mut calls = labels;
            if let Some(default) = default {
                calls.extend(quote!(.with_default(#default)));
            }
            quote!(#private::PrimitiveSchemaDefinition::Boolean(#private::BooleanSchema::new() #calls))
        }
        Kind::Single { ty, default } => {
            single_schema(property, index, form, ty, default.as_ref(), choice_checks)
        }
        Kind::Multi {
            ty,
            min_items,
            max_items,
            default,
        } => {
            let check = choice_check(property, index, form, ty, true);
            let trait_name = &check.0;
            choice_checks.push(check.1);
            let labels = label_struct(property);
            let default = some(default.as_ref().map(|expr| {
                quote_spanned! {expr.span()=> {
                    let chosen: &[#ty] = &(#expr);
                    chosen.iter().map(<#ty as #trait_name>::wire).collect()
                }}
            }));
            let options = quote_spanned!(ty.span()=> <#ty as #trait_name>::options());
            let min_items = some(*min_items);
            let max_items = some(*max_items);
            quote!(#private::multi_select(#options, #labels, #min_items, #max_items, #default))
        }
    }
}

/// The `.title(..)`/`.description(..)` builder calls of a primitive property.
fn label_calls(property: &Property) -> TokenStream {
    let mut calls = TokenStream::new();
    if let Some(title) = &property.title {
        calls.extend(quote!(.title(#title)));
    }
    if let Some(description) = &property.description {
        calls.extend(quote!(.description(#description)));
    }
    calls
}

/// A string property's `StringSchema`, after its label calls.
fn string_schema(
    mut calls: TokenStream,
    format: Option<Format>,
    min_length: Option<u32>,
    max_length: Option<u32>,
    default: Option<&String>,
) -> TokenStream {
    let private = quote!(::mrtr::__private);
    if let Some(min) = min_length {
        calls.extend(quote!(.min_length(#min)));
    }
    if let Some(max) = max_length {
        calls.extend(quote!(.max_length(#max)));
    }
    if let Some(format) = format {
        let variant = match format {
            Format::Email => quote!(Email),
            Format::Uri => quote!(Uri),
            Format::Date => quote!(Date),
            Format::DateTime => quote!(DateTime),
        };
        calls.extend(quote!(.format(#private::StringFormat::#variant)));
    }
    if let Some(default) = default {
        calls.extend(quote!(.with_default(#default)));
    }
    quote!(#private::PrimitiveSchemaDefinition::String(#private::StringSchema::new() #calls))
}

/// An integer property's `IntegerSchema`, after its label calls.
fn integer_schema(
    mut calls: TokenStream,
    minimum: Option<i64>,
    maximum: Option<i64>,
    default: Option<i64>,
) -> TokenStream {
    let private = quote!(::mrtr::__private);
    if let Some(min) = minimum {
        let min = Literal::i64_suffixed(min);
        calls.extend(quote!(.minimum(#min)));
    }
    if let Some(max) = maximum {
        let max = Literal::i64_suffixed(max);
        calls.extend(quote!(.maximum(#max)));
    }
    if let Some(default) = default {
        let default = Literal::i64_suffixed(default);
        calls.extend(quote!(.with_default(#default)));
    }
    quote!(#private::PrimitiveSchemaDefinition::Integer(#private::IntegerSchema::new() #calls))
}

/// A number property's `NumberSchema`, after its label calls.
fn number_schema(
    mut calls: TokenStream,
    minimum: Option<f64>,
    maximum: Option<f64>,
    default: Option<f64>,
) -> TokenStream {
    let private = quote!(::mrtr::__private);
    if let Some(min) = minimum {
        let min = Literal::f64_suffixed(min);
        calls.extend(quote!(.minimum(#min)));
    }
    if let Some(max) = maximum {
        let max = Literal::f64_suffixed(max);
        calls.extend(quote!(.maximum(#max)));
    }
    if let Some(default) = default {
        let default = Literal::f64_suffixed(default);
        calls.extend(quote!(.with_default(#default)));
    }
    quote!(#private::PrimitiveSchemaDefinition::Number(#private::NumberSchema::new() #calls))
}

/// A single-select property's `single_select(..)` call; pushes its choice-check trait.
fn single_schema(
    property: &Property,
    index: usize,
    form: &str,
    ty: &syn::Type,
    default: Option<&syn::Expr>,
    choice_checks: &mut Vec<TokenStream>,
) -> TokenStream {
    let private = quote!(::mrtr::__private);
    let check = choice_check(property, index, form, ty, false);
    let trait_name = &check.0;
    choice_checks.push(check.1);
    let labels = label_struct(property);
    let default = some(
        default.map(|expr| quote_spanned!(expr.span()=> <#ty as #trait_name>::wire(&(#expr)))),
    );
    let options = quote_spanned!(ty.span()=> <#ty as #trait_name>::options());
    quote!(#private::single_select(#options, #labels, #default))
}

fn label_struct(property: &Property) -> TokenStream {
    let title = some(property.title.as_ref());
    let description = some(property.description.as_ref());
    quote!(::mrtr::__private::Labels { title: #title, description: #description })
}

/// A local trait per choice field: implemented for every `FormChoice`, so a field whose type
/// is not one fails with a message that names the field.
fn choice_check(
    property: &Property,
    index: usize,
    form: &str,
    ty: &syn::Type,
    multi: bool,
) -> (syn::Ident, TokenStream) {
    let trait_name = format_ident!("__FormChoiceField{}", index);
    let field = &property.field;
    let message = if multi {
        format!(
            "field `{field}` of form `{form}` is a multi-select over `{{Self}}`, which is not a \
             form choice"
        )
    } else {
        format!(
            "field `{field}` of form `{form}` has type `{{Self}}`, which is neither a primitive \
             nor a form choice"
        )
    };
    let note = format!(
        "{ALLOWED_TYPES}. The derive recognises primitives by name, so any other type (even an \
         alias of a primitive) is read as a choice enum: derive `mrtr::FormChoice` on `{{Self}}` \
         if it is a fieldless enum, or write the primitive type by name"
    );
    let tokens = quote_spanned! {ty.span()=>
        #[diagnostic::on_unimplemented(message = #message, label = "not allowed in a form", note = #note)]
        trait #trait_name {
            fn options() -> &'static [::mrtr::form::ChoiceOption];
            #[allow(dead_code)] // used only by a `default`
            fn wire(&self) -> &'static str;
        }
        impl<T: ::mrtr::form::FormChoice> #trait_name for T {
            fn options() -> &'static [::mrtr::form::ChoiceOption] {
                <T as ::mrtr::form::FormChoice>::OPTIONS
            }
            fn wire(&self) -> &'static str {
                ::mrtr::form::FormChoice::value(self)
            }
        }
    };
    (trait_name, tokens)
}
