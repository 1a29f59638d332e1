//! Every attribute the macros read, in one place: the arguments of `#[mrtr::tool(..)]`,
//! `#[mrtr::prompt(..)]` and `#[mrtr::resource(..)]`; `#[form(..)]` on form fields and choice
//! variants; and the serde attributes that change property names or which fields are
//! required. A new option (for every macro or one of them) is added here.
//!
//! Unknown keys, repeated keys and values of the wrong shape are spanned errors recorded in
//! [`Errors`]; serde's own attributes are read leniently and left for serde to judge.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, Ident, LitStr, Meta, Token};

use super::case::RenameRule;
use super::crate_path::{parse_crate_path, parse_literal};
use super::errors::{Errors, spanned};

/// Which attribute macro is being expanded: decides the MCP method and which arguments
/// it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `#[mrtr::tool]`
    Tool,
    /// `#[mrtr::prompt]`
    Prompt,
    /// `#[mrtr::resource]`
    Resource,
}

impl Kind {
    /// The attribute's name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
        }
    }
}

/// The arguments of `#[mrtr::tool(..)]` and its siblings: `name = "..."`,
/// `compat = "..."`, `description = "..."`, `replay = "..."`, `crate = "..."`, for tools
/// `task = "..."` and `task_after = N`, and for resources `uri = "..."` and
/// `mime_type = "..."`.
#[derive(Debug, Default)]
pub(crate) struct MachineArgs {
    /// Listed name (default: the function name).
    pub(crate) name: Option<LitStr>,
    /// Author-declared layout-compatibility tag.
    pub(crate) compat: Option<LitStr>,
    /// Resource URI.
    pub(crate) uri: Option<LitStr>,
    /// Resource MIME type.
    pub(crate) mime_type: Option<LitStr>,
    /// Description overriding the doc comment.
    pub(crate) description: Option<LitStr>,
    /// Where the `mrtr` facade is when it is renamed or re-exported (`crate = "..."`).
    pub(crate) krate: Option<syn::Path>,
    /// How the round ledger protects the machine's rounds against replays
    /// (`replay = "at_most_once"`): the `ReplayPolicy` variant's name.
    pub(crate) replay: Option<Ident>,
    /// Whether the tool may run as a task (`task = "optional"` / `"required"`): whether
    /// it is required.
    pub(crate) task: Option<bool>,
    /// How many rounds are MRTR rounds before the task is created (`task_after = N`).
    pub(crate) task_after: Option<syn::LitInt>,
    /// The OAuth scopes a request's token must grant (`scopes = ["deploy"]`, tools only).
    pub(crate) scopes: Option<Vec<LitStr>>,
    /// Keys written under their old, deprecated names, as the user wrote them.
    pub(crate) deprecated: Vec<DeprecatedKey>,
}

/// A key written under its old name: still accepted for one release, with a deprecation
/// warning at the key.
#[derive(Debug)]
pub(crate) struct DeprecatedKey {
    /// The old key, with the user's span.
    pub(crate) key: Ident,
    /// The deprecation note: what to write instead.
    pub(crate) note: &'static str,
}

/// Renamed keys: the old name, the new one, and the deprecation note an old use gets.
const RENAMED_KEYS: [(&str, &str, &str); 2] = [
    (
        "rounds",
        "replay",
        "`rounds` is renamed: use `replay = \"...\"` instead",
    ),
    (
        "mrtr_rounds",
        "task_after",
        "`mrtr_rounds` is renamed: use `task_after = N` instead",
    ),
];

/// The values `replay = "..."` takes, and the `ReplayPolicy` variant each names.
pub(crate) const ROUND_POLICIES: [(&str, &str); 3] = [
    ("rerun_after_lease", "RerunAfterLease"),
    ("at_most_once", "AtMostOnce"),
    ("unprotected", "Unprotected"),
];

/// Parses the arguments of a `#[mrtr::<kind>(..)]` attribute. Problems are recorded in
/// `errors`; the arguments that did parse are returned either way.
pub(crate) fn machine_args(kind: Kind, tokens: TokenStream, errors: &mut Errors) -> MachineArgs {
    let mut args = MachineArgs::default();
    let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(metas) => metas,
        Err(error) => {
            errors.push(error);
            return args;
        }
    };
    for meta in metas {
        let Meta::NameValue(pair) = &meta else {
            errors.at(
                spanned(meta.path()),
                format!(
                    "expected `key = \"value\"` in #[mrtr::{}(..)]",
                    kind.as_str()
                ),
            );
            continue;
        };
        let written = pair
            .path
            .get_ident()
            .map(Ident::to_string)
            .unwrap_or_default();
        let key = match RENAMED_KEYS.iter().find(|(old, _, _)| *old == written) {
            Some((_, new, note)) => {
                if let Some(ident) = pair.path.get_ident() {
                    args.deprecated.push(DeprecatedKey {
                        key: ident.clone(),
                        note,
                    });
                }
                new.to_string()
            }
            None => written.clone(),
        };
        let key = Key {
            name: &key,
            written: &written,
        };
        machine_arg(kind, pair, key, &mut args, errors);
    }
    check_machine_args(kind, &args, errors);
    args
}

/// A key of a machine attribute: its current name, and the name as written (an old name of
/// a renamed key, or the same).
#[derive(Clone, Copy)]
struct Key<'k> {
    name: &'k str,
    written: &'k str,
}

impl Key<'_> {
    /// "`key` is given twice", naming the old name when that is what was written.
    fn twice(self) -> String {
        if self.name == self.written {
            format!("`{}` is given twice", self.name)
        } else {
            format!(
                "`{}` is given twice (`{}` is its old name)",
                self.name, self.written
            )
        }
    }
}

/// Reads one `key = value` into `args`.
fn machine_arg(
    kind: Kind,
    pair: &syn::MetaNameValue,
    key: Key,
    args: &mut MachineArgs,
    errors: &mut Errors,
) {
    if key.name == "task_after" {
        return task_after_arg(kind, pair, key, args, errors);
    }
    if key.name == "scopes" {
        return match kind {
            Kind::Tool => scopes_arg(pair, key, args, errors),
            _ => unknown_arg(kind, &pair.path, key, errors),
        };
    }
    let value = match &pair.value {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(lit),
            ..
        }) => lit.clone(),
        other => {
            let written = key.written;
            errors.at(
                spanned(other),
                format!("`{written}` takes a string literal, e.g. `{written} = \"...\"`"),
            );
            return;
        }
    };
    let slot = match (key.name, kind) {
        ("crate", _) => {
            if args.krate.is_some() {
                errors.at(spanned(&pair.path), key.twice());
            }
            args.krate = parse_literal(&value, errors).or(args.krate.take());
            return;
        }
        ("replay", _) => return replay_arg(&pair.path, &value, key, args, errors),
        ("task", Kind::Tool) => return task_arg(&pair.path, &value, key, args, errors),
        ("name", _) => &mut args.name,
        ("compat", _) => &mut args.compat,
        ("description", _) => &mut args.description,
        ("uri", Kind::Resource) => &mut args.uri,
        ("mime_type", Kind::Resource) => &mut args.mime_type,
        _ => return unknown_arg(kind, &pair.path, key, errors),
    };
    if slot.is_some() {
        errors.at(spanned(&pair.path), key.twice());
    }
    *slot = Some(value);
}

/// `task_after = N` (tools only): a number of rounds.
fn task_after_arg(
    kind: Kind,
    pair: &syn::MetaNameValue,
    key: Key,
    args: &mut MachineArgs,
    errors: &mut Errors,
) {
    let written = key.written;
    if kind != Kind::Tool {
        errors.at(
            spanned(&pair.path),
            format!(
                "`{written}` is for tools that run as tasks; #[mrtr::{}] cannot",
                kind.as_str()
            ),
        );
        return;
    }
    if args.task_after.is_some() {
        errors.at(spanned(&pair.path), key.twice());
    }
    match &pair.value {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(count),
            ..
        }) if count.base10_parse::<u32>().is_ok() => args.task_after = Some(count.clone()),
        other => errors.at(
            spanned(other),
            format!("`{written}` takes a number of rounds, e.g. `task_after = 1`"),
        ),
    }
}

/// `scopes = ["deploy", "read"]` (tools only): an array of non-empty string literals
/// without spaces (each one OAuth scope).
fn scopes_arg(pair: &syn::MetaNameValue, key: Key, args: &mut MachineArgs, errors: &mut Errors) {
    let written = key.written;
    if args.scopes.is_some() {
        errors.at(spanned(&pair.path), key.twice());
    }
    let hint =
        format!("`{written}` takes an array of string literals, e.g. `{written} = [\"deploy\"]`");
    let Expr::Array(array) = &pair.value else {
        errors.at(spanned(&pair.value), hint);
        return;
    };
    let mut scopes = Vec::new();
    for element in &array.elems {
        match element {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(scope),
                ..
            }) => {
                let value = scope.value();
                // RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
                let valid = !value.is_empty()
                    && value.bytes().all(|b| {
                        b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b)
                    });
                if valid {
                    scopes.push(scope.clone());
                } else {
                    errors.at(
                        spanned(scope),
                        format!("\"{value}\" is not an OAuth scope: one non-empty word of printable ASCII without spaces, quotes or backslashes"),
                    );
                }
            }
            other => errors.at(spanned(other), hint.clone()),
        }
    }
    args.scopes = Some(scopes);
}

/// `replay = "..."`: one of [`ROUND_POLICIES`].
fn replay_arg(
    path: &syn::Path,
    value: &LitStr,
    key: Key,
    args: &mut MachineArgs,
    errors: &mut Errors,
) {
    if args.replay.is_some() {
        errors.at(spanned(path), key.twice());
    }
    match ROUND_POLICIES
        .iter()
        .find(|(name, _)| value.value() == *name)
    {
        Some((_, variant)) => args.replay = Some(Ident::new(variant, value.span())),
        None => errors.at(
            spanned(value),
            format!(
                "unknown round policy \"{}\"; expected one of {}",
                value.value(),
                ROUND_POLICIES
                    .iter()
                    .map(|(name, _)| format!("\"{name}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
    }
}

/// `task = "optional"` or `task = "required"` (tools only).
fn task_arg(
    path: &syn::Path,
    value: &LitStr,
    key: Key,
    args: &mut MachineArgs,
    errors: &mut Errors,
) {
    if args.task.is_some() {
        errors.at(spanned(path), key.twice());
    }
    match value.value().as_str() {
        "optional" => args.task = Some(false),
        "required" => args.task = Some(true),
        other => errors.at(
            spanned(value),
            format!("unknown task support \"{other}\"; expected \"optional\" or \"required\""),
        ),
    }
}

/// A key this kind of attribute does not take: the error lists the ones it does.
fn unknown_arg(kind: Kind, path: &syn::Path, key: Key, errors: &mut Errors) {
    let allowed = match kind {
        Kind::Resource => "`uri`, `name`, `mime_type`, `description`, `compat`, `replay`, `crate`",
        Kind::Tool => {
            "`name`, `description`, `compat`, `replay`, `task`, `task_after`, `scopes`, `crate`"
        }
        Kind::Prompt => "`name`, `description`, `compat`, `replay`, `crate`",
    };
    errors.at(
        spanned(path),
        format!(
            "unknown argument `{}` for #[mrtr::{}]; expected one of {allowed}",
            key.written,
            kind.as_str()
        ),
    );
}

/// What the arguments need together: `task_after` needs `task`; a resource needs its URI.
fn check_machine_args(kind: Kind, args: &MachineArgs, errors: &mut Errors) {
    if let (Some(rounds), None) = (&args.task_after, args.task) {
        let written = match args.deprecated.iter().any(|old| old.key == "mrtr_rounds") {
            true => "mrtr_rounds",
            false => "task_after",
        };
        errors.at(
            rounds.span(),
            format!(
                "`{written}` counts the MRTR rounds before a task: add `task = \"optional\"` or `task = \"required\"`"
            ),
        );
    }
    if kind == Kind::Resource && args.uri.is_none() {
        errors.at(
            Span::call_site(),
            "#[mrtr::resource] needs the resource's URI: #[mrtr::resource(uri = \"app://...\")]",
        );
    }
}

/// For each key written under its old name, a use of a `#[deprecated]` item spanned at that
/// key: stable Rust has no other way for a proc macro to warn. Inside an anonymous `const`,
/// so nothing is added to the user's scope; `attrs` (the function's `cfg` and lint levels)
/// apply to it, so `#[allow(deprecated)]` on the function silences it.
pub(crate) fn deprecations(args: &MachineArgs, attrs: &[Attribute]) -> TokenStream {
    let attrs = attrs.iter().filter(|attr| !attr.path().is_ident("expect"));
    let uses = args.deprecated.iter().map(|old| {
        let ident = &old.key;
        let note = old.note;
        let used = quote::quote_spanned!(ident.span()=> const _: () = #ident;);
        quote::quote! {
            #[deprecated(note = #note)]
            #[allow(non_upper_case_globals)]
            const #ident: () = ();
            #used
        }
    });
    if args.deprecated.is_empty() {
        return TokenStream::new();
    }
    quote::quote! {
        #(#attrs)*
        const _: () = {
            #(#uses)*
        };
    }
}

/// One `key = value` inside `#[form(...)]`.
pub(crate) struct FormArg {
    pub(crate) key: Ident,
    pub(crate) value: Expr,
}

/// Every `key = value` of every `#[form(...)]`; duplicates and malformed entries are errors.
pub(crate) fn form_args(attrs: &[Attribute], errors: &mut Errors) -> Vec<FormArg> {
    let mut args: Vec<FormArg> = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("form")) {
        let parsed = attr.parse_nested_meta(|meta| {
            let Some(key) = meta.path.get_ident().cloned() else {
                return Err(meta.error("expected a `form` attribute key such as `title`"));
            };
            if !meta.input.peek(Token![=]) {
                return Err(meta.error(format_args!("`{key}` needs a value: `{key} = ...`")));
            }
            let value: Expr = meta.value()?.parse()?;
            if args.iter().any(|a| a.key == key) {
                errors.at(key.span(), format_args!("duplicate `{key}` attribute"));
            } else {
                args.push(FormArg { key, value });
            }
            Ok(())
        });
        if let Err(error) = parsed {
            errors.push(error);
        }
    }
    args
}

/// A derive's container-level `#[form(..)]` arguments, split into the `crate = "..."` path
/// (checked, problems recorded) and the other arguments, which a container does not take.
pub(crate) fn container_form_args(
    attrs: &[Attribute],
    errors: &mut Errors,
) -> (Option<syn::Path>, Vec<FormArg>) {
    let mut krate = None;
    let mut others = Vec::new();
    for arg in form_args(attrs, errors) {
        if arg.key == "crate" {
            krate = parse_crate_path(&arg.value, errors);
        } else {
            others.push(arg);
        }
    }
    (krate, others)
}

/// The serde attributes that decide a property's wire name and whether it is required.
#[derive(Default)]
pub(crate) struct SerdeAttrs {
    /// `rename` (or `rename(deserialize = ..)`).
    pub(crate) rename: Option<String>,
    /// `rename_all` (or its `deserialize` half).
    pub(crate) rename_all: Option<RenameRule>,
    /// `default`: a missing field deserializes anyway.
    pub(crate) default: bool,
    /// `skip` / `skip_deserializing`: never read from the content.
    pub(crate) skip: bool,
    /// `other`: the catch-all variant.
    pub(crate) other: bool,
    /// `flatten`, `tag`, `untagged`: shapes a flat form cannot express.
    pub(crate) unsupported: Option<Ident>,
}

/// Reads `#[serde(...)]` leniently: keys we do not need are skipped, and malformed input is
/// left for serde's own derive to report.
pub(crate) fn serde_attrs(attrs: &[Attribute]) -> SerdeAttrs {
    let mut out = SerdeAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(Ident::to_string)
                .unwrap_or_default();
            match key.as_str() {
                "rename" => out.rename = deserialize_name(&meta)?.or(out.rename.take()),
                "rename_all" => {
                    if let Some(rule) = deserialize_name(&meta)? {
                        out.rename_all = RenameRule::parse(&rule);
                    }
                }
                "default" => {
                    out.default = true;
                    skip_value(&meta)?;
                }
                "skip" | "skip_deserializing" => out.skip = true,
                "other" => out.other = true,
                "flatten" | "tag" | "untagged" | "content" => {
                    out.unsupported = meta.path.get_ident().cloned();
                    skip_value(&meta)?;
                }
                _ => skip_value(&meta)?,
            }
            Ok(())
        });
    }
    out
}

/// `= "name"` or `(deserialize = "name", serialize = "..")`: the name used when deserializing.
fn deserialize_name(meta: &ParseNestedMeta) -> syn::Result<Option<String>> {
    if meta.input.peek(Token![=]) {
        let name: LitStr = meta.value()?.parse()?;
        return Ok(Some(name.value()));
    }
    let mut name = None;
    meta.parse_nested_meta(|inner| {
        let value: LitStr = inner.value()?.parse()?;
        if inner.path.is_ident("deserialize") {
            name = Some(value.value());
        }
        Ok(())
    })?;
    Ok(name)
}

fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_value(&inner))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn machine_args_report_every_problem_at_once() {
        let mut errors = Errors::default();
        let args = machine_args(
            Kind::Tool,
            quote::quote!(name = "x", uri = "a://b", compat = 3, flag, name = "y"),
            &mut errors,
        );
        assert_eq!(args.name.unwrap().value(), "y");
        let messages = errors.messages();
        assert_eq!(
            messages,
            [
                "unknown argument `uri` for #[mrtr::tool]; expected one of `name`, `description`, `compat`, `replay`, `task`, `task_after`, `scopes`, `crate`",
                "`compat` takes a string literal, e.g. `compat = \"...\"`",
                "expected `key = \"value\"` in #[mrtr::tool(..)]",
                "`name` is given twice",
            ]
        );
    }

    #[test]
    fn a_resource_needs_its_uri() {
        let mut errors = Errors::default();
        let args = machine_args(
            Kind::Resource,
            quote::quote!(mime_type = "text/plain"),
            &mut errors,
        );
        assert_eq!(args.mime_type.unwrap().value(), "text/plain");
        assert!(
            errors
                .into_error()
                .unwrap()
                .to_string()
                .contains("needs the resource's URI")
        );
    }

    #[test]
    fn serde_attrs_take_the_deserialize_names() {
        let attrs: Vec<Attribute> = vec![
            parse_quote!(#[serde(rename(serialize = "out", deserialize = "in"), default = "d")]),
            parse_quote!(#[serde(rename_all = "camelCase", alias = "x", with = "m")]),
        ];
        let serde = serde_attrs(&attrs);
        assert_eq!(serde.rename.as_deref(), Some("in"));
        assert_eq!(serde.rename_all, Some(RenameRule::Camel));
        assert!(serde.default && !serde.skip);
    }

    #[test]
    fn serde_attrs_flag_shapes_a_form_cannot_express() {
        let attrs: Vec<Attribute> = vec![parse_quote!(#[serde(flatten)])];
        assert_eq!(serde_attrs(&attrs).unsupported.unwrap(), "flatten");
        let attrs: Vec<Attribute> = vec![parse_quote!(#[serde(skip_deserializing)])];
        assert!(serde_attrs(&attrs).skip);
    }

    #[test]
    fn form_args_reports_duplicates_and_bare_keys() {
        let attrs: Vec<Attribute> = vec![
            parse_quote!(#[form(title = "A", title = "B")]),
            parse_quote!(#[form(flag)]),
        ];
        let mut errors = Errors::default();
        let args = form_args(&attrs, &mut errors);
        assert_eq!(args.len(), 1);
        let message = errors.messages();
        assert_eq!(
            message,
            [
                "duplicate `title` attribute",
                "`flag` needs a value: `flag = ...`"
            ]
        );
    }
}
