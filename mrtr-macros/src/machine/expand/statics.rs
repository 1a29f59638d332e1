//! The `const` and `static` items a body names, whose `&'static str` values a state may
//! keep as it keeps the body's own string literals: `let env = ENVS[i];` stored across a
//! suspension decodes again only if `ENVS`'s strings are in the table of strings the state
//! may hold. The macro cannot see the items' values, so the expansion collects their
//! strings when the machine first runs (`__private::Probe`: nothing for a type that holds
//! no `&'static str`).

use std::collections::BTreeSet;

use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Expr, ExprPath, Token};

/// Whether `name` is written like a `const` or `static` item: upper case, digits and
/// underscores, with at least two letters (so a type parameter `T` is not one).
fn item_like(name: &str) -> bool {
    name.chars().filter(|c| c.is_ascii_uppercase()).count() >= 2
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

struct Named<'a> {
    /// Names that are not items outside the body: its locals, its own items.
    skip: &'a BTreeSet<String>,
    found: Vec<syn::Path>,
}

impl<'ast> Visit<'ast> for Named<'_> {
    fn visit_expr_path(&mut self, expr: &'ast ExprPath) {
        let path = &expr.path;
        let plain = expr.qself.is_none()
            && path
                .segments
                .iter()
                .all(|segment| segment.arguments.is_none());
        if let (true, Some(first), Some(last)) =
            (plain, path.segments.first(), path.segments.last())
            && item_like(&last.ident.to_string())
            && !self.skip.contains(&first.ident.to_string())
            && !self.found.contains(path)
        {
            self.found.push(path.clone());
        }
        visit::visit_expr_path(self, expr);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // `format!("{}", ENVS[0])`, `vec![..]`: arguments that parse as expressions.
        let parser = Punctuated::<Expr, Token![,]>::parse_terminated;
        if let Ok(args) = mac.parse_body_with(parser) {
            for arg in &args {
                self.visit_expr(arg);
            }
        }
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {
        // An item of the body: its literals are the body's own.
    }
}

/// The body's items, by name (their strings are already the body's literals, and a nested
/// one is not in scope where the table is built).
struct Items(BTreeSet<String>);

impl<'ast> Visit<'ast> for Items {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let ident = match item {
            syn::Item::Const(item) => Some(&item.ident),
            syn::Item::Static(item) => Some(&item.ident),
            syn::Item::Struct(item) => Some(&item.ident),
            syn::Item::Enum(item) => Some(&item.ident),
            syn::Item::Fn(item) => Some(&item.sig.ident),
            syn::Item::Mod(item) => Some(&item.ident),
            _ => None,
        };
        if let Some(ident) = ident {
            self.0.insert(ident.to_string());
        }
        visit::visit_item(self, item);
    }
}

/// The paths of `const`/`static` items outside the body that `body` names in expression
/// position (`ENVS`, `config::NAMES`), in order of first use; `locals` are the body's
/// local names (never items).
pub fn named_statics(body: &syn::Block, locals: &BTreeSet<String>) -> Vec<syn::Path> {
    let mut items = Items(BTreeSet::new());
    items.visit_block(body);
    let mut skip = items.0;
    skip.extend(locals.iter().cloned());
    let mut named = Named {
        skip: &skip,
        found: Vec::new(),
    };
    named.visit_block(body);
    named.found
}

#[cfg(test)]
mod tests {
    use quote::{ToTokens, quote};

    use super::*;

    fn named(body: proc_macro2::TokenStream, locals: &[&str]) -> Vec<String> {
        let body: syn::Block = syn::parse2(body).unwrap();
        let locals = locals.iter().map(|l| l.to_string()).collect();
        named_statics(&body, &locals)
            .iter()
            .map(|path| path.to_token_stream().to_string().replace(' ', ""))
            .collect()
    }

    #[test]
    fn consts_and_statics_named_in_expressions_and_macro_arguments() {
        let found = named(
            quote!({
                let env = ENVS[i];
                let t: ID = config::NAMES.len() + MAX;
                let x = Some(T);
                println!("{}", GREETING);
                Kind::RED;
                ENVS.len();
            }),
            &[],
        );
        assert_eq!(
            found,
            ["ENVS", "config::NAMES", "MAX", "GREETING", "Kind::RED"]
        );
    }

    #[test]
    fn locals_and_the_body_s_own_items_are_not_collected() {
        let found = named(
            quote!({
                const LOCAL: &str = "a";
                let OWN = 1;
                let a = LOCAL;
                let b = OWN + OUTER;
                fn helper() -> u8 {
                    INNER_ONLY
                }
            }),
            &["OWN"],
        );
        assert_eq!(found, ["OUTER"]);
    }
}
