//! Reading the attributes a form cares about: doc comments, `#[form(...)]`, and the serde
//! attributes that change property names or which fields are required.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Expr, ExprLit, Ident, Lit, LitStr, Token};

use super::case::RenameRule;

/// Collects every error so a single expansion reports all of them.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub(crate) fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    /// An error covering all of `tokens` (a whole type or expression, not just its first token).
    pub(crate) fn spanned(
        &mut self,
        tokens: impl quote::ToTokens,
        message: impl std::fmt::Display,
    ) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    pub(crate) fn into_error(self) -> Option<syn::Error> {
        self.0
    }
}

/// The text of `///` comments: lines of a paragraph joined by spaces, paragraphs by a blank line.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let Expr::Lit(ExprLit {
                lit: Lit::Str(text),
                ..
            }) = &nv.value
        {
            lines.extend(text.value().split('\n').map(|l| l.trim().to_owned()));
        }
    }
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in lines {
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(&line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    (!paragraphs.is_empty()).then(|| paragraphs.join("\n\n"))
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
    fn doc_text_joins_lines_and_keeps_paragraphs() {
        let attrs: Vec<Attribute> = vec![
            parse_quote!(#[doc = " Apply the plan"]),
            parse_quote!(#[doc = " now?"]),
            parse_quote!(#[doc = ""]),
            parse_quote!(#[doc = " Second."]),
        ];
        assert_eq!(doc_text(&attrs).unwrap(), "Apply the plan now?\n\nSecond.");
        assert_eq!(doc_text(&[]), None);
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
        let message = errors
            .into_error()
            .unwrap()
            .into_iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>();
        assert_eq!(
            message,
            [
                "duplicate `title` attribute",
                "`flag` needs a value: `flag = ...`"
            ]
        );
    }
}
