//! Statements: a block's statement list (items hoisted, `let`s declared, assignments and
//! kept statements appended), and which statements never complete.

use std::collections::BTreeSet;

use quote::{ToTokens, quote};
use syn::visit::Visit;
use syn::{Expr, Pat, Stmt};

use super::Lowerer;
use super::borrows::{borrows, is_shared_type, type_borrows, unstorable};
use super::names::{mentioned, pattern_bindings};
use super::suspends::{expr_has, stmt_has};
use crate::machine::cfg::*;

impl Lowerer<'_> {
    /// Lowers a block's statements; the tail expression (or `()`) goes to `dest`. Items
    /// (`fn`, `struct`, `use`) are hoisted to the top of the generated function.
    pub(super) fn lower_stmts(&mut self, stmts: &[Stmt], dest: Dest) {
        let count = stmts.len();
        let mut delivered = false;
        for (index, stmt) in stmts.iter().enumerate() {
            let last = index + 1 == count;
            match stmt {
                Stmt::Item(item) => self.cfg.items.push(item.to_token_stream()),
                Stmt::Local(local) => self.lower_local(local),
                Stmt::Expr(expr, None) if last => {
                    self.lower_value(expr, dest);
                    delivered = true;
                }
                Stmt::Expr(Expr::Assign(assign), Some(_))
                    if self.assigned_var(&assign.left).is_some() =>
                {
                    let var = self.assigned_var(&assign.left).unwrap_or_default();
                    let value = self.lower_expr(&assign.right);
                    let value = self.code(value, &[]);
                    self.push(Item::Assign { var, value });
                }
                Stmt::Expr(expr, _) => self.lower_value(expr, Dest::Discard),
                Stmt::Macro(stmt_mac) => {
                    let expr = Expr::Macro(syn::ExprMacro {
                        attrs: stmt_mac.attrs.clone(),
                        mac: stmt_mac.mac.clone(),
                    });
                    if stmt_has(stmt) {
                        self.lower_value(&expr, Dest::Discard);
                    } else {
                        let code = self.code(stmt.clone(), &[]);
                        self.push(Item::Stmt(code));
                    }
                }
            }
            // `return`, `break`, `continue` or a panic kept as written: nothing falls
            // through to the next statement or the join, so liveness sees only real paths.
            if diverges(stmt) && self.cur.is_some() {
                self.terminate(Term::Unreachable);
            }
        }
        if !delivered && dest != Dest::Discard {
            if stmts.last().is_some_and(diverges) {
                if self.cur.is_some() {
                    self.terminate(Term::Unreachable);
                }
            } else {
                self.deliver(syn::parse_quote!(()), dest);
            }
        }
    }

    /// The variable a plain `name = ..` assigns, if `name` is one of ours.
    pub(super) fn assigned_var(&self, left: &Expr) -> Option<VarId> {
        let Expr::Path(path) = left else { return None };
        let ident = path.path.get_ident()?;
        if path.qself.is_some() || !path.attrs.is_empty() {
            return None;
        }
        let names: BTreeSet<String> = [ident.to_string()].into();
        self.resolve(&names).into_iter().next()
    }

    /// Lowers `let pat [: ty] [= init [else { .. }]];`: splits the initializer if it
    /// suspends, declares the pattern's bindings, and records whether they borrow or share.
    pub(super) fn lower_local(&mut self, local: &syn::Local) {
        let init = local.init.as_ref().map(|init| {
            let value = if expr_has(&init.expr) {
                self.lower_expr(&init.expr)
            } else {
                (*init.expr).clone()
            };
            (value, init.diverge.as_ref().map(|(_, d)| (**d).clone()))
        });
        let borrowed = init.as_ref().is_some_and(|(value, _)| borrows(value))
            || matches!(&local.pat, Pat::Type(typed) if type_borrows(&typed.ty));
        let (init, diverge) = match init {
            Some((value, diverge)) => {
                let init = self.code(value, &[]);
                let diverge = diverge.map(|diverge| self.code(diverge, &[]));
                (Some(init), diverge)
            }
            None => (None, None),
        };
        // `let line = line.trim();` on a loop binding derived from a snapshot: derived as
        // well, so the borrow is taken again after each suspension.
        let derived_from = match (&local.pat, &local.init) {
            (Pat::Ident(pat), Some(local_init))
                if borrowed
                    && pat.mutability.is_none()
                    && pat.by_ref.is_none()
                    && pat.subpat.is_none()
                    && !expr_has(&local_init.expr)
                    && local_init.diverge.is_none() =>
            {
                let (names, _) = mentioned(|mentions| mentions.visit_expr(&local_init.expr));
                let vars = self.resolve(&names);
                let snaps: BTreeSet<VarId> = vars
                    .iter()
                    .filter_map(|var| self.cfg.vars[*var].derived)
                    .map(|leaf| self.cfg.derived[leaf].snap)
                    .collect();
                let only_derived = !vars.is_empty()
                    && vars.iter().all(|var| self.cfg.vars[*var].derived.is_some());
                match (only_derived, snaps.len()) {
                    (true, 1) => snaps.into_iter().next(),
                    _ => None,
                }
            }
            _ => None,
        };
        let defs: Vec<VarId> = pattern_bindings(&local.pat)
            .iter()
            .map(|ident| self.declare(ident))
            .collect();
        let shared = init.as_ref().is_some_and(|init| self.shares(init))
            || matches!(&local.pat, Pat::Type(typed) if is_shared_type(&typed.ty));
        let never = match (&local.pat, &local.init) {
            (Pat::Ident(pat), Some(local_init)) if !expr_has(&local_init.expr) => {
                unstorable(&pat.ident, &local_init.expr)
            }
            _ => None,
        };
        for def in &defs {
            self.cfg.vars[*def].unstorable = never.clone();
            self.cfg.vars[*def].borrowed = borrowed && derived_from.is_none();
            self.cfg.vars[*def].shared = shared;
        }
        if let (Pat::Type(typed), [def]) = (&local.pat, defs.as_slice()) {
            self.cfg.vars[*def].declared = Some(typed.ty.to_token_stream());
        }
        if let (Some(snap), [def], Some(init)) = (derived_from, defs.as_slice(), &init) {
            let leaf = self.cfg.derived.len();
            self.cfg.vars[*def].derived = Some(leaf);
            let ident = self.cfg.vars[*def].ident.clone();
            self.cfg.derived.push(DerivedLeaf {
                snap,
                pat: quote!(#ident),
                path: Vec::new(),
                vars: vec![*def],
                init: Some(init.tokens.clone()),
                rematch: None,
            });
        }
        let pat = &local.pat;
        let attrs = &local.attrs;
        self.push(Item::Let {
            pat: quote!(#(#attrs)* #pat),
            init,
            diverge,
            defs,
        });
    }
}

/// Whether a statement syntactically never completes.
fn diverges(stmt: &Stmt) -> bool {
    let panics = |mac: &syn::Macro| {
        mac.path.segments.last().is_some_and(|segment| {
            ["panic", "unreachable", "todo", "unimplemented"]
                .contains(&segment.ident.to_string().as_str())
        })
    };
    match stmt {
        Stmt::Expr(expr, _) => expr_diverges(expr, &panics),
        Stmt::Macro(mac) => panics(&mac.mac),
        _ => false,
    }
}

/// Whether an expression in statement position never completes: an exit, a panic, an
/// unlabeled block ending in one, or an `if`/`else` or `match` all of whose branches do.
fn expr_diverges(expr: &Expr, panics: &dyn Fn(&syn::Macro) -> bool) -> bool {
    let block = |block: &syn::Block| block.stmts.iter().any(diverges);
    match expr {
        Expr::Return(_) | Expr::Break(_) | Expr::Continue(_) => true,
        Expr::Macro(mac) => panics(&mac.mac),
        Expr::Block(inner) => inner.label.is_none() && block(&inner.block),
        Expr::Paren(inner) => expr_diverges(&inner.expr, panics),
        Expr::If(inner) => {
            block(&inner.then_branch)
                && inner
                    .else_branch
                    .as_ref()
                    .is_some_and(|(_, other)| expr_diverges(other, panics))
        }
        Expr::Match(inner) => {
            !inner.arms.is_empty()
                && inner
                    .arms
                    .iter()
                    .all(|arm| expr_diverges(&arm.body, panics))
        }
        _ => false,
    }
}
