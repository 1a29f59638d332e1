//! Rejects suspensions in positions a state machine cannot resume into, each with a
//! spanned error that says how to restructure.

use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{BinOp, Expr, Macro};

use super::suspension::{
    SuspensionKind, parse_suspension, suspension_kind, tokens_mention_suspension,
};
use crate::internals::errors::Errors;

/// Where the walk currently is, innermost last.
#[derive(Clone, Copy)]
enum Context {
    Closure,
    Async,
    NestedFn,
    WhileCondition,
    MatchGuard,
    ShortCircuit(&'static str),
    Unsafe,
    LabeledBlock,
    LetElse,
    SuspensionInput,
    Const,
}

struct Checker<'a> {
    errors: &'a mut Errors,
    context: Vec<Context>,
}

fn why(context: Context, name: &str) -> String {
    match context {
        Context::Closure => format!(
            "`{name}!` cannot be used inside a closure: a closure is not part of the resumable function. \
             Call `{name}!` outside it and pass the answer in"
        ),
        Context::Async => format!(
            "`{name}!` cannot be used inside an `async` block: only the function's own body can suspend. \
             Call `{name}!` before the block and move the answer in"
        ),
        Context::NestedFn => format!(
            "`{name}!` cannot be used inside a nested fn or item: only the mrtr function's own body can suspend"
        ),
        Context::WhileCondition => format!(
            "`{name}!` cannot be used in a `while` condition; restructure as \
             `loop {{ let go = {name}!(..); if !go {{ break; }} .. }}`"
        ),
        Context::MatchGuard => format!(
            "`{name}!` cannot be used in a match guard; ask before the `match` and use the answer in the guard"
        ),
        Context::ShortCircuit(op) => format!(
            "`{name}!` cannot be used on the right side of `{op}`, which may not run; \
             use an `if`: `if a {{ let b = {name}!(..); .. }}`"
        ),
        Context::Unsafe => format!(
            "`{name}!` cannot be used inside an `unsafe` block; keep the `unsafe` block free of suspensions"
        ),
        Context::LabeledBlock => format!(
            "`{name}!` cannot be used inside a labeled block; use a `loop` with `break` instead"
        ),
        Context::LetElse => format!(
            "`{name}!` cannot be used in the `else` block of `let .. else`; use a `match` instead"
        ),
        Context::SuspensionInput => format!(
            "`{name}!` cannot be used inside the input of another suspension; bind it to a local first"
        ),
        Context::Const => format!("`{name}!` cannot be used in a constant expression"),
    }
}

impl Checker<'_> {
    fn nested<T>(&mut self, context: Context, walk: impl FnOnce(&mut Self) -> T) -> T {
        self.context.push(context);
        let result = walk(self);
        self.context.pop();
        result
    }

    fn suspension(&mut self, kind: SuspensionKind, mac: &Macro) {
        let name = kind.as_str();
        if let Some(context) = self.context.last().copied() {
            self.errors.at(mac.path.span(), why(context, name));
            return;
        }
        match parse_suspension(kind, mac) {
            Err(error) => self.errors.push(error),
            Ok(specs) => {
                for spec in specs {
                    self.nested(Context::SuspensionInput, |this| this.visit_expr(&spec.expr));
                }
            }
        }
    }

    fn other_macro(&mut self, mac: &Macro) {
        if let Some(span) = tokens_mention_suspension(&mac.tokens) {
            let name = mac
                .path
                .segments
                .last()
                .map(|segment| segment.ident.to_string())
                .unwrap_or_default();
            self.errors.at(
                span,
                format!(
                    "a suspension cannot be used inside another macro's arguments (`{name}!`); \
                     bind the answer to a local first: `let answer = ask!(..);`"
                ),
            );
        }
    }
}

impl<'ast> Visit<'ast> for Checker<'_> {
    fn visit_macro(&mut self, mac: &'ast Macro) {
        match suspension_kind(mac) {
            Some(kind) => self.suspension(kind, mac),
            None => self.other_macro(mac),
        }
    }

    fn visit_expr_closure(&mut self, closure: &'ast syn::ExprClosure) {
        self.nested(Context::Closure, |this| {
            visit::visit_expr_closure(this, closure)
        });
    }

    fn visit_expr_async(&mut self, block: &'ast syn::ExprAsync) {
        self.nested(Context::Async, |this| visit::visit_expr_async(this, block));
    }

    fn visit_item(&mut self, item: &'ast syn::Item) {
        self.nested(Context::NestedFn, |this| visit::visit_item(this, item));
    }

    fn visit_expr_unsafe(&mut self, block: &'ast syn::ExprUnsafe) {
        self.nested(Context::Unsafe, |this| {
            visit::visit_expr_unsafe(this, block)
        });
    }

    fn visit_expr_const(&mut self, block: &'ast syn::ExprConst) {
        self.nested(Context::Const, |this| visit::visit_expr_const(this, block));
    }

    fn visit_expr_block(&mut self, block: &'ast syn::ExprBlock) {
        if block.label.is_some() {
            self.nested(Context::LabeledBlock, |this| {
                visit::visit_expr_block(this, block)
            });
        } else {
            visit::visit_expr_block(self, block);
        }
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        for attr in &local.attrs {
            self.visit_attribute(attr);
        }
        self.visit_pat(&local.pat);
        if let Some(init) = &local.init {
            self.visit_expr(&init.expr);
            if let Some((_, diverge)) = &init.diverge {
                self.nested(Context::LetElse, |this| this.visit_expr(diverge));
            }
        }
    }

    fn visit_expr_while(&mut self, expr: &'ast syn::ExprWhile) {
        self.nested(Context::WhileCondition, |this| this.visit_expr(&expr.cond));
        self.visit_block(&expr.body);
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        self.visit_pat(&arm.pat);
        if let Some((_, guard)) = &arm.guard {
            self.nested(Context::MatchGuard, |this| this.visit_expr(guard));
        }
        self.visit_expr(&arm.body);
    }

    fn visit_expr_binary(&mut self, expr: &'ast syn::ExprBinary) {
        self.visit_expr(&expr.left);
        match expr.op {
            BinOp::And(_) => self.nested(Context::ShortCircuit("&&"), |this| {
                this.visit_expr(&expr.right)
            }),
            BinOp::Or(_) => self.nested(Context::ShortCircuit("||"), |this| {
                this.visit_expr(&expr.right)
            }),
            _ => self.visit_expr(&expr.right),
        }
    }

    fn visit_expr_if(&mut self, expr: &'ast syn::ExprIf) {
        // Let chains (`if let a = x && b`) are short-circuiting too.
        self.visit_expr(&expr.cond);
        self.visit_block(&expr.then_branch);
        if let Some((_, else_branch)) = &expr.else_branch {
            self.visit_expr(else_branch);
        }
    }

    fn visit_expr(&mut self, expr: &'ast Expr) {
        visit::visit_expr(self, expr);
    }
}

/// Reports every suspension in a position that cannot be resumed.
pub fn check_positions(body: &syn::Block, errors: &mut Errors) {
    let mut checker = Checker {
        errors,
        context: Vec::new(),
    };
    checker.visit_block(body);
}
