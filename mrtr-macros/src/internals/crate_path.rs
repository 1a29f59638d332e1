//! The `crate = "..."` option: where the `mrtr` facade is, for users who renamed the
//! dependency (`my_mrtr = { package = "mrtr", .. }`) or re-export it from another crate, as
//! `#[serde(crate = "...")]` and `#[tokio::main(crate = "...")]` allow.
//!
//! Generated code always spells the facade `::mrtr::..`; [`retarget`] rewrites exactly
//! those paths once, at the end of an expansion, so no stage has to carry the path around
//! and the default (no option) costs nothing.

use proc_macro2::{Delimiter, Group, Literal, Spacing, TokenStream, TokenTree};
use quote::ToTokens;
use syn::{Expr, LitStr, Path};

use super::errors::{Errors, spanned};

/// Reads the value of `crate = "path"`: a string literal holding a path such as
/// `"::my_mrtr"` or `"app::deps::mrtr"`. Problems are recorded, with the fix.
pub(crate) fn parse_crate_path(value: &Expr, errors: &mut Errors) -> Option<Path> {
    let Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(literal),
        ..
    }) = value
    else {
        errors.at(
            spanned(value),
            "`crate` takes the path of the `mrtr` crate as a string, e.g. `crate = \"::my_mrtr\"`",
        );
        return None;
    };
    parse_literal(literal, errors)
}

/// [`parse_crate_path`] for a value already known to be a string literal.
pub(crate) fn parse_literal(literal: &LitStr, errors: &mut Errors) -> Option<Path> {
    match literal.parse::<Path>() {
        Ok(path) => Some(path),
        Err(_) => {
            errors.at(
                literal.span(),
                format!(
                    "`crate = \"{}\"` is not a path; give the path of the `mrtr` crate, e.g. `crate = \"::my_mrtr\"`",
                    literal.value()
                ),
            );
            None
        }
    }
}

/// Replaces every absolute `::mrtr` path prefix in `tokens` with `krate`, including the
/// paths our attributes carry in strings (`#[serde(crate = "::mrtr::__private::serde")]`).
/// A `mrtr` segment in the middle of another path (`other::mrtr::x`, `<T as X>::mrtr`) is
/// left alone, and so are string literals outside attributes (the author's own text).
pub(crate) fn retarget(tokens: TokenStream, krate: &Path) -> TokenStream {
    let replacement = krate.to_token_stream();
    let in_strings = replacement.to_string().replace(' ', "");
    rewrite(tokens, &replacement, &in_strings, false)
}

fn rewrite(
    tokens: TokenStream,
    replacement: &TokenStream,
    in_strings: &str,
    in_attribute: bool,
) -> TokenStream {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out: Vec<TokenTree> = Vec::with_capacity(trees.len());
    let mut index = 0;
    while index < trees.len() {
        if !continues_a_path(&out) && is_facade_prefix(&trees[index..]) {
            out.extend(replacement.clone());
            index += 3;
            continue;
        }
        match &trees[index] {
            TokenTree::Group(group) => {
                let is_attribute = group.delimiter() == Delimiter::Bracket
                    && matches!(out.last(), Some(TokenTree::Punct(p)) if p.as_char() == '#');
                let mut rewritten = Group::new(
                    group.delimiter(),
                    rewrite(
                        group.stream(),
                        replacement,
                        in_strings,
                        in_attribute || is_attribute,
                    ),
                );
                rewritten.set_span(group.span());
                out.push(TokenTree::Group(rewritten));
            }
            TokenTree::Literal(literal) if in_attribute => {
                out.push(retarget_string(literal, in_strings));
            }
            other => out.push(other.clone()),
        }
        index += 1;
    }
    out.into_iter().collect()
}

/// A string literal with its absolute `::mrtr::` paths moved to `krate`; any other literal
/// unchanged.
fn retarget_string(literal: &Literal, krate: &str) -> TokenTree {
    let Ok(string) = syn::parse2::<LitStr>(TokenTree::Literal(literal.clone()).into()) else {
        return TokenTree::Literal(literal.clone());
    };
    let text = string.value();
    let mut rewritten = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("::mrtr::") {
        let inside_a_path = rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '>');
        rewritten.push_str(&rest[..at]);
        rewritten.push_str(if inside_a_path { "::mrtr" } else { krate });
        rewritten.push_str("::");
        rest = &rest[at + "::mrtr::".len()..];
    }
    rewritten.push_str(rest);
    let mut out = Literal::string(&rewritten);
    out.set_span(literal.span());
    TokenTree::Literal(out)
}

/// Whether a `::` after the tokens in `before` continues a path (`a::mrtr`) rather than
/// starting one (`impl ::mrtr::X`, `-> ::mrtr::X`, `= ::mrtr::x()`): after an identifier
/// that is not a keyword, after `self`/`super`/`crate`/`Self`, or after the `>` closing a
/// qualified path or generic arguments (but not the `>` of `->` or `=>`).
fn continues_a_path(before: &[TokenTree]) -> bool {
    match before {
        [.., TokenTree::Ident(ident)] => {
            let name = ident.to_string();
            matches!(name.as_str(), "self" | "super" | "crate" | "Self")
                || !KEYWORDS.contains(&name.as_str())
        }
        [.., TokenTree::Punct(first), TokenTree::Punct(last)] if last.as_char() == '>' => {
            !(first.spacing() == Spacing::Joint && matches!(first.as_char(), '-' | '='))
        }
        [.., TokenTree::Punct(last)] => last.as_char() == '>',
        [.., TokenTree::Group(group)] => group.delimiter() == Delimiter::None,
        _ => false,
    }
}

/// Rust's strict and reserved keywords (2024 edition): none of them can be a path segment
/// except the four [`continues_a_path`] names.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try",
];

/// `::` `mrtr` at the start of `trees`.
fn is_facade_prefix(trees: &[TokenTree]) -> bool {
    match trees {
        [
            TokenTree::Punct(first),
            TokenTree::Punct(second),
            TokenTree::Ident(name),
            ..,
        ] => {
            first.as_char() == ':'
                && first.spacing() == Spacing::Joint
                && second.as_char() == ':'
                && name == "mrtr"
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;
    use syn::parse_quote;

    fn retargeted(tokens: TokenStream, krate: Path) -> String {
        retarget(tokens, &krate).to_string()
    }

    #[test]
    fn absolute_facade_paths_move_to_the_given_crate() {
        let tokens = quote! {
            impl ::mrtr::__private::Machine for X {
                fn f() -> ::mrtr::machine::Step { ::mrtr::__private::call(::mrtr::x, [::mrtr::y]) }
            }
            match x { _ => ::mrtr::z }
        };
        assert_eq!(
            retargeted(tokens, parse_quote!(::my_mrtr)),
            quote! {
                impl ::my_mrtr::__private::Machine for X {
                    fn f() -> ::my_mrtr::machine::Step { ::my_mrtr::__private::call(::my_mrtr::x, [::my_mrtr::y]) }
                }
                match x { _ => ::my_mrtr::z }
            }
            .to_string()
        );
    }

    #[test]
    fn a_relative_reexport_path_is_used_as_given() {
        let tokens = quote!(let x: ::mrtr::A = ::mrtr::a(););
        assert_eq!(
            retargeted(tokens, parse_quote!(crate::deps::mrtr)),
            quote!(let x: crate::deps::mrtr::A = crate::deps::mrtr::a();).to_string()
        );
    }

    #[test]
    fn mrtr_segments_inside_other_paths_are_left_alone() {
        let tokens =
            quote!(other::mrtr::x(); <T as Tr>::mrtr; mrtr::y(); ::mrtrx::z(); "::mrtr::x");
        assert_eq!(
            retargeted(tokens.clone(), parse_quote!(::renamed)),
            tokens.to_string()
        );
    }

    #[test]
    fn paths_in_attribute_strings_move_too() {
        let tokens = quote! {
            #[serde(crate = "::mrtr::__private::serde", bound(serialize = "T: ::mrtr::K", x = "a::mrtr::b"))]
            struct S;
        };
        assert_eq!(
            retargeted(tokens, parse_quote!(::my_mrtr)),
            quote! {
                #[serde(crate = "::my_mrtr::__private::serde", bound(serialize = "T: ::my_mrtr::K", x = "a::mrtr::b"))]
                struct S;
            }
            .to_string()
        );
    }

    #[test]
    fn a_value_that_is_not_a_path_string_is_reported_with_the_fix() {
        let mut errors = Errors::default();
        assert!(parse_crate_path(&parse_quote!(my_mrtr), &mut errors).is_none());
        assert!(parse_crate_path(&parse_quote!("not a path"), &mut errors).is_none());
        let path = parse_crate_path(&parse_quote!("::my_mrtr"), &mut errors).unwrap();
        assert_eq!(path.to_token_stream().to_string(), ":: my_mrtr");
        let messages = errors.messages();
        assert_eq!(
            messages,
            [
                "`crate` takes the path of the `mrtr` crate as a string, e.g. `crate = \"::my_mrtr\"`",
                "`crate = \"not a path\"` is not a path; give the path of the `mrtr` crate, e.g. `crate = \"::my_mrtr\"`",
            ]
        );
    }
}
