//! Stage 1, parsing: the function's signature and attributes become a [`MachineFn`]
//! (the attribute's own arguments are read by [`crate::internals::attr::machine_args`]).
//! Signatures a machine cannot have — generics, `self`, `impl Trait`, borrowed or
//! in-process parameters — are rejected here, each with the rewrite.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{Attribute, FnArg, Ident, ItemFn, LitStr, Pat, ReturnType, Type, Visibility};

pub(crate) use crate::internals::attr::{Kind, MachineArgs};
use crate::internals::doc::doc_lines;
use crate::internals::errors::{Errors, spanned};

/// One argument of the machine (a function parameter other than the context).
pub struct Param {
    /// The binding.
    pub ident: Ident,
    /// Declared `mut`: may change, so it is stored like any local.
    pub mutable: bool,
    /// Its type.
    pub ty: Type,
    /// Doc comment text.
    pub doc: String,
    /// `#[serde(..)]` / `#[schemars(..)]` attributes forwarded to the arguments type.
    pub forwarded: Vec<Attribute>,
}

/// A `State<T>` parameter: injected from the server's registered application state on
/// every round, never an argument, never stored.
pub struct StateParam {
    /// The local it binds (`pool` in `pool: State<Pool>` and in `State(pool): State<Pool>`).
    pub ident: Ident,
    /// `State(pool)`: the local is the inner `T`, not the `State<T>`.
    pub destructured: bool,
    /// `T`.
    pub inner: Type,
    /// The declared `State<T>` type.
    pub ty: Type,
}

/// The parsed function.
pub struct MachineFn {
    /// tool / prompt / resource.
    pub kind: Kind,
    /// Attribute arguments.
    pub args: MachineArgs,
    /// `cfg` and lint-level attributes (docs are in `doc`).
    pub attrs: Vec<Attribute>,
    /// The function's visibility.
    pub vis: Visibility,
    /// The function's name (becomes the struct's name).
    pub ident: Ident,
    /// Doc comment text.
    pub doc: String,
    /// Arguments.
    pub params: Vec<Param>,
    /// The `&RequestCx` parameter's name and type, if any.
    pub cx: Option<(Ident, Type)>,
    /// The `State<T>` parameters, in order.
    pub states: Vec<StateParam>,
    /// The declared return type (`()` when absent).
    pub ret: Type,
    /// The body.
    pub body: syn::Block,
    /// Signature tokens without attributes, for the fingerprint.
    pub signature_tokens: TokenStream,
}

impl MachineFn {
    /// The listed name.
    pub fn listed_name(&self) -> String {
        self.args
            .name
            .as_ref()
            .map(LitStr::value)
            .unwrap_or_else(|| self.ident.to_string())
    }
}

/// `T` when `ty` is `State<T>` (any path ending in `State` with one type argument).
fn state_inner(ty: &Type) -> Option<Type> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    if last.ident != "State" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(syn::GenericArgument::Type(inner)) if args.args.len() == 1 => Some(inner.clone()),
        _ => None,
    }
}

/// Types that hold shared, in-process things: as an argument they would have to come from
/// the client's JSON, which is never what the author meant.
const IN_PROCESS_TYPES: &[&str] = &[
    "Arc", "Rc", "Mutex", "RwLock", "Cell", "RefCell", "OnceLock",
];

fn in_process_type(ty: &Type) -> Option<String> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    let name = last.ident.to_string();
    IN_PROCESS_TYPES.contains(&name.as_str()).then_some(name)
}

/// The first `impl Trait` inside `ty`.
fn impl_trait(ty: &Type) -> Option<&syn::TypeImplTrait> {
    struct Find<'a>(Option<&'a syn::TypeImplTrait>);
    impl<'a> syn::visit::Visit<'a> for Find<'a> {
        fn visit_type_impl_trait(&mut self, node: &'a syn::TypeImplTrait) {
            self.0.get_or_insert(node);
        }
    }
    let mut find = Find(None);
    syn::visit::Visit::visit_type(&mut find, ty);
    find.0
}

const STATE_HINT: &str = "to reach shared state (a database pool, an HTTP client, a config), take it as \
     `pool: State<Pool>` (`mrtr::State`) and register the value on the server builder with `.app_state(pool)`";

fn is_request_cx(ty: &Type) -> bool {
    let Type::Reference(reference) = ty else {
        return false;
    };
    match &*reference.elem {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "RequestCx"),
        _ => false,
    }
}

/// Parses the function. Problems are recorded in `errors`; the result is still usable
/// for an inert stub.
pub fn parse_fn(kind: Kind, args: MachineArgs, item: ItemFn, errors: &mut Errors) -> MachineFn {
    let sig = &item.sig;
    check_signature(sig, errors);
    let (params, states, cx) = parse_params(kind, sig, errors);
    let ret = return_type(sig, errors);
    let signature_tokens = signature_tokens(sig);
    let attrs = machine_attrs(&item, errors);
    let doc = match &args.description {
        Some(description) => description.value(),
        None => doc_lines(&item.attrs),
    };
    MachineFn {
        kind,
        args,
        attrs,
        vis: item.vis.clone(),
        ident: sig.ident.clone(),
        doc,
        params,
        cx,
        states,
        ret,
        body: *item.block,
        signature_tokens,
    }
}

/// Refuses what a machine's signature cannot have: generics, `const`, `unsafe`, an ABI,
/// variadics.
fn check_signature(sig: &syn::Signature, errors: &mut Errors) {
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.at(
            spanned(&sig.generics),
            "an mrtr function cannot be generic: its state and arguments must have concrete types",
        );
    }
    if let Some(constness) = &sig.constness {
        errors.at(constness.span, "an mrtr function cannot be `const`");
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.at(unsafety.span, "an mrtr function cannot be `unsafe`");
    }
    if let Some(abi) = &sig.abi {
        errors.at(spanned(abi), "an mrtr function cannot have an `extern` ABI");
    }
    if let Some(variadic) = &sig.variadic {
        errors.at(spanned(variadic), "an mrtr function cannot be variadic");
    }
}

/// The parameters: arguments decoded from the request, `State<T>` parameters injected from
/// the application state, and the optional `&RequestCx`.
#[allow(clippy::type_complexity)]
fn parse_params(
    kind: Kind,
    sig: &syn::Signature,
    errors: &mut Errors,
) -> (Vec<Param>, Vec<StateParam>, Option<(Ident, Type)>) {
    let mut params = Vec::new();
    let mut states = Vec::new();
    let mut cx = None;
    for input in &sig.inputs {
        let typed = match input {
            FnArg::Receiver(receiver) => {
                errors.at(
                    spanned(receiver),
                    format!("an mrtr function is a free function, so `self` is not available; {STATE_HINT}"),
                );
                continue;
            }
            FnArg::Typed(typed) => typed,
        };
        if let Some(inner) = state_inner(&typed.ty) {
            states.extend(state_param(typed, inner, errors));
            continue;
        }
        if let Some(found) = impl_trait(&typed.ty) {
            errors.at(
                spanned(found),
                "a parameter cannot be `impl Trait`: arguments are decoded from the request's JSON, so they need a concrete type \
                 (e.g. `Vec<String>` instead of `impl IntoIterator<Item = String>`)",
            );
            continue;
        }
        if let Some(name) = in_process_type(&typed.ty) {
            errors.at(
                spanned(&typed.ty),
                format!(
                    "`{name}<..>` cannot be a tool argument: every parameter is decoded from the client's JSON arguments; {STATE_HINT}"
                ),
            );
            continue;
        }
        let Pat::Ident(pat) = &*typed.pat else {
            errors.at(
                spanned(&typed.pat),
                "parameters must be plain names (`service: String`): each one becomes a named argument",
            );
            continue;
        };
        if is_request_cx(&typed.ty) {
            if cx.is_some() {
                errors.at(spanned(typed), "only one `&RequestCx` parameter is allowed");
            }
            cx = Some((pat.ident.clone(), (*typed.ty).clone()));
            continue;
        }
        if let Type::Reference(reference) = &*typed.ty {
            errors.at(
                spanned(reference),
                "parameters must be owned types (e.g. `String`, not `&str`): they are decoded from the request's arguments",
            );
            continue;
        }
        if kind == Kind::Resource {
            errors.at(
                spanned(typed),
                "a resource has a fixed URI and takes no arguments (only an optional `cx: &RequestCx`)",
            );
            continue;
        }
        if pat.by_ref.is_some() || pat.subpat.is_some() {
            errors.at(spanned(pat), "parameters must be plain names");
            continue;
        }
        let forwarded = typed
            .attrs
            .iter()
            .filter(|attr| attr.path().is_ident("serde") || attr.path().is_ident("schemars"))
            .cloned()
            .collect();
        params.push(Param {
            ident: pat.ident.clone(),
            mutable: pat.mutability.is_some(),
            ty: (*typed.ty).clone(),
            doc: doc_lines(&typed.attrs),
            forwarded,
        });
    }
    (params, states, cx)
}

/// A `State<T>` parameter (`pool: State<Pool>` or `State(pool): State<Pool>`), or `None`
/// (with an error) for any other pattern.
fn state_param(typed: &syn::PatType, inner: Type, errors: &mut Errors) -> Option<StateParam> {
    let binding = match &*typed.pat {
        Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
            if let Some(mutability) = pat.mutability {
                errors.at(
                    mutability.span,
                    "a `State<T>` parameter is injected again on every round, so it cannot be `mut`; \
                     change shared state through interior mutability (`Mutex`, atomics, a pool handle)",
                );
            }
            Some((pat.ident.clone(), false))
        }
        Pat::TupleStruct(tuple) if tuple.elems.len() == 1 => match tuple.elems.first() {
            Some(Pat::Ident(pat))
                if pat.by_ref.is_none() && pat.subpat.is_none() && pat.mutability.is_none() =>
            {
                Some((pat.ident.clone(), true))
            }
            _ => None,
        },
        _ => None,
    };
    match binding {
        Some((ident, destructured)) => Some(StateParam {
            ident,
            destructured,
            inner,
            ty: (*typed.ty).clone(),
        }),
        None => {
            errors.at(
                spanned(&typed.pat),
                "a `State<T>` parameter binds a plain name: `pool: State<Pool>` or `State(pool): State<Pool>`",
            );
            None
        }
    }
}

/// The declared return type (`()` when there is none); `impl Trait` is refused.
fn return_type(sig: &syn::Signature, errors: &mut Errors) -> Type {
    let ret: Type = match &sig.output {
        ReturnType::Default => syn::parse_quote!(()),
        ReturnType::Type(_, ty) => (**ty).clone(),
    };
    if let Some(found) = impl_trait(&ret) {
        errors.at(
            spanned(found),
            "the return type cannot be `impl Trait`: name the concrete type (e.g. `Result<String, ToolError>`)",
        );
    }
    ret
}

/// The signature's parts the fingerprint covers: `async`, each parameter's pattern and
/// type, and the return type.
fn signature_tokens(sig: &syn::Signature) -> TokenStream {
    let mut signature_tokens = TokenStream::new();
    signature_tokens.extend(sig.asyncness.to_token_stream());
    for input in &sig.inputs {
        if let FnArg::Typed(typed) = input {
            signature_tokens.extend(typed.pat.to_token_stream());
            signature_tokens.extend(typed.ty.to_token_stream());
        }
    }
    signature_tokens.extend(sig.output.to_token_stream());
    signature_tokens
}

/// The attributes kept for the generated code: `cfg` and lint levels.
fn machine_attrs(item: &ItemFn, errors: &mut Errors) -> Vec<Attribute> {
    let sig = &item.sig;
    // `cfg` applies to everything generated; lint levels apply to the body; anything else
    // (`#[inline]`, `#[tracing::instrument]`, ...) has no meaning on the generated machine.
    let mut attrs = Vec::new();
    for attr in &item.attrs {
        let path = attr.path();
        if path.is_ident("doc") {
            continue;
        }
        let supported = ["cfg", "allow", "expect", "warn", "deny", "forbid"]
            .iter()
            .any(|name| path.is_ident(name));
        if supported {
            attrs.push(attr.clone());
        } else {
            errors.at(
                spanned(attr.path()),
                format!(
                    "this attribute is not supported on an mrtr function (only doc comments, `cfg` and lint levels are); \
                     the function becomes the `{}` struct implementing `Machine`",
                    sig.ident
                ),
            );
        }
    }
    attrs
}
