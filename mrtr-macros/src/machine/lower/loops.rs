//! Loops: `loop`, `while`/`while let` and `for` whose bodies suspend. A `for` loop over
//! owned items stores its iterator; over borrowed items it stores a snapshot of the items
//! and derives the bindings from it again after every suspension; over `&mut` items it is
//! refused.

use std::collections::BTreeSet;

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, Pat};

use super::compact::compact;
use super::names::pattern_bindings;
use super::{LoopCx, Lowerer};
use crate::machine::cfg::*;

/// Methods whose iterators yield (or borrow from) the receiver's data: a suspending loop
/// over them keeps a snapshot of the items instead of the iterator.
pub(super) const BORROWING_METHODS: &[&str] = &[
    "iter",
    "keys",
    "values",
    "lines",
    "chunks",
    "chunks_exact",
    "rchunks",
    "windows",
    "split",
    "rsplit",
    "splitn",
    "split_terminator",
    "split_whitespace",
    "split_ascii_whitespace",
    "split_inclusive",
    "matches",
    "match_indices",
    "as_slice",
    "as_str",
];

/// Methods that hand out `&mut` items: their changes could not reach the collection.
pub(super) const MUTATING_METHODS: &[&str] =
    &["iter_mut", "values_mut", "chunks_mut", "as_mut_slice"];

/// How a `for` loop's iterable yields its items.
pub(super) enum Items {
    /// Owned items (ranges, `into_iter()`, a moved collection).
    Owned,
    /// Borrowed items (`&v`, `.iter()`, `.keys()`, `.lines()`, ...).
    Borrowed,
    /// `&mut` items, at this span.
    Mutable(Span),
}

/// Classifies a `for` loop's iterable by its syntax: `&v`/`.iter()`-like methods borrow,
/// `&mut v`/`.iter_mut()`-like ones borrow mutably, anything else is taken as owned.
pub(super) fn loop_items(expr: &Expr) -> Items {
    match expr {
        Expr::Reference(reference) => match reference.mutability {
            Some(_) => Items::Mutable(reference.span()),
            None => Items::Borrowed,
        },
        Expr::Paren(inner) => loop_items(&inner.expr),
        Expr::Group(inner) => loop_items(&inner.expr),
        Expr::MethodCall(call) => {
            let method = call.method.to_string();
            if MUTATING_METHODS.contains(&method.as_str()) {
                return Items::Mutable(call.method.span());
            }
            let mut items = if BORROWING_METHODS.contains(&method.as_str()) {
                Items::Borrowed
            } else {
                loop_items(&call.receiver)
            };
            // `a.into_iter().zip(b.iter())`: an argument can bring borrowed parts.
            for arg in &call.args {
                match (loop_items(arg), &items) {
                    (Items::Mutable(span), _) => return Items::Mutable(span),
                    (Items::Borrowed, Items::Owned) => items = Items::Borrowed,
                    _ => {}
                }
            }
            items
        }
        _ => Items::Owned,
    }
}

/// Splits a loop pattern along its tuples: `(i, (a, b))` has the parts `i`, `a`, `b`.
pub(super) fn pattern_parts(pat: &Pat, path: &mut Vec<usize>, parts: &mut Vec<(Pat, Vec<usize>)>) {
    match pat {
        Pat::Tuple(tuple) => {
            for (index, elem) in tuple.elems.iter().enumerate() {
                path.push(index);
                pattern_parts(elem, path, parts);
                path.pop();
            }
        }
        Pat::Paren(inner) => pattern_parts(&inner.pat, path, parts),
        Pat::Wild(_) => {}
        other => parts.push((other.clone(), path.clone())),
    }
}

/// The closure pattern and the slot expression that store one item of a snapshot loop.
pub(super) fn snapshot_item(pat: &Pat, counter: &mut usize) -> (TokenStream, TokenStream) {
    match pat {
        Pat::Tuple(tuple) => {
            let (pats, exprs): (Vec<_>, Vec<_>) = tuple
                .elems
                .iter()
                .map(|elem| snapshot_item(elem, counter))
                .unzip();
            (quote!((#(#pats,)*)), quote!((#(#exprs,)*)))
        }
        Pat::Paren(inner) => snapshot_item(&inner.pat, counter),
        Pat::Wild(_) => (quote!(_), quote!(())),
        _ => {
            let part = format_ident!("__mrtr_part{}", *counter, span = Span::mixed_site());
            *counter += 1;
            let store = quote! {{
                #[allow(unused_imports)]
                use ::mrtr::__private::{ViaOwned as _, ViaRef as _};
                (&&::mrtr::__private::Probe::new(#part)).store_item()
            }};
            (quote!(#part), store)
        }
    }
}

/// The first `mut` binding in `pat`.
pub(super) fn mut_binding(pat: &Pat) -> Option<Span> {
    struct Find(Option<Span>);
    impl<'ast> Visit<'ast> for Find {
        fn visit_pat_ident(&mut self, pat: &'ast syn::PatIdent) {
            if let Some(mutability) = pat.mutability {
                self.0.get_or_insert(mutability.span);
            }
            syn::visit::visit_pat_ident(self, pat);
        }
        fn visit_expr(&mut self, _: &'ast Expr) {}
    }
    let mut find = Find(None);
    find.visit_pat(pat);
    find.0
}

impl Lowerer<'_> {
    /// Lowers a `loop` whose body suspends; its `break` value (if used as one) goes to `dest`.
    pub(super) fn lower_loop(&mut self, expr_loop: &syn::ExprLoop, dest: Dest) {
        let header = self.new_block();
        self.goto(header);
        self.enter(header);
        let exit = self.new_block();
        self.lower_loop_body(
            expr_loop.label.as_ref(),
            &expr_loop.body,
            header,
            exit,
            dest,
        );
    }

    /// Lowers `while cond`/`while let pat = ..` whose body suspends: the header tests the
    /// condition ([`Term::If`], or [`Term::Match`] for `while let`) each time round.
    pub(super) fn lower_while(&mut self, expr_while: &syn::ExprWhile, dest: Dest) {
        let header = self.new_block();
        self.goto(header);
        self.enter(header);
        let body = self.new_block();
        let exit = self.new_block();
        let (cond, binds) = match &*expr_while.cond {
            Expr::Let(expr_let) => (None, Some(expr_let)),
            cond => (Some(cond.clone()), None),
        };
        let mut bind_vars = Vec::new();
        self.scopes.push(Vec::new());
        let term = match (cond, binds) {
            (Some(cond), _) => Term::If {
                cond: self.code(cond, &[]),
                then_edge: Edge::Block(body),
                else_edge: Edge::Block(exit),
                then_binds: Vec::new(),
            },
            (None, Some(expr_let)) => {
                let scrutinee = self.code((*expr_let.expr).clone(), &[]);
                let idents = pattern_bindings(&expr_let.pat);
                bind_vars = idents.iter().map(|ident| self.declare(ident)).collect();
                let pat = &expr_let.pat;
                Term::Match {
                    scrutinee,
                    arms: vec![
                        Arm {
                            pat: quote!(#pat),
                            guard: None,
                            binds: bind_vars.clone(),
                            edge: Edge::Block(body),
                        },
                        Arm {
                            pat: quote!(_),
                            guard: None,
                            binds: Vec::new(),
                            edge: Edge::Block(exit),
                        },
                    ],
                }
            }
            (None, None) => unreachable!(),
        };
        let _ = bind_vars;
        self.terminate(term);
        self.enter(body);
        self.loop_body_into(
            expr_while.label.as_ref(),
            &expr_while.body,
            header,
            exit,
            None,
        );
        self.scopes.pop();
        self.finish_loop(exit, dest, None);
    }

    /// Lowers a `for` loop whose body suspends, by how its iterable yields items.
    pub(super) fn lower_for(&mut self, expr_for: &syn::ExprForLoop, dest: Dest) {
        let items = match loop_items(&expr_for.expr) {
            Items::Owned => self.local_items(&expr_for.expr),
            items => items,
        };
        match items {
            Items::Owned => self.lower_owned_loop(expr_for, dest),
            Items::Borrowed => self.lower_snapshot_loop(expr_for, dest),
            Items::Mutable(span) => {
                let mut error = syn::Error::new(
                    span,
                    "a loop over `&mut` items cannot suspend: the items are copied into the sealed state, \
                 so changes made after a suspension would not reach the collection. \
                 Loop over indices and borrow after the suspension: `for i in 0..items.len() { .. items[i] = .. }`",
                );
                error.combine(syn::Error::new(
                    expr_for.for_token.span,
                    "this loop's body suspends",
                ));
                self.errors.push(error);
            }
        }
    }

    /// `for role in roles` over a local that holds a reference (`let roles = &team.roles;`,
    /// `roles: &Vec<_>`, a binding of a borrowed `if let`): its items are borrowed, like
    /// `for role in &v` (or `&mut` ones, for a `&mut` type).
    fn local_items(&self, expr: &Expr) -> Items {
        let expr = match expr {
            Expr::Paren(inner) => return self.local_items(&inner.expr),
            Expr::Group(inner) => return self.local_items(&inner.expr),
            Expr::Path(path) if path.qself.is_none() => path,
            _ => return Items::Owned,
        };
        let Some(ident) = expr.path.get_ident() else {
            return Items::Owned;
        };
        let names: BTreeSet<String> = [ident.to_string()].into();
        let Some(var) = self.resolve(&names).into_iter().next() else {
            return Items::Owned;
        };
        let info = &self.cfg.vars[var];
        let declared = info
            .declared
            .as_ref()
            .and_then(|ty| syn::parse2::<syn::Type>(ty.clone()).ok());
        match declared {
            Some(syn::Type::Reference(reference)) if reference.mutability.is_some() => {
                Items::Mutable(ident.span())
            }
            Some(syn::Type::Reference(_)) => Items::Borrowed,
            _ if info.borrowed
                || info
                    .derived
                    .is_some_and(|leaf| self.cfg.derived[leaf].rematch.is_some()) =>
            {
                Items::Borrowed
            }
            _ => Items::Owned,
        }
    }

    /// `for pat in owned`: the iterator itself (a range) or its items collected into a
    /// `VecIter` is stored, and the pattern binds ordinary locals.
    pub(super) fn lower_owned_loop(&mut self, expr_for: &syn::ExprForLoop, dest: Dest) {
        let iterable = self.lower_expr(&expr_for.expr);
        let iter = self.temp_at(expr_for.expr.span());
        self.cfg.vars[iter].role = Some(format!(
            "the items left in `for {} in {}`",
            compact(expr_for.pat.to_token_stream()),
            compact(expr_for.expr.to_token_stream())
        ));
        let span = iterable.span();
        let converted: Expr = syn::parse_quote_spanned! {span=>
            {
                #[allow(unused_imports)]
                use ::mrtr::__private::{ViaCollect as _, ViaStateIter as _};
                (&&::mrtr::__private::Probe::new(#iterable)).into_stored()
            }
        };
        let (header, body, exit) = self.open_loop(iter, converted);
        let binds: Vec<VarId> = pattern_bindings(&expr_for.pat)
            .iter()
            .map(|ident| self.declare(ident))
            .collect();
        let pat = &expr_for.pat;
        self.terminate(Term::ForNext {
            iter,
            pat: quote!(#pat),
            binds,
            body,
            exit,
        });
        self.close_loop(expr_for, (header, body, exit), dest);
    }

    /// Binds the loop's stored iterator (or snapshot) `stored` to `converted`, then opens
    /// the header, body and exit blocks with the loop's scope pushed.
    pub(super) fn open_loop(
        &mut self,
        stored: VarId,
        converted: Expr,
    ) -> (BlockId, BlockId, BlockId) {
        let ident = self.cfg.vars[stored].ident.clone();
        let init = self.code(converted, &[]);
        self.push(Item::Let {
            pat: quote!(mut #ident),
            init: Some(init),
            diverge: None,
            defs: vec![stored],
        });
        let header = self.new_block();
        self.goto(header);
        self.enter(header);
        let body = self.new_block();
        let exit = self.new_block();
        self.scopes.push(Vec::new());
        (header, body, exit)
    }

    /// Lowers the body once the header's terminator is set, and leaves the loop.
    pub(super) fn close_loop(
        &mut self,
        expr_for: &syn::ExprForLoop,
        (header, body, exit): (BlockId, BlockId, BlockId),
        dest: Dest,
    ) {
        self.enter(body);
        self.loop_body_into(expr_for.label.as_ref(), &expr_for.body, header, exit, None);
        self.scopes.pop();
        self.finish_loop(exit, dest, None);
    }

    /// `for pat in borrowed`: a snapshot of the items is stored (owned copies), and the
    /// pattern's bindings are derived from it again in every block of the body.
    pub(super) fn lower_snapshot_loop(&mut self, expr_for: &syn::ExprForLoop, dest: Dest) {
        if let Some(span) = mut_binding(&expr_for.pat) {
            let mut error = syn::Error::new(
                span,
                "in a loop over borrowed items whose body suspends, the loop's bindings are read again from \
                 a snapshot after each suspension, so they cannot be `mut`; bind a mutable copy in the body \
                 (`let mut x = x.clone();`)",
            );
            error.combine(syn::Error::new(
                expr_for.for_token.span,
                "this loop's body suspends",
            ));
            self.errors.push(error);
            return;
        }
        let iterable = self.lower_expr(&expr_for.expr);
        let snap = self.temp_at(expr_for.expr.span());
        self.cfg.vars[snap].role = Some(format!(
            "a copy of the items of `for {} in {}`",
            compact(expr_for.pat.to_token_stream()),
            compact(expr_for.expr.to_token_stream())
        ));
        let (part_pat, part_expr) = snapshot_item(&expr_for.pat, &mut 0);
        let span = iterable.span();
        let converted: Expr = syn::parse_quote_spanned! {span=>
            ::mrtr::__private::Snapshot::new(::core::iter::Iterator::collect::<::std::vec::Vec<_>>(
                ::core::iter::Iterator::map(
                    ::core::iter::IntoIterator::into_iter(#iterable),
                    |#part_pat| #part_expr,
                ),
            ))
        };
        let (header, body, exit) = self.open_loop(snap, converted);
        let mut parts = Vec::new();
        pattern_parts(&expr_for.pat, &mut Vec::new(), &mut parts);
        for (part, path) in parts {
            let leaf = self.cfg.derived.len();
            let vars = pattern_bindings(&part)
                .iter()
                .map(|ident| {
                    let var = self.declare(ident);
                    self.cfg.vars[var].derived = Some(leaf);
                    var
                })
                .collect();
            self.cfg.derived.push(DerivedLeaf {
                snap,
                pat: quote!(#part),
                path,
                vars,
                init: None,
                rematch: None,
            });
        }
        self.terminate(Term::Advance { snap, body, exit });
        self.close_loop(expr_for, (header, body, exit), dest);
    }

    /// Lowers a loop body between `header` and `exit`, then continues after the loop
    /// with its value (if the loop is used as one) delivered to `dest`.
    pub(super) fn lower_loop_body(
        &mut self,
        label: Option<&syn::Label>,
        body: &syn::Block,
        header: BlockId,
        exit: BlockId,
        dest: Dest,
    ) {
        let result = match dest {
            Dest::Discard => None,
            _ => Some(self.temp()),
        };
        self.loop_body_into(label, body, header, exit, result);
        self.finish_loop(exit, dest, result);
    }

    /// Lowers a loop body with the loop pushed for its `break`/`continue`, falling back to
    /// `header` at its end.
    pub(super) fn loop_body_into(
        &mut self,
        label: Option<&syn::Label>,
        body: &syn::Block,
        header: BlockId,
        exit: BlockId,
        result: Option<VarId>,
    ) {
        self.loops.push(LoopCx {
            label: label.map(|label| label.name.ident.to_string()),
            header,
            exit,
            result,
        });
        self.lower_block(body, Dest::Discard);
        self.loops.pop();
        self.goto(header);
    }

    /// Continues at the loop's exit, delivering the `break` value (or `()`) to `dest`.
    pub(super) fn finish_loop(&mut self, exit: BlockId, dest: Dest, result: Option<VarId>) {
        self.enter(exit);
        match (dest, result) {
            (Dest::Discard, _) => {}
            (dest, Some(result)) => {
                let ident = self.cfg.vars[result].ident.clone();
                self.deliver(syn::parse_quote!(#ident), dest);
            }
            (dest, None) => self.deliver(syn::parse_quote!(()), dest),
        }
    }
}
