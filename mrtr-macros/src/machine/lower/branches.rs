//! Branches: `if`/`if let`, `match` and `{ .. }` blocks whose contents suspend. Each arm
//! becomes an [`Edge`] to a join block; an arm without suspensions stays inline.

use std::collections::BTreeSet;

use quote::quote;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Stmt};

use super::borrows::scrutinee_borrows;
use super::names::{collect_let_bindings, mentioned, pattern_bindings};
use super::suspends::{block_has, expr_has};
use super::{CodeNode, Lowerer};
use crate::machine::cfg::*;

impl Lowerer<'_> {
    /// Lowers a branch body into an edge ending at `join`.
    pub(super) fn branch(
        &mut self,
        body: &Expr,
        binds: &[Ident],
        dest: Dest,
        join: BlockId,
    ) -> (Edge, Vec<VarId>) {
        if !expr_has(body) {
            let mut code = self.code(body.clone(), binds);
            let (assigned, reads_only) = definite_assignments(body);
            let assigned: BTreeSet<VarId> = self
                .resolve(&assigned)
                .into_iter()
                .filter(|var| self.cfg.vars[*var].derived.is_none())
                .collect();
            if !assigned.is_empty() {
                // What the branch reads, without the targets of its assignments.
                let (mut names, _) = mentioned(|mentions| reads_only.mention(mentions));
                for ident in binds {
                    names.remove(&ident.to_string());
                }
                code.uses = self.map_derived(self.resolve(&names));
                code.assigns = assigned;
            }
            return (
                Edge::Inline {
                    body: code,
                    dest,
                    then: join,
                },
                Vec::new(),
            );
        }
        let block = self.new_block();
        self.scopes.push(Vec::new());
        let vars = binds.iter().map(|ident| self.declare(ident)).collect();
        self.enter(block);
        self.lower_value(body, dest);
        self.scopes.pop();
        self.goto(join);
        (Edge::Block(block), vars)
    }

    /// Lowers a control-flow expression that suspends somewhere inside (block, `if`,
    /// `match`, loops, `return`/`break`/`continue` with a suspending value).
    pub(super) fn lower_control(&mut self, expr: &Expr, dest: Dest) {
        match expr {
            Expr::Block(block) => self.lower_block(&block.block, dest),
            Expr::If(expr_if) => self.lower_if(expr_if, dest),
            Expr::Match(expr_match) => self.lower_match(expr_match, dest),
            Expr::Loop(expr_loop) => self.lower_loop(expr_loop, dest),
            Expr::While(expr_while) => self.lower_while(expr_while, dest),
            Expr::ForLoop(expr_for) => self.lower_for(expr_for, dest),
            other => self.errors.at(
                other.span(),
                "a suspension cannot be used in this kind of expression",
            ),
        }
    }

    /// Lowers a `match` whose scrutinee or arms suspend: each arm becomes an [`Arm`] of a
    /// [`Term::Match`], and all arms meet in one join block.
    fn lower_match(&mut self, expr_match: &syn::ExprMatch, dest: Dest) {
        let scrutinee = self.lower_expr(&expr_match.expr);
        let scrutinee = self.code(scrutinee, &[]);
        let join = self.new_block();
        let from = self.current();
        let mut arms = Vec::new();
        for arm in &expr_match.arms {
            let binds = pattern_bindings(&arm.pat);
            let guard = arm
                .guard
                .as_ref()
                .map(|(_, guard)| self.code((**guard).clone(), &binds));
            // The body also sees what an `if let` guard binds (the guard itself
            // may read an outer local of the same name, so only the body).
            let mut body_binds = binds.clone();
            if let Some((_, guard)) = &arm.guard {
                collect_let_bindings(guard, &mut body_binds);
            }
            self.cur = Some(from);
            let (edge, vars) = self.branch(&arm.body, &body_binds, dest, join);
            let (pattern, guarded) = vars.split_at(binds.len().min(vars.len()));
            let borrows = scrutinee_borrows(&expr_match.expr);
            self.rematch(pattern, &arm.pat, &scrutinee, borrows);
            self.mark_borrowed(guarded, borrows);
            let pat = &arm.pat;
            arms.push(Arm {
                pat: quote!(#pat),
                guard,
                binds: vars,
                edge,
            });
        }
        self.cfg.blocks[from].term = Some(Term::Match { scrutinee, arms });
        self.enter(join);
    }

    /// Lowers a `{ .. }` block: kept as written when nothing inside suspends; otherwise its
    /// statements get their own scope, and the code after it continues in a fresh block that
    /// sees the outer names again.
    pub(super) fn lower_block(&mut self, block: &syn::Block, dest: Dest) {
        if !block_has(block) {
            let expr = Expr::Block(syn::ExprBlock {
                attrs: Vec::new(),
                label: None,
                block: block.clone(),
            });
            self.deliver(expr, dest);
            return;
        }
        self.scopes.push(Vec::new());
        self.lower_stmts(&block.stmts, dest);
        self.scopes.pop();
        // Leaving the scope: the next block sees the outer names again.
        if self.cur.is_some() {
            let after = self.new_block();
            self.goto(after);
            self.enter(after);
        }
    }

    /// Lowers `if`/`if let`/`else if`/`else` (let chains included) whose condition or
    /// branches suspend: the condition becomes a [`Term::If`] (or a [`Term::Match`] for
    /// `if let`) and both branches meet in one join block.
    pub(super) fn lower_if(&mut self, expr_if: &syn::ExprIf, dest: Dest) {
        let (cond, let_pat) = match &*expr_if.cond {
            Expr::Let(expr_let) => (self.lower_expr(&expr_let.expr), Some(&*expr_let.pat)),
            cond => (self.lower_expr(cond), None),
        };
        let code = self.code(cond, &[]);
        let join = self.new_block();
        let from = self.current();
        let binds = match let_pat {
            Some(pat) => pattern_bindings(pat),
            None => {
                let mut chain = Vec::new();
                collect_let_bindings(&expr_if.cond, &mut chain);
                chain
            }
        };
        let then_body = Expr::Block(syn::ExprBlock {
            attrs: Vec::new(),
            label: None,
            block: expr_if.then_branch.clone(),
        });
        let (then_edge, then_vars) = self.branch(&then_body, &binds, dest, join);
        if let Expr::Let(expr_let) = &*expr_if.cond {
            self.rematch(
                &then_vars,
                &expr_let.pat,
                &code,
                scrutinee_borrows(&expr_let.expr),
            );
        }
        self.cur = Some(from);
        let else_edge = match &expr_if.else_branch {
            Some((_, else_expr)) => self.branch(else_expr, &[], dest, join).0,
            None => {
                self.cur = Some(from);
                self.branch(&syn::parse_quote!(()), &[], dest, join).0
            }
        };
        let term = match let_pat {
            None => Term::If {
                cond: code,
                then_edge,
                else_edge,
                then_binds: then_vars,
            },
            Some(pat) => Term::Match {
                scrutinee: code,
                arms: vec![
                    Arm {
                        pat: quote!(#pat),
                        guard: None,
                        binds: then_vars,
                        edge: then_edge,
                    },
                    Arm {
                        pat: quote!(_),
                        guard: None,
                        binds: Vec::new(),
                        edge: else_edge,
                    },
                ],
            },
        };
        self.cfg.blocks[from].term = Some(term);
        self.enter(join);
    }
}

/// The locals a branch body assigns unconditionally (`x = ..` as the body or as a
/// top-level statement of it), and the body with those targets taken out (what it reads).
fn definite_assignments(body: &Expr) -> (BTreeSet<String>, Expr) {
    fn target(expr: &Expr) -> Option<String> {
        match expr {
            Expr::Path(path) if path.qself.is_none() => {
                path.path.get_ident().map(ToString::to_string)
            }
            _ => None,
        }
    }
    let mut assigned = BTreeSet::new();
    let mut reads = body.clone();
    match &mut reads {
        Expr::Assign(assign) => {
            if let Some(name) = target(&assign.left) {
                assigned.insert(name);
                reads = (*assign.right).clone();
            }
        }
        Expr::Block(block) if block.label.is_none() => {
            for stmt in &mut block.block.stmts {
                if let Stmt::Expr(Expr::Assign(assign), semi) = stmt
                    && let Some(name) = target(&assign.left)
                {
                    assigned.insert(name);
                    *stmt = Stmt::Expr((*assign.right).clone(), *semi);
                }
            }
        }
        _ => {}
    }
    (assigned, reads)
}
