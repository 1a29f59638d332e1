//! `#[derive(FormChoice)]`: a fieldless enum as the options of a single or multi-select.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields, Ident, Variant};

use crate::internals::attr::{SerdeAttrs, container_form_args, form_args, serde_attrs};
use crate::internals::doc::doc_paragraphs;
use crate::internals::errors::Errors;

/// One option: the variant and what the client sees and sends.
pub(crate) struct ChoiceModel {
    pub(crate) variant: Ident,
    /// The string serde deserializes into this variant.
    pub(crate) value: String,
    pub(crate) title: Option<String>,
    /// `#[serde(skip)]`/`other` variants are not offered.
    pub(crate) offered: bool,
}

/// Reads a `#[derive(FormChoice)]` input; every problem is reported at once. Also returns
/// the container's `#[form(crate = "...")]` path.
pub(crate) fn choice_model(
    input: &DeriveInput,
) -> (Vec<ChoiceModel>, Option<syn::Path>, Option<syn::Error>) {
    let mut errors = Errors::default();
    let name = &input.ident;
    let Data::Enum(data) = &input.data else {
        let hint = match &input.data {
            Data::Struct(_) => "; a struct with named fields is a form: `#[derive(Form)]`",
            _ => "",
        };
        errors.at(
            name.span(),
            format_args!(
                "`#[derive(FormChoice)]` needs a fieldless enum (one variant per option), but \
                 `{name}` is not an enum{hint}"
            ),
        );
        return (Vec::new(), None, errors.into_error());
    };
    let (krate, container) = check_container(input, &mut errors);
    let mut choices = Vec::new();
    for variant in &data.variants {
        if let Some(choice) = variant_choice(name, variant, &container, &mut errors) {
            choices.push(choice);
        }
    }
    check_offered(name, &choices, &mut errors);
    (choices, krate, errors.into_error())
}

/// Checks the enum's generics and container attributes; returns its `crate` path and its
/// serde attributes.
fn check_container(input: &DeriveInput, errors: &mut Errors) -> (Option<syn::Path>, SerdeAttrs) {
    if !input.generics.params.is_empty() {
        errors.spanned(
            &input.generics,
            "`#[derive(FormChoice)]` does not support generic parameters",
        );
    }
    let (krate, container_args) = container_form_args(&input.attrs, errors);
    for arg in container_args {
        errors.at(
            arg.key.span(),
            format_args!(
                "unknown `form` attribute `{}` on a choice enum: `#[form(title = \"...\")]` goes \
                 on variants; the enum itself takes only `crate = \"...\"`",
                arg.key
            ),
        );
    }
    let container = serde_attrs(&input.attrs);
    if let Some(key) = &container.unsupported {
        errors.at(
            key.span(),
            format_args!(
                "`#[serde({key})]` is not supported on a form choice: its variants must \
                 deserialize from plain strings"
            ),
        );
    }
    (krate, container)
}

/// Reads one variant as an option; `None` (with an error) when it has fields.
fn variant_choice(
    name: &Ident,
    variant: &Variant,
    container: &SerdeAttrs,
    errors: &mut Errors,
) -> Option<ChoiceModel> {
    if !matches!(variant.fields, Fields::Unit) {
        errors.spanned(
            &variant.fields,
            format_args!(
                "variant `{}` of `{name}` has fields; a form choice offers plain options, so \
                 every variant must be fieldless",
                variant.ident
            ),
        );
        return None;
    }
    let serde = serde_attrs(&variant.attrs);
    let title = variant_title(variant, errors);
    let value = serde
        .rename
        .clone()
        .or_else(|| {
            container
                .rename_all
                .map(|rule| rule.variant(&variant.ident.to_string()))
        })
        .unwrap_or_else(|| variant.ident.to_string());
    Some(ChoiceModel {
        variant: variant.ident.clone(),
        value,
        title,
        offered: !(serde.skip || serde.other),
    })
}

/// A variant's title: its doc comment, overridden by `#[form(title = "...")]`.
fn variant_title(variant: &Variant, errors: &mut Errors) -> Option<String> {
    let mut title = doc_paragraphs(&variant.attrs);
    for arg in form_args(&variant.attrs, errors) {
        if arg.key != "title" {
            errors.at(
                arg.key.span(),
                format_args!(
                    "unknown `form` attribute `{}` on a choice variant; expected `title`",
                    arg.key
                ),
            );
            continue;
        }
        match &arg.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) => title = Some(text.value()),
            other => errors.spanned(
                other,
                "`title` expects a string literal, e.g. `title = \"Production\"`",
            ),
        }
    }
    title
}

/// Reports an enum with no offered option, or two offered options with the same value.
fn check_offered(name: &Ident, choices: &[ChoiceModel], errors: &mut Errors) {
    let offered: Vec<&ChoiceModel> = choices.iter().filter(|c| c.offered).collect();
    if offered.is_empty() && errors.is_empty() {
        errors.at(
            name.span(),
            format_args!("`{name}` offers no options: a form choice needs at least one variant"),
        );
    }
    for (i, choice) in offered.iter().enumerate() {
        if offered[..i].iter().any(|c| c.value == choice.value) {
            errors.at(
                choice.variant.span(),
                format_args!(
                    "variant `{}` has the same value `{}` as an earlier variant",
                    choice.variant, choice.value
                ),
            );
        }
    }
}

/// The `FormChoice` impl. With errors, the impl is still emitted so uses raise nothing more.
pub(crate) fn expand_choice(
    input: &DeriveInput,
    choices: &[ChoiceModel],
    errors: Option<syn::Error>,
) -> TokenStream {
    let name = &input.ident;
    let options = choices.iter().filter(|c| c.offered).map(|c| {
        let value = &c.value;
        let title = match &c.title {
            Some(title) => quote!(::core::option::Option::Some(#title)),
            None => quote!(::core::option::Option::None),
        };
        quote!(::mrtr::form::ChoiceOption { value: #value, title: #title })
    });
    let value = if errors.is_some() || !matches!(input.data, Data::Enum(_)) {
        quote!(::core::unreachable!("this choice failed to compile"))
    } else {
        let arms = choices.iter().map(|c| {
            let variant = &c.variant;
            let value = &c.value;
            quote!(Self::#variant => #value)
        });
        quote!(match self { #(#arms,)* })
    };
    let errors = errors.map(|e| e.to_compile_error());
    let (impl_generics, ty_generics, _) = input.generics.split_for_impl();
    let bound = (!input.generics.params.is_empty())
        .then(|| quote!(where Self: ::mrtr::__private::DeserializeOwned));
    quote! {
        #errors
        #[automatically_derived]
        impl #impl_generics ::mrtr::form::FormChoice for #name #ty_generics #bound {
            const OPTIONS: &'static [::mrtr::form::ChoiceOption] = &[#(#options),*];
            fn value(&self) -> &'static str {
                #value
            }
        }
    }
}
