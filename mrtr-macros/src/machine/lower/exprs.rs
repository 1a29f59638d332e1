//! Expressions: splitting an expression at its suspensions. A value with a destination
//! goes through [`Lowerer::lower_value`]; a suspension inside a larger expression is hoisted
//! out in evaluation order (after a pure prefix), and each `ask!`-like macro ends its block
//! in a [`Term::Suspend`].

use proc_macro2::Span;
use syn::Expr;
use syn::spanned::Spanned;

use super::Lowerer;
use super::suspends::{expr_has, is_pure};
use crate::machine::cfg::*;
use crate::machine::suspension::{SuspensionKind, parse_suspension, suspension_kind};

impl Lowerer<'_> {
    /// Lowers an expression evaluated for `dest`.
    pub(super) fn lower_value(&mut self, expr: &Expr, dest: Dest) {
        if !expr_has(expr) {
            self.deliver(expr.clone(), dest);
            return;
        }
        match expr {
            Expr::If(_)
            | Expr::Match(_)
            | Expr::Loop(_)
            | Expr::While(_)
            | Expr::ForLoop(_)
            | Expr::Block(_) => self.lower_control(expr, dest),
            // `"aws" => region = ask!(..)?,`: a (deferred) initialization, as in a statement.
            Expr::Assign(assign) if self.assigned_var(&assign.left).is_some() => {
                let var = self.assigned_var(&assign.left).unwrap_or_default();
                let value = self.lower_expr(&assign.right);
                let value = self.code(value, &[]);
                self.push(Item::Assign { var, value });
                if dest != Dest::Discard {
                    self.deliver(syn::parse_quote!(()), dest);
                }
            }
            Expr::Return(ret) => {
                let value = match &ret.expr {
                    Some(value) => self.lower_expr(value),
                    None => syn::parse_quote!(()),
                };
                let code = self.code(value, &[]);
                self.terminate(Term::Return(code));
            }
            Expr::Break(brk) => {
                let value = brk.expr.as_ref().map(|value| self.lower_expr(value));
                let label = brk.label.as_ref().map(|l| l.ident.to_string());
                let target = match &label {
                    Some(name) => self
                        .loops
                        .iter()
                        .rev()
                        .find(|cx| cx.label.as_deref() == Some(name)),
                    None => self.loops.last(),
                }
                .map(|cx| (cx.exit, cx.result));
                let Some((exit, result)) = target else {
                    self.errors
                        .at(brk.span(), "`break` outside of a loop of this function");
                    return;
                };
                if let Some(value) = value {
                    self.deliver(value, result.map_or(Dest::Discard, Dest::Var));
                }
                self.goto(exit);
            }
            _ => {
                let residual = self.lower_expr(expr);
                self.deliver(residual, dest);
            }
        }
    }

    /// Lowers an expression that contains a suspension; returns what is left to evaluate
    /// once every suspension in it has been answered.
    pub(super) fn lower_expr(&mut self, expr: &Expr) -> Expr {
        if !expr_has(expr) {
            return expr.clone();
        }
        match expr {
            Expr::Macro(mac) => match suspension_kind(&mac.mac) {
                Some(kind) => self.lower_suspension(kind, &mac.mac),
                None => expr.clone(), // reported by the position check
            },
            Expr::If(_)
            | Expr::Match(_)
            | Expr::Loop(_)
            | Expr::While(_)
            | Expr::ForLoop(_)
            | Expr::Block(_) => {
                let temp = self.temp();
                self.lower_control(expr, Dest::Var(temp));
                let ident = self.cfg.vars[temp].ident.clone();
                syn::parse_quote!(#ident)
            }
            _ => {
                let mut residual = expr.clone();
                self.hoist(&mut residual);
                residual
            }
        }
    }

    /// Lowers the suspension-containing parts of `expr` in evaluation order.
    pub(super) fn hoist(&mut self, expr: &mut Expr) {
        let mut impure: Option<Span> = None;
        let mut child = |this: &mut Self, child: &mut Expr| {
            if expr_has(child) {
                if let Some(span) = impure {
                    let mut error = syn::Error::new(
                        child.span(),
                        "this suspension would run before code that comes first in evaluation order; \
                         bind the earlier part to a local first (`let value = ..;`)",
                    );
                    error.combine(syn::Error::new(span, "this part is evaluated first"));
                    this.errors.push(error);
                    return;
                }
                *child = this.lower_expr(child);
            } else if !is_pure(child) {
                impure = Some(child.span());
            }
        };
        match expr {
            Expr::Array(array) => array.elems.iter_mut().for_each(|e| child(self, e)),
            Expr::Tuple(tuple) => tuple.elems.iter_mut().for_each(|e| child(self, e)),
            Expr::Call(call) => {
                child(self, &mut call.func);
                call.args.iter_mut().for_each(|e| child(self, e));
            }
            Expr::MethodCall(call) => {
                child(self, &mut call.receiver);
                call.args.iter_mut().for_each(|e| child(self, e));
            }
            Expr::Binary(binary) => {
                child(self, &mut binary.left);
                child(self, &mut binary.right);
            }
            Expr::Unary(inner) => child(self, &mut inner.expr),
            Expr::Cast(inner) => child(self, &mut inner.expr),
            Expr::Paren(inner) => child(self, &mut inner.expr),
            Expr::Group(inner) => child(self, &mut inner.expr),
            Expr::Reference(inner) => child(self, &mut inner.expr),
            Expr::Field(inner) => child(self, &mut inner.base),
            Expr::Try(inner) => child(self, &mut inner.expr),
            Expr::Await(inner) => child(self, &mut inner.base),
            Expr::Index(index) => {
                child(self, &mut index.expr);
                child(self, &mut index.index);
            }
            Expr::Struct(strukt) => {
                for field in strukt.fields.iter_mut() {
                    child(self, &mut field.expr);
                }
                if let Some(rest) = &mut strukt.rest {
                    child(self, rest);
                }
            }
            Expr::Assign(assign) => {
                if expr_has(&assign.left) {
                    self.errors.at(
                        assign.left.span(),
                        "a suspension cannot be part of an assignment's target",
                    );
                }
                child(self, &mut assign.right);
            }
            Expr::Range(range) => {
                if let Some(start) = &mut range.start {
                    child(self, start);
                }
                if let Some(end) = &mut range.end {
                    child(self, end);
                }
            }
            Expr::Repeat(repeat) => child(self, &mut repeat.expr),
            Expr::Return(ret) => {
                if let Some(value) = &mut ret.expr {
                    child(self, value);
                }
            }
            Expr::Break(brk) => {
                if let Some(value) = &mut brk.expr {
                    child(self, value);
                }
            }
            Expr::Let(expr_let) => child(self, &mut expr_let.expr),
            other => self.errors.at(
                other.span(),
                "a suspension cannot be used in this kind of expression; bind it to a local first",
            ),
        }
    }

    /// Lowers one `ask!`/`sample!`/`roots!`/`join!`: its requests (with their keys) end the
    /// current block in a [`Term::Suspend`], and lowering continues in the resume block,
    /// where the returned expression (the answer temporary) holds the typed answer.
    pub(super) fn lower_suspension(&mut self, kind: SuspensionKind, mac: &syn::Macro) -> Expr {
        let specs = match parse_suspension(kind, mac) {
            Ok(specs) => specs,
            Err(error) => {
                self.errors.push(error);
                return syn::parse_quote!(());
            }
        };
        let mut requests = Vec::new();
        for spec in specs {
            let key = match &spec.key {
                Some(key) => key.value(),
                None => format!("{}_{}", spec.kind.as_str(), self.inputs),
            };
            self.inputs += 1;
            let input = self.code(spec.expr, &[]);
            requests.push(Request {
                key,
                input,
                kinds: spec.kinds,
            });
        }
        let answer = self.temp();
        let resume = self.new_block();
        let site = self.cfg.sites.len();
        self.cfg.sites.push(Site {
            requests,
            answer,
            resume,
            span: mac.span(),
        });
        self.terminate(Term::Suspend(site));
        self.enter(resume);
        let ident = self.cfg.vars[answer].ident.clone();
        syn::parse_quote!(#ident)
    }
}
