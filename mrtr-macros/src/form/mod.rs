//! `#[derive(Form)]` and `#[derive(FormChoice)]`: parse the item, build and check a schema
//! model, expand it. Each step is a plain function, unit-tested on token streams.
//!
//! | stage | `Form` | `FormChoice` |
//! | --- | --- | --- |
//! | read attributes | [`crate::internals::attr`] (`#[form(..)]`, `#[serde(..)]`, docs) | the same |
//! | classify field types | [`types`] | — |
//! | build and check the model | [`model`] | [`choice::choice_model`] |
//! | generate | [`expand`] | [`choice::expand_choice`] |

mod choice;
mod expand;
mod model;
mod types;

use proc_macro2::TokenStream;

use crate::internals::crate_path::retarget;

/// Expands `#[derive(Form)]`.
pub(crate) fn derive_form(input: TokenStream) -> TokenStream {
    match syn::parse2::<syn::DeriveInput>(input) {
        Ok(input) => {
            let (model, errors) = model::form_model(&input);
            with_crate_path(expand::expand_form(&model, errors), model.krate.as_ref())
        }
        Err(error) => error.to_compile_error(),
    }
}

/// Expands `#[derive(FormChoice)]`.
pub(crate) fn derive_form_choice(input: TokenStream) -> TokenStream {
    match syn::parse2::<syn::DeriveInput>(input) {
        Ok(input) => {
            let (choices, krate, errors) = choice::choice_model(&input);
            with_crate_path(
                choice::expand_choice(&input, &choices, errors),
                krate.as_ref(),
            )
        }
        Err(error) => error.to_compile_error(),
    }
}

/// Points the expansion at a renamed or re-exported `mrtr` (`#[form(crate = "...")]`).
fn with_crate_path(expanded: TokenStream, krate: Option<&syn::Path>) -> TokenStream {
    match krate {
        Some(krate) => retarget(expanded, krate),
        None => expanded,
    }
}

#[cfg(test)]
mod tests;
