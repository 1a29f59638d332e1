//! Which local names a piece of code mentions, and which names a pattern binds.
//!
//! Conservative on purpose: a mention that is not really a use only keeps a value longer.

use std::collections::BTreeSet;

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::{self, Visit};
use syn::{Expr, Pat};

/// Names bound by a pattern (lower-case identifiers; `None` and other constants are not
/// bindings).
pub fn pattern_bindings(pat: &Pat) -> Vec<syn::Ident> {
    struct Bindings(Vec<syn::Ident>);
    impl<'ast> Visit<'ast> for Bindings {
        fn visit_pat_ident(&mut self, pat: &'ast syn::PatIdent) {
            let name = pat.ident.to_string();
            if !name.starts_with(|c: char| c.is_uppercase()) {
                self.0.push(pat.ident.clone());
            }
            visit::visit_pat_ident(self, pat);
        }
        fn visit_expr(&mut self, _: &'ast Expr) {}
    }
    let mut bindings = Bindings(Vec::new());
    bindings.visit_pat(pat);
    bindings.0
}

/// Collects the free names that code mentions.
#[derive(Default)]
pub struct Mentions {
    /// Names mentioned and not bound inside the code itself.
    pub names: BTreeSet<String>,
    /// Names the code binds inside itself (they shadow outer locals there).
    pub inner: BTreeSet<String>,
    bound: Vec<Vec<String>>,
}

impl Mentions {
    fn is_bound(&self, name: &str) -> bool {
        self.bound
            .iter()
            .any(|frame| frame.iter().any(|bound| bound == name))
    }

    fn mention(&mut self, name: String) {
        if !self.is_bound(&name) {
            self.names.insert(name);
        }
    }

    fn scoped(&mut self, names: Vec<syn::Ident>, walk: impl FnOnce(&mut Self)) {
        self.inner.extend(names.iter().map(ToString::to_string));
        self.bound
            .push(names.iter().map(ToString::to_string).collect());
        walk(self);
        self.bound.pop();
    }

    /// Walks an `if`/`while` condition: in a let chain (`let Some(v) = x && v > 0`) the
    /// names a `let` binds are in scope for the operands after it (and, through the
    /// innermost frame, for the body), not for its own scrutinee.
    fn chain(&mut self, cond: &Expr) {
        match cond {
            Expr::Let(expr) => {
                self.visit_expr(&expr.expr);
                let names: Vec<String> = pattern_bindings(&expr.pat)
                    .iter()
                    .map(ToString::to_string)
                    .collect();
                self.inner.extend(names.iter().cloned());
                if let Some(frame) = self.bound.last_mut() {
                    frame.extend(names);
                }
            }
            Expr::Binary(expr) if matches!(expr.op, syn::BinOp::And(_)) => {
                self.chain(&expr.left);
                self.chain(&expr.right);
            }
            Expr::Paren(expr) => self.chain(&expr.expr),
            other => self.visit_expr(other),
        }
    }

    fn tokens(&mut self, tokens: TokenStream) {
        // The two punctuation characters before the current token (none after any other).
        let mut before: [Option<char>; 2] = [None, None];
        for tree in tokens {
            let punct = match &tree {
                TokenTree::Punct(punct) => Some(punct.as_char()),
                _ => None,
            };
            let after = before;
            before = [punct, punct.and(after[0])];
            match tree {
                // `card.label`, `a::label`: a field, method or path segment, not the local
                // (`0..label` is a range: the local).
                TokenTree::Ident(_)
                    if after == [Some('.'), None] || after == [Some(':'), Some(':')] => {}
                TokenTree::Ident(ident) => self.mention(ident.to_string()),
                TokenTree::Group(group) => self.tokens(group.stream()),
                TokenTree::Literal(literal) => {
                    // Inline format arguments: `format!("{name}")`.
                    let text = literal.to_string();
                    if text.starts_with('"') || text.starts_with('r') {
                        for piece in text.split('{').skip(1) {
                            let name: String = piece
                                .chars()
                                .take_while(|c| c.is_alphanumeric() || *c == '_')
                                .collect();
                            if !name.is_empty() {
                                self.mention(name);
                            }
                        }
                    }
                }
                TokenTree::Punct(_) => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for Mentions {
    fn visit_expr_path(&mut self, path: &'ast syn::ExprPath) {
        if path.qself.is_none()
            && path.path.leading_colon.is_none()
            && let Some(ident) = path.path.get_ident()
        {
            self.mention(ident.to_string());
            return;
        }
        visit::visit_expr_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}

    fn visit_expr_closure(&mut self, closure: &'ast syn::ExprClosure) {
        let names = closure.inputs.iter().flat_map(pattern_bindings).collect();
        self.scoped(names, |this| this.visit_expr(&closure.body));
    }

    fn visit_block(&mut self, block: &'ast syn::Block) {
        self.bound.push(Vec::new());
        for stmt in &block.stmts {
            match stmt {
                syn::Stmt::Local(local) => {
                    if let Some(init) = &local.init {
                        self.visit_expr(&init.expr);
                        if let Some((_, diverge)) = &init.diverge {
                            self.visit_expr(diverge);
                        }
                    }
                    let names = pattern_bindings(&local.pat);
                    self.inner.extend(names.iter().map(ToString::to_string));
                    if let Some(frame) = self.bound.last_mut() {
                        frame.extend(names.iter().map(ToString::to_string));
                    }
                }
                other => self.visit_stmt(other),
            }
        }
        self.bound.pop();
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        let names = pattern_bindings(&arm.pat);
        self.scoped(names, |this| {
            // An `if let` guard's bindings are in scope in the arm's body.
            if let Some((_, guard)) = &arm.guard {
                this.chain(guard);
            }
            this.visit_expr(&arm.body);
        });
    }

    fn visit_expr_for_loop(&mut self, expr: &'ast syn::ExprForLoop) {
        self.visit_expr(&expr.expr);
        let names = pattern_bindings(&expr.pat);
        self.scoped(names, |this| this.visit_block(&expr.body));
    }

    fn visit_expr_if(&mut self, expr: &'ast syn::ExprIf) {
        self.bound.push(Vec::new());
        self.chain(&expr.cond);
        self.visit_block(&expr.then_branch);
        self.bound.pop();
        if let Some((_, else_branch)) = &expr.else_branch {
            self.visit_expr(else_branch);
        }
    }

    fn visit_expr_while(&mut self, expr: &'ast syn::ExprWhile) {
        self.bound.push(Vec::new());
        self.chain(&expr.cond);
        self.visit_block(&expr.body);
        self.bound.pop();
    }

    // A condition lowered on its own (`let Some(v) = x && v > 0`, once its suspension is
    // split off) is a chain too.
    fn visit_expr_binary(&mut self, expr: &'ast syn::ExprBinary) {
        if matches!(expr.op, syn::BinOp::And(_)) {
            self.bound.push(Vec::new());
            self.chain(&expr.left);
            self.chain(&expr.right);
            self.bound.pop();
        } else {
            visit::visit_expr_binary(self, expr);
        }
    }

    fn visit_expr_let(&mut self, expr: &'ast syn::ExprLet) {
        self.visit_expr(&expr.expr);
    }
}

/// Names bound by the `let`s of a condition (`if let`, let chains, `if let` guards).
pub fn collect_let_bindings(cond: &Expr, names: &mut Vec<syn::Ident>) {
    match cond {
        Expr::Let(expr) => names.extend(pattern_bindings(&expr.pat)),
        Expr::Binary(expr) => {
            collect_let_bindings(&expr.left, names);
            collect_let_bindings(&expr.right, names);
        }
        Expr::Paren(expr) => collect_let_bindings(&expr.expr, names),
        _ => {}
    }
}

/// The free names `node` mentions, and the names it binds inside itself.
pub fn mentioned(visit_node: impl FnOnce(&mut Mentions)) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut mentions = Mentions::default();
    visit_node(&mut mentions);
    (mentions.names, mentions.inner)
}
