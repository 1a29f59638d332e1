//! Where the suspensions are: whether a piece of code contains an `ask!`-like macro that
//! lowering must split, and whether an expression is pure enough to be evaluated after a
//! suspension that textually follows it.

use syn::visit::Visit;
use syn::{Expr, Stmt};

use crate::machine::suspension::suspension_kind;

/// Whether `node` contains a suspension in a position lowering handles (closures, async
/// blocks, items and other macros are rejected by the position check).
pub fn contains_suspension(visit_node: impl FnOnce(&mut Finder)) -> bool {
    let mut finder = Finder(false);
    visit_node(&mut finder);
    finder.0
}

/// Looks for suspension macros.
pub struct Finder(bool);

// Closures, async blocks and items are their own bodies: a suspension there is refused by
// the position check, never lowered.
impl<'ast> Visit<'ast> for Finder {
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        if suspension_kind(mac).is_some() {
            self.0 = true;
        }
    }
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Whether an expression contains a suspension lowering must split.
pub(super) fn expr_has(expr: &Expr) -> bool {
    contains_suspension(|finder| finder.visit_expr(expr))
}

/// Whether a block contains a suspension lowering must split.
pub(super) fn block_has(block: &syn::Block) -> bool {
    contains_suspension(|finder| finder.visit_block(block))
}

/// Whether a statement contains a suspension lowering must split.
pub(super) fn stmt_has(stmt: &Stmt) -> bool {
    contains_suspension(|finder| finder.visit_stmt(stmt))
}

/// Pure enough to be evaluated after a suspension that textually follows it: no calls,
/// no assignments, so moving it past the suspension changes nothing observable (an
/// arithmetic overflow or out-of-bounds index panics after the answer instead of before).
pub(super) fn is_pure(expr: &Expr) -> bool {
    match expr {
        Expr::Path(_) | Expr::Lit(_) => true,
        Expr::Unary(inner) => is_pure(&inner.expr),
        Expr::Index(index) => is_pure(&index.expr) && is_pure(&index.index),
        Expr::Binary(binary) => {
            !is_compound_assignment(&binary.op) && is_pure(&binary.left) && is_pure(&binary.right)
        }
        Expr::Paren(inner) => is_pure(&inner.expr),
        Expr::Group(inner) => is_pure(&inner.expr),
        Expr::Reference(inner) => is_pure(&inner.expr),
        Expr::Field(inner) => is_pure(&inner.base),
        Expr::Cast(inner) => is_pure(&inner.expr),
        Expr::Tuple(tuple) => tuple.elems.iter().all(is_pure),
        Expr::Array(array) => array.elems.iter().all(is_pure),
        _ => false,
    }
}

/// `+=` and its siblings: they write, so an expression using one is not pure.
pub(super) fn is_compound_assignment(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitXorAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}
