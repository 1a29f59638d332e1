//! Kept-as-written code inside the dispatch loop: `?`, `return`, `break` and `continue`
//! are redirected so they leave the right loop and return the right type.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::punctuated::Punctuated;
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, Ident, Token};

use super::LoopCx;
use crate::machine::cfg::*;
use crate::machine::exit::exit_call;
use crate::machine::suspension::suspension_kind;

/// Redirects `?`, `return`, `break` and `continue` in kept-as-written code: inside the
/// dispatch loop they would leave the wrong loop or return the wrong type, so a `break` or
/// `continue` to a lowered loop becomes a `__mrtr_jump!(id ..)` marker (turned into a
/// transition by code generation) and `?`/`return` go through the runtime's `Branch`.
pub(super) struct Redirect<'l> {
    /// The lowered loops around the code, innermost last.
    pub(super) loops: &'l [LoopCx],
    /// Labels of loops inside the code (`None` for unlabeled ones).
    pub(super) inner_loops: Vec<Option<String>>,
    /// Labels of labeled blocks inside the code.
    pub(super) inner_blocks: Vec<String>,
    /// The graph's jump table, which new markers are added to.
    pub(super) jumps: &'l mut Vec<Jump>,
    /// The jumps this code created (recorded in its [`Code::jumps`]).
    pub(super) created: Vec<usize>,
    /// A `return` or `?` was redirected: the code may end the flow ([`Code::exits`]).
    pub(super) exits: bool,
}

impl Redirect<'_> {
    /// The lowered loop a `break`/`continue` with `label` leaves; `None` when it targets a
    /// loop or labeled block inside the kept code, which stays as written.
    fn target(&self, label: Option<&syn::Lifetime>) -> Option<&LoopCx> {
        match label {
            Some(label) => {
                let name = label.ident.to_string();
                if self
                    .inner_loops
                    .iter()
                    .any(|l| l.as_deref() == Some(&*name))
                    || self.inner_blocks.contains(&name)
                {
                    return None;
                }
                self.loops
                    .iter()
                    .rev()
                    .find(|cx| cx.label.as_deref() == Some(&*name))
            }
            None if !self.inner_loops.is_empty() => None,
            None => self.loops.last(),
        }
    }

    /// A jump marker to `target`, carrying `tokens` (a `break` value) into `value`.
    fn jump(&mut self, target: BlockId, value: Option<VarId>, tokens: TokenStream) -> Expr {
        let id = self.jumps.len();
        self.jumps.push(Jump { target, value });
        self.created.push(id);
        let id = proc_macro2::Literal::usize_unsuffixed(id);
        Expr::Verbatim(quote!(__mrtr_jump!(#id #tokens)))
    }

    /// Walks the body of a loop inside the kept code, whose unlabeled `break`s are its own.
    fn in_loop(&mut self, label: Option<&syn::Label>, walk: impl FnOnce(&mut Self)) {
        self.inner_loops
            .push(label.map(|label| label.name.ident.to_string()));
        walk(self);
        self.inner_loops.pop();
    }
}

impl VisitMut for Redirect<'_> {
    // Closures, async blocks and consts have their own `?`/`return`: not ours to redirect.
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        match expr {
            Expr::Closure(_) | Expr::Async(_) | Expr::Const(_) => {}
            Expr::Try(try_expr) => {
                self.exits = true;
                self.visit_expr_mut(&mut try_expr.expr);
                let inner = &try_expr.expr;
                let span = try_expr.question_token.span;
                let value = Ident::new("__mrtr_value", Span::mixed_site());
                let residual = Ident::new("__mrtr_residual", Span::mixed_site());
                // In parentheses: a bare `match` at the start of a statement would end the
                // expression there (`x? + y;`, `x?.len();` would not parse).
                let done = exit_call(
                    span,
                    "done",
                    quote_spanned!(span=>
                        ::mrtr::__private::FromResidual::from_residual(#residual)
                    ),
                );
                *expr = Expr::Verbatim(quote_spanned! {span=>
                    (match ::mrtr::__private::Branch::branch(#inner) {
                        ::core::ops::ControlFlow::Continue(#value) => #value,
                        ::core::ops::ControlFlow::Break(#residual) => {
                            return #done;
                        }
                    })
                });
            }
            Expr::Return(ret) => {
                self.exits = true;
                if let Some(value) = &mut ret.expr {
                    self.visit_expr_mut(value);
                }
                let value = match &ret.expr {
                    Some(value) => value.to_token_stream(),
                    None => quote!(()),
                };
                let span = ret.return_token.span;
                let done = exit_call(span, "done", value);
                *expr = Expr::Verbatim(quote_spanned!(span=> return #done));
            }
            Expr::Loop(inner) => {
                let label = inner.label.clone();
                self.in_loop(label.as_ref(), |this| this.visit_block_mut(&mut inner.body));
            }
            Expr::While(inner) => {
                self.visit_expr_mut(&mut inner.cond);
                let label = inner.label.clone();
                self.in_loop(label.as_ref(), |this| this.visit_block_mut(&mut inner.body));
            }
            Expr::ForLoop(inner) => {
                self.visit_expr_mut(&mut inner.expr);
                let label = inner.label.clone();
                self.in_loop(label.as_ref(), |this| this.visit_block_mut(&mut inner.body));
            }
            Expr::Block(inner) if inner.label.is_some() => {
                let name = inner.label.as_ref().map(|l| l.name.ident.to_string());
                self.inner_blocks.extend(name);
                self.visit_block_mut(&mut inner.block);
                self.inner_blocks.pop();
            }
            Expr::Break(brk) => {
                if let Some(value) = &mut brk.expr {
                    self.visit_expr_mut(value);
                }
                let Some(cx) = self.target(brk.label.as_ref()) else {
                    return;
                };
                let (exit, result) = (cx.exit, cx.result);
                let value = brk
                    .expr
                    .as_ref()
                    .map(|value| quote!(, #value))
                    .unwrap_or_default();
                *expr = self.jump(exit, result, value);
            }
            Expr::Continue(cont) => {
                let Some(cx) = self.target(cont.label.as_ref()) else {
                    return;
                };
                let header = cx.header;
                *expr = self.jump(header, None, TokenStream::new());
            }
            _ => visit_mut::visit_expr_mut(self, expr),
        }
    }

    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        // Format-like macros (`println!("{}", x?)`): redirect inside their arguments too.
        if suspension_kind(mac).is_some() {
            return;
        }
        let Ok(mut args) = mac.parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated)
        else {
            return;
        };
        let before = args.to_token_stream().to_string();
        for arg in args.iter_mut() {
            self.visit_expr_mut(arg);
        }
        if args.to_token_stream().to_string() != before {
            mac.tokens = args.to_token_stream();
        }
    }

    // Nested items have their own control flow.
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
