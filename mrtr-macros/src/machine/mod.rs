//! `#[mrtr::tool]`, `#[mrtr::prompt]` and `#[mrtr::resource]`: five stages, each an
//! ordinary function over `proc_macro2` tokens, run in this order by [`expand_attribute`]:
//!
//! | stage | module | in → out | rejects |
//! | --- | --- | --- | --- |
//! | 1 | [`parse`] | attribute + `fn` item → [`parse::MachineFn`] | signatures a machine cannot have |
//! | 2 | [`check`] | the body | suspensions where no resume point can exist |
//! | 3 | [`lower`] | body → [`cfg::Cfg`] (blocks, suspension sites, variables) | constructs that cannot be split (borrowed loop items kept `mut`, ...) |
//! | 4 | [`analyze`] | [`cfg::Cfg`] → [`analyze::Liveness`] | what a suspension cannot keep: borrows, `Rc`/`Arc` handles, locals not assigned on every path |
//! | 5 | [`expand`] | all of the above → the unit struct, `Machine` impl, state enum, dispatch loop | nothing: by now the input is known to be good |
//!
//! [`cfg`] (the control-flow graph) and [`suspension`] (the syntax of `ask!`, `sample!`,
//! `roots!`, `join!`) are the vocabulary the stages share; what `machine/` shares with
//! `form/` lives in [`crate::internals`]. Every stage records its errors and goes on, so
//! the author sees all problems of a stage at once; a stage only runs when the ones before
//! it found nothing.

pub mod analyze;
pub mod cfg;
pub mod check;
pub(crate) mod exit;
pub mod expand;
pub mod lower;
pub mod parse;
pub mod suspension;

#[cfg(any(test, fuzzing))]
pub mod body_gen;
#[cfg(test)]
pub(crate) mod difftest;
#[cfg(test)]
mod tests;

use proc_macro2::TokenStream;
use quote::ToTokens;

use crate::internals::attr::machine_args;
use crate::internals::crate_path::retarget;
use crate::internals::errors::{Errors, spanned};
pub(crate) use parse::Kind;

/// Expands one attribute use. Never panics: problems become spanned `compile_error!`s next
/// to an inert stub of the item.
pub fn expand_attribute(kind: Kind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let item_fn: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(item_fn) => item_fn,
        Err(_) => {
            let message = format!(
                "#[mrtr::{}] applies to a function, e.g. `async fn deploy(service: String) -> Result<String, ToolError> {{ .. }}`",
                kind.as_str()
            );
            let error = syn::Error::new(spanned(&item), message).to_compile_error();
            return quote::quote!(#error #item);
        }
    };
    let mut errors = Errors::default();
    if item_fn.sig.receiver().is_some() {
        // A method in an `impl` block: a struct cannot be emitted there, so keep the
        // method (with an inert body) and report only the real problem.
        parse::parse_fn(kind, Default::default(), item_fn.clone(), &mut errors);
        let mut method = item_fn;
        *method.block = syn::parse_quote!({ ::core::unreachable!() });
        let error = errors.finish().err().map(|e| e.to_compile_error());
        return quote::quote!(#error #method);
    }
    let args = machine_args(kind, attr, &mut errors);
    let krate = args.krate.clone();
    let expanded = match run_stages(kind, args, item_fn, errors) {
        Staged::Expanded(tokens) => tokens,
        Staged::Refused(function, errors) => with_errors(&function, errors),
    };
    match krate {
        Some(krate) => retarget(expanded, &krate),
        None => expanded,
    }
}

/// What the five stages made of one function.
pub(crate) enum Staged {
    /// A stage refused it: the parsed function (for the stub) and the errors.
    Refused(Box<parse::MachineFn>, Errors),
    /// The expansion.
    Expanded(TokenStream),
}

/// Runs parse → check → lower → analyze → expand on a free function whose attribute
/// arguments are read (a method is reported by [`expand_attribute`] before this); the macro
/// fuzz target drives this same function.
pub(crate) fn run_stages(
    kind: Kind,
    args: parse::MachineArgs,
    item_fn: syn::ItemFn,
    mut errors: Errors,
) -> Staged {
    let body_tokens = item_fn.block.to_token_stream();
    let function = parse::parse_fn(kind, args, item_fn, &mut errors);
    check::check_positions(&function.body, &mut errors);
    if !errors.is_empty() {
        return Staged::Refused(Box::new(function), errors);
    }
    let (cfg, liveness) = lower_and_analyze(&function, &mut errors);
    if !errors.is_empty() {
        return Staged::Refused(Box::new(function), errors);
    }
    let fingerprint = expand::fingerprint::fingerprint(
        kind.as_str(),
        &function.listed_name(),
        function.signature_tokens.clone(),
        body_tokens,
        function
            .args
            .compat
            .as_ref()
            .map(syn::LitStr::value)
            .as_deref(),
    );
    Staged::Expanded(expand::expand(&function, &cfg, &liveness, fingerprint))
}

/// Lowers `function` to its control-flow graph and runs every analysis on it, adding what
/// they refuse (locals that cannot be stored, read before assignment, or jumped over) to
/// `errors`.
pub(crate) fn lower_and_analyze(
    function: &parse::MachineFn,
    errors: &mut Errors,
) -> (cfg::Cfg, analyze::Liveness) {
    let cfg = lower::lower(function, errors);
    let liveness = analyze::analyze(&cfg);
    let reachable = cfg.reachable();
    analyze::check_stored(&cfg, &liveness, &reachable, errors);
    analyze::check_assigned(&cfg, &liveness, errors);
    analyze::check_jumps(&cfg, &liveness, &reachable, errors);
    analyze::check_shadowing(&cfg, &liveness, &reachable, errors);
    (cfg, liveness)
}

fn with_errors(function: &parse::MachineFn, errors: Errors) -> TokenStream {
    let mut out = expand::expand_stub(function);
    if let Err(error) = errors.finish() {
        out.extend(error.to_compile_error());
    }
    out
}
