//! Stage 3, lowering: the body becomes a [`Cfg`]. Only statements that contain a suspension
//! are split into blocks; everything else is kept as written (with `?`, `return`, `break`
//! and `continue` redirected), so rustc checks the user's code as they wrote it.
//!
//! For
//!
//! ```ignore
//! let env = ask!(choice("Where?", ["staging", "prod"])).accepted()?;
//! if env == "prod" {
//!     ask!(confirm("Sure?")).accepted()?;
//! }
//! Ok(env)
//! ```
//!
//! lowering makes five blocks: B0 builds the first input and ends in `Term::Suspend(0)`;
//! B1 (its resume block) binds `env` from the answer and branches (`Term::If`); the `then`
//! block suspends again (`Term::Suspend(1)`), whose resume block goes to the join block,
//! which returns `Ok(env)` (`Term::Return`). Each `let`, assignment and kept statement is an
//! [`Item`] of its block; every name the user can write is a [`Var`] resolved through the
//! lexical scopes at the point it is written, so shadowing and nested blocks mean what rustc
//! would make them mean.
//!
//! What lowering decides, and where:
//! - which expressions to split: [`Lowerer::lower_value`] for a value with a destination,
//!   [`Lowerer::hoist`] for a suspension inside a larger expression (after a pure prefix);
//! - control flow: `if`/`match`/loops in [`Lowerer::lower_control`], each branch through
//!   [`Lowerer::branch`], which keeps a branch without suspensions inline ([`Edge::Inline`]);
//! - `for` loops: over owned items the iterator is stored ([`Lowerer::lower_owned_loop`]),
//!   over borrowed items a snapshot is stored and the bindings are derived again after every
//!   suspension ([`Lowerer::lower_snapshot_loop`]);
//! - what a local is: borrowed, a shared `Rc`/`Arc` handle, or derived — facts analysis
//!   uses to refuse keeping it (stage 4).
//!
//! Constructs that cannot be split are refused here with a spanned error; positions where no
//! resume point can exist were refused before, by the position check (stage 2).

use std::collections::BTreeSet;

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, Ident, Pat, Stmt, Token};

use crate::internals::errors::Errors;
use crate::machine::cfg::*;
use crate::machine::parse::MachineFn;
use crate::machine::suspension::{SuspensionKind, parse_suspension, suspension_kind};
use names::{Mentions, collect_let_bindings, mentioned, pattern_bindings};

pub mod names;

/// A loop being lowered, for the `break`/`continue` inside it.
struct LoopCx {
    /// Its label without the `'`, if any.
    label: Option<String>,
    /// Where `continue` goes: the block that takes the next item or tests the condition.
    header: BlockId,
    /// Where `break` goes.
    exit: BlockId,
    /// The temporary a `break value` delivers to (a `loop` used as a value).
    result: Option<VarId>,
}

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
fn expr_has(expr: &Expr) -> bool {
    contains_suspension(|finder| finder.visit_expr(expr))
}

/// Whether a block contains a suspension lowering must split.
fn block_has(block: &syn::Block) -> bool {
    contains_suspension(|finder| finder.visit_block(block))
}

/// Whether a statement contains a suspension lowering must split.
fn stmt_has(stmt: &Stmt) -> bool {
    contains_suspension(|finder| finder.visit_stmt(stmt))
}

/// Pure enough to be evaluated after a suspension that textually follows it: no calls,
/// no assignments, so moving it past the suspension changes nothing observable (an
/// arithmetic overflow or out-of-bounds index panics after the answer instead of before).
fn is_pure(expr: &Expr) -> bool {
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
fn is_compound_assignment(op: &syn::BinOp) -> bool {
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

/// Methods whose iterators yield (or borrow from) the receiver's data: a suspending loop
/// over them keeps a snapshot of the items instead of the iterator.
const BORROWING_METHODS: &[&str] = &[
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
const MUTATING_METHODS: &[&str] = &["iter_mut", "values_mut", "chunks_mut", "as_mut_slice"];

/// How a `for` loop's iterable yields its items.
enum Items {
    /// Owned items (ranges, `into_iter()`, a moved collection).
    Owned,
    /// Borrowed items (`&v`, `.iter()`, `.keys()`, `.lines()`, ...).
    Borrowed,
    /// `&mut` items, at this span.
    Mutable(Span),
}

/// Classifies a `for` loop's iterable by its syntax: `&v`/`.iter()`-like methods borrow,
/// `&mut v`/`.iter_mut()`-like ones borrow mutably, anything else is taken as owned.
fn loop_items(expr: &Expr) -> Items {
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
fn pattern_parts(pat: &Pat, path: &mut Vec<usize>, parts: &mut Vec<(Pat, Vec<usize>)>) {
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
fn snapshot_item(pat: &Pat, counter: &mut usize) -> (TokenStream, TokenStream) {
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
fn mut_binding(pat: &Pat) -> Option<Span> {
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

/// Methods of the standard library that return a borrow of their receiver.
const BORROW_RETURNING_METHODS: &[&str] = &[
    "as_str",
    "as_slice",
    "as_ref",
    "as_deref",
    "as_bytes",
    "as_path",
    "as_os_str",
    "trim",
    "trim_start",
    "trim_end",
    "trim_matches",
    "strip_prefix",
    "strip_suffix",
    "first",
    "last",
    "iter",
    "keys",
    "values",
    "lines",
    "chars",
    "split",
    "split_whitespace",
    "split_once",
];

/// Whether a `match`/`if let` scrutinee hands out references to its bindings: a borrow,
/// or a lookup (`map.get(..)`, `items.iter().find(..)`) that returns one.
fn scrutinee_borrows(scrutinee: &Expr) -> bool {
    borrows(scrutinee)
        || matches!(scrutinee, Expr::MethodCall(call)
            if ["get", "find"].contains(&call.method.to_string().as_str()))
}

/// Methods whose result borrows from wherever their receiver borrows from.
const BORROW_PRESERVING_METHODS: &[&str] = &[
    "unwrap",
    "expect",
    "unwrap_or",
    "unwrap_or_default",
    "unwrap_or_else",
    "ok",
    "ok_or",
    "ok_or_else",
    "rev",
    "skip",
    "take",
    "peekable",
];

/// Whether an initializer syntactically evaluates to a borrow (`&x`, `s.as_str()`,
/// `Cow::Borrowed(..)`): such a local cannot be kept across a suspension.
fn borrows(init: &Expr) -> bool {
    match init {
        Expr::Reference(_) => true,
        Expr::Paren(inner) => borrows(&inner.expr),
        Expr::Group(inner) => borrows(&inner.expr),
        Expr::MethodCall(call) => {
            let method = call.method.to_string();
            BORROW_RETURNING_METHODS.contains(&method.as_str())
                // `x.as_deref().unwrap_or("none")` still borrows from `x`.
                || (BORROW_PRESERVING_METHODS.contains(&method.as_str()) && borrows(&call.receiver))
        }
        Expr::Try(inner) => borrows(&inner.expr),
        Expr::Call(call) => matches!(&*call.func, Expr::Path(path)
            if path.path.segments.len() >= 2
                && path.path.segments.last().is_some_and(|s| s.ident == "Borrowed")
                && path.path.segments.iter().rev().nth(1).is_some_and(|s| s.ident == "Cow")),
        _ => false,
    }
}

/// `Rc` or `Arc`: the path segment of a shared-ownership constructor or type.
fn is_shared_name(ident: &Ident) -> bool {
    ident == "Rc" || ident == "Arc"
}

/// Whether a declared type is a shared-ownership handle (`Rc<..>`, `Arc<..>`).
fn is_shared_type(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(path)
        if path.path.segments.last().is_some_and(|s| is_shared_name(&s.ident)))
}

/// Whether a declared type names a non-`'static` lifetime (`Cow<'_, str>`, `&'a T`).
/// Elided references (`&str`) are not flagged: they may hold string literals.
fn type_borrows(ty: &syn::Type) -> bool {
    struct Find(bool);
    impl<'ast> Visit<'ast> for Find {
        fn visit_lifetime(&mut self, lifetime: &'ast syn::Lifetime) {
            if lifetime.ident != "static" {
                self.0 = true;
            }
        }
    }
    let mut find = Find(false);
    find.visit_type(ty);
    find.0
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

/// Whether a statement syntactically never completes.
fn diverges(stmt: &Stmt) -> bool {
    let panics = |mac: &syn::Macro| {
        mac.path.segments.last().is_some_and(|segment| {
            ["panic", "unreachable", "todo", "unimplemented"]
                .contains(&segment.ident.to_string().as_str())
        })
    };
    match stmt {
        Stmt::Expr(Expr::Return(_) | Expr::Break(_) | Expr::Continue(_), _) => true,
        Stmt::Expr(Expr::Macro(mac), _) => panics(&mac.mac),
        Stmt::Macro(mac) => panics(&mac.mac),
        _ => false,
    }
}

/// Redirects `?`, `return`, `break` and `continue` in kept-as-written code: inside the
/// dispatch loop they would leave the wrong loop or return the wrong type, so a `break` or
/// `continue` to a lowered loop becomes a `__mrtr_jump!(id ..)` marker (turned into a
/// transition by code generation) and `?`/`return` go through the runtime's `Branch`.
struct Redirect<'l> {
    /// The lowered loops around the code, innermost last.
    loops: &'l [LoopCx],
    /// Labels of loops inside the code (`None` for unlabeled ones).
    inner_loops: Vec<Option<String>>,
    /// Labels of labeled blocks inside the code.
    inner_blocks: Vec<String>,
    /// The graph's jump table, which new markers are added to.
    jumps: &'l mut Vec<Jump>,
    /// The jumps this code created (recorded in its [`Code::jumps`]).
    created: Vec<usize>,
    /// A `return` or `?` was redirected: the code may end the flow ([`Code::exits`]).
    exits: bool,
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
                *expr = Expr::Verbatim(quote_spanned! {span=>
                    (match ::mrtr::__private::Branch::branch(#inner) {
                        ::core::ops::ControlFlow::Continue(#value) => #value,
                        ::core::ops::ControlFlow::Break(#residual) => {
                            return ::core::result::Result::Ok(::mrtr::__private::Step::Done(
                                ::mrtr::__private::FromResidual::from_residual(#residual),
                            ));
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
                *expr = Expr::Verbatim(quote_spanned! {span=>
                    return ::core::result::Result::Ok(::mrtr::__private::Step::Done(#value))
                });
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

/// Lowers a function body: a cursor into the [`Cfg`] being built, plus the lexical context
/// (scopes and enclosing loops) needed to resolve names and jumps.
pub struct Lowerer<'e> {
    /// The graph built so far.
    cfg: Cfg,
    /// Where constructs that cannot be split are reported.
    errors: &'e mut Errors,
    /// Lexical scopes, innermost last: each name visible there and the variable it means.
    scopes: Vec<Vec<(String, VarId)>>,
    /// The loops around the code being lowered, innermost last.
    loops: Vec<LoopCx>,
    /// The block being filled; `None` after a terminator, until the next [`Self::enter`].
    cur: Option<BlockId>,
    /// Requests made so far: numbers the default keys (`ask_0`, `sample_1`, ...).
    inputs: usize,
}

impl<'e> Lowerer<'e> {
    /// A new variable, not yet visible under any name.
    fn new_var(&mut self, ident: Ident, hidden: bool) -> VarId {
        self.cfg.vars.push(Var {
            ident,
            hidden,
            arg: false,
            borrowed: false,
            shared: false,
            derived: None,
            declared: None,
            role: None,
        });
        self.cfg.vars.len() - 1
    }

    /// A temporary the user cannot name (an answer, a loop's result, a hoisted value).
    fn temp(&mut self) -> VarId {
        self.temp_at(Span::call_site())
    }

    /// A temporary whose diagnostics (e.g. "cannot be kept across a suspension") point
    /// at `at`; it stays unnameable by the user.
    fn temp_at(&mut self, at: Span) -> VarId {
        let id = self.cfg.vars.len();
        let ident = format_ident!("__mrtr_t{}", id, span = Span::mixed_site().located_at(at));
        let var = self.new_var(ident.clone(), true);
        if let Some(scope) = self.scopes.last_mut() {
            scope.push((ident.to_string(), var));
        }
        var
    }

    /// A user binding: a new variable, visible as `ident` in the innermost scope (so it
    /// shadows an outer one of the same name).
    fn declare(&mut self, ident: &Ident) -> VarId {
        let var = self.new_var(ident.clone(), false);
        if let Some(scope) = self.scopes.last_mut() {
            scope.push((ident.to_string(), var));
        }
        var
    }

    /// Every name visible here and the variable it means, innermost binding winning.
    fn visible(&self) -> Vec<(String, VarId)> {
        let mut out: Vec<(String, VarId)> = Vec::new();
        for scope in &self.scopes {
            for (name, var) in scope {
                out.retain(|(existing, _)| existing != name);
                out.push((name.clone(), *var));
            }
        }
        out
    }

    /// The variables `names` mean here; names that are not locals (functions, constants,
    /// items) resolve to nothing.
    fn resolve(&self, names: &BTreeSet<String>) -> BTreeSet<VarId> {
        let visible = self.visible();
        names
            .iter()
            .filter_map(|name| {
                visible
                    .iter()
                    .find(|(visible_name, _)| visible_name == name)
                    .map(|(_, var)| *var)
            })
            .collect()
    }

    /// A new, empty, unterminated block (entered later with [`Self::enter`]).
    fn new_block(&mut self) -> BlockId {
        self.cfg.blocks.push(Block {
            scope: Vec::new(),
            items: Vec::new(),
            term: None,
        });
        self.cfg.blocks.len() - 1
    }

    /// Continues lowering in `block`, whose entry sees the current scope.
    fn enter(&mut self, block: BlockId) {
        self.cfg.blocks[block].scope = self.visible();
        self.cur = Some(block);
    }

    /// The block being filled; after a diverging statement, a fresh unreachable one.
    fn current(&mut self) -> BlockId {
        match self.cur {
            Some(block) => block,
            None => {
                let block = self.new_block();
                self.enter(block);
                block
            }
        }
    }

    /// Ends the current block with `term`; code after it goes to a new block.
    fn terminate(&mut self, term: Term) {
        let block = self.current();
        self.cfg.blocks[block].term = Some(term);
        self.cur = None;
    }

    /// Falls through to `target`, unless the current block already ended (after `return`,
    /// `break`, a diverging statement).
    fn goto(&mut self, target: BlockId) {
        if self.cur.is_some() {
            self.terminate(Term::Goto(target));
        }
    }

    /// Appends a straight-line item to the current block.
    fn push(&mut self, item: Item) {
        let block = self.current();
        self.cfg.blocks[block].items.push(item);
    }

    /// Rewrites kept-as-written code and records what it reads; `bound` names are local
    /// to it (pattern bindings of an inline arm).
    fn code(&mut self, mut node: impl CodeNode, bound: &[Ident]) -> Code {
        let (mut names, inner) = mentioned(|mentions| node.mention(mentions));
        for ident in bound {
            names.remove(&ident.to_string());
        }
        let mut redirect = Redirect {
            loops: &self.loops,
            inner_loops: Vec::new(),
            inner_blocks: Vec::new(),
            jumps: &mut self.cfg.jumps,
            created: Vec::new(),
            exits: false,
        };
        node.redirect(&mut redirect);
        let exits = redirect.exits;
        let jumps = redirect.created;
        let uses = self.map_derived(self.resolve(&names));
        Code {
            tokens: node.into_tokens(),
            uses,
            jumps,
            inner,
            assigns: BTreeSet::new(),
            exits,
        }
    }

    /// Whether an initializer makes a shared-ownership handle: `Rc::new(..)`,
    /// `Arc::clone(&x)`, or `x.clone()` of such a handle.
    fn shares(&self, init: &Code) -> bool {
        let Ok(expr) = syn::parse2::<Expr>(init.tokens.clone()) else {
            return false;
        };
        let mut expr = &expr;
        // `Rc::new(..).into()` and friends: look at the root of a method chain.
        while let Expr::MethodCall(call) = expr {
            if call.method == "clone" && call.args.is_empty() {
                if let Expr::Path(path) = &*call.receiver
                    && let Some(ident) = path.path.get_ident()
                {
                    let names: BTreeSet<String> = [ident.to_string()].into();
                    return self
                        .resolve(&names)
                        .iter()
                        .any(|var| self.cfg.vars[*var].shared);
                }
                return false;
            }
            expr = &call.receiver;
        }
        match expr {
            Expr::Call(call) => matches!(&*call.func, Expr::Path(path)
                if path.path.segments.iter().rev().nth(1).is_some_and(|s| is_shared_name(&s.ident))),
            _ => false,
        }
    }

    /// Pattern bindings of a scrutinee that borrows (`match &x`, `if let Some(v) =
    /// x.as_ref()`) are references: they cannot be kept across a suspension.
    fn mark_borrowed(&mut self, vars: &[VarId], scrutinee_borrows: bool) {
        if scrutinee_borrows {
            for var in vars {
                self.cfg.vars[*var].borrowed = true;
            }
        }
    }

    /// A loop binding derived from a snapshot is read from the snapshot.
    fn map_derived(&self, vars: BTreeSet<VarId>) -> BTreeSet<VarId> {
        vars.into_iter()
            .map(|var| match self.cfg.vars[var].derived {
                Some(leaf) => self.cfg.derived[leaf].snap,
                None => var,
            })
            .collect()
    }

    /// Emits a value that needs no splitting into `dest`: a statement, a `let` of the
    /// destination temporary, or the block's `return`.
    fn deliver(&mut self, value: Expr, dest: Dest) {
        match dest {
            Dest::Discard => {
                let code = self.code(value, &[]);
                let tokens = code.tokens;
                self.push(Item::Stmt(Code {
                    tokens: quote!(#tokens;),
                    ..code
                }));
            }
            Dest::Var(var) => {
                let code = self.code(value, &[]);
                let ident = self.cfg.vars[var].ident.clone();
                self.push(Item::Let {
                    pat: quote!(#ident),
                    init: Some(code),
                    diverge: None,
                    defs: vec![var],
                });
            }
            Dest::Return => {
                let code = self.code(value, &[]);
                self.terminate(Term::Return(code));
            }
        }
    }

    /// Lowers a block's statements; the tail expression (or `()`) goes to `dest`. Items
    /// (`fn`, `struct`, `use`) are hoisted to the top of the generated function.
    fn lower_stmts(&mut self, stmts: &[Stmt], dest: Dest) {
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
    fn assigned_var(&self, left: &Expr) -> Option<VarId> {
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
    fn lower_local(&mut self, local: &syn::Local) {
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
        for def in &defs {
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

    /// Lowers an expression evaluated for `dest`.
    fn lower_value(&mut self, expr: &Expr, dest: Dest) {
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
    fn lower_expr(&mut self, expr: &Expr) -> Expr {
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
    fn hoist(&mut self, expr: &mut Expr) {
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
    fn lower_suspension(&mut self, kind: SuspensionKind, mac: &syn::Macro) -> Expr {
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

    /// Lowers a branch body into an edge ending at `join`.
    fn branch(
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
    fn lower_control(&mut self, expr: &Expr, dest: Dest) {
        match expr {
            Expr::Block(block) => self.lower_block(&block.block, dest),
            Expr::If(expr_if) => self.lower_if(expr_if, dest),
            Expr::Match(expr_match) => {
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
                    self.mark_borrowed(&vars, scrutinee_borrows(&expr_match.expr));
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
            Expr::Loop(expr_loop) => {
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
            Expr::While(expr_while) => {
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
            Expr::ForLoop(expr_for) => match loop_items(&expr_for.expr) {
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
            },
            other => self.errors.at(
                other.span(),
                "a suspension cannot be used in this kind of expression",
            ),
        }
    }

    /// `for pat in owned`: the iterator itself (a range) or its items collected into a
    /// `VecIter` is stored, and the pattern binds ordinary locals.
    fn lower_owned_loop(&mut self, expr_for: &syn::ExprForLoop, dest: Dest) {
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
    fn open_loop(&mut self, stored: VarId, converted: Expr) -> (BlockId, BlockId, BlockId) {
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
    fn close_loop(
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
    fn lower_snapshot_loop(&mut self, expr_for: &syn::ExprForLoop, dest: Dest) {
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
            });
        }
        self.terminate(Term::Advance { snap, body, exit });
        self.close_loop(expr_for, (header, body, exit), dest);
    }

    /// Lowers a loop body between `header` and `exit`, then continues after the loop
    /// with its value (if the loop is used as one) delivered to `dest`.
    fn lower_loop_body(
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
    fn loop_body_into(
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
    fn finish_loop(&mut self, exit: BlockId, dest: Dest, result: Option<VarId>) {
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

    /// Lowers a `{ .. }` block: kept as written when nothing inside suspends; otherwise its
    /// statements get their own scope, and the code after it continues in a fresh block that
    /// sees the outer names again.
    fn lower_block(&mut self, block: &syn::Block, dest: Dest) {
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
    fn lower_if(&mut self, expr_if: &syn::ExprIf, dest: Dest) {
        let (cond, let_pat) = match &*expr_if.cond {
            Expr::Let(expr_let) => (self.lower_expr(&expr_let.expr), Some(&*expr_let.pat)),
            cond => (self.lower_expr(cond), None),
        };
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
            self.mark_borrowed(&then_vars, scrutinee_borrows(&expr_let.expr));
        }
        self.cur = Some(from);
        let else_edge = match &expr_if.else_branch {
            Some((_, else_expr)) => self.branch(else_expr, &[], dest, join).0,
            None => {
                self.cur = Some(from);
                self.branch(&syn::parse_quote!(()), &[], dest, join).0
            }
        };
        let code = self.code(cond, &[]);
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

/// Source text of `tokens` with the spacing a person writes: `Vec<(String, u32)>`, not
/// `Vec < (String , u32) >`. For descriptions, never for code.
///
/// ```ignore
/// assert_eq!(compact(quote!(&'static [Option<u8>])), "&'static [Option<u8>]");
/// ```
pub fn compact(tokens: TokenStream) -> String {
    use proc_macro2::{Delimiter, Spacing, TokenTree};
    fn walk(tokens: TokenStream, out: &mut String) {
        let mut previous_word = false;
        for tree in tokens {
            match tree {
                TokenTree::Ident(ident) => {
                    if previous_word {
                        out.push(' ');
                    }
                    out.push_str(&ident.to_string());
                    previous_word = true;
                }
                TokenTree::Literal(literal) => {
                    if previous_word {
                        out.push(' ');
                    }
                    out.push_str(&literal.to_string());
                    previous_word = true;
                }
                TokenTree::Punct(punct) => {
                    let c = punct.as_char();
                    if matches!(c, '=' | '+' | '-' | '*' | '/' | '%' | '|' | '^')
                        && punct.spacing() == Spacing::Alone
                        && !out.ends_with(' ')
                        && !out.ends_with(['=', '!', '<', '>', '-', '+', '*', '/', '|', '&'])
                    {
                        out.push(' ');
                        out.push(c);
                        out.push(' ');
                    } else {
                        out.push(c);
                        if matches!(c, ',' | ';') {
                            out.push(' ');
                        }
                    }
                    // A word right after punctuation is not spaced: `&mut`, `'static`, `::new`.
                    previous_word = false;
                }
                TokenTree::Group(group) => {
                    let (open, close) = match group.delimiter() {
                        Delimiter::Parenthesis => ("(", ")"),
                        Delimiter::Bracket => ("[", "]"),
                        Delimiter::Brace => ("{ ", " }"),
                        Delimiter::None => ("", ""),
                    };
                    let last_word = out
                        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .next()
                        .unwrap_or_default();
                    let after_keyword = ["mut", "dyn", "impl", "in"].contains(&last_word);
                    if previous_word && (group.delimiter() == Delimiter::Brace || after_keyword) {
                        out.push(' ');
                    }
                    out.push_str(open);
                    walk(group.stream(), out);
                    out.push_str(close);
                    previous_word = false;
                }
            }
        }
    }
    let mut out = String::new();
    walk(tokens, &mut out);
    out.trim_end().to_string()
}

/// Code that can be rewritten and scanned.
pub trait CodeNode: ToTokens {
    /// Applies the redirection.
    fn redirect(&mut self, redirect: &mut impl VisitMut);
    /// Collects mentions.
    fn mention(&self, mentions: &mut Mentions);
    /// The tokens.
    fn into_tokens(self) -> TokenStream
    where
        Self: Sized,
    {
        self.to_token_stream()
    }
}

impl CodeNode for Expr {
    fn redirect(&mut self, redirect: &mut impl VisitMut) {
        redirect.visit_expr_mut(self);
    }
    fn mention(&self, mentions: &mut Mentions) {
        mentions.visit_expr(self);
    }
}

impl CodeNode for Stmt {
    fn redirect(&mut self, redirect: &mut impl VisitMut) {
        redirect.visit_stmt_mut(self);
    }
    fn mention(&self, mentions: &mut Mentions) {
        mentions.visit_stmt(self);
    }
}

/// Lowers the body of `function` into a CFG.
pub fn lower(function: &MachineFn, errors: &mut Errors) -> Cfg {
    let mut lowerer = Lowerer {
        cfg: Cfg::default(),
        errors,
        scopes: vec![Vec::new()],
        loops: Vec::new(),
        cur: None,
        inputs: 0,
    };
    for param in &function.params {
        let var = lowerer.declare(&param.ident);
        lowerer.cfg.vars[var].arg = !param.mutable;
        lowerer.cfg.vars[var].declared = Some(param.ty.to_token_stream());
        lowerer.cfg.args.push(var);
    }
    for state in &function.states {
        let var = lowerer.declare(&state.ident);
        lowerer.cfg.vars[var].arg = true;
        lowerer.cfg.states.push(var);
    }
    let entry = lowerer.new_block();
    lowerer.enter(entry);
    lowerer.scopes.push(Vec::new());
    lowerer.lower_stmts(&function.body.stmts, Dest::Return);
    lowerer.scopes.pop();
    lowerer.cfg
}

#[cfg(test)]
mod compact_tests {
    use super::compact;
    use quote::quote;

    #[test]
    fn compact_spaces_like_a_person() {
        assert_eq!(compact(quote!(Vec<(String, u32)>)), "Vec<(String, u32)>");
        assert_eq!(compact(quote!(&'static str)), "&'static str");
        assert_eq!(compact(quote!(&mut [u8; 4])), "&mut [u8; 4]");
        assert_eq!(
            compact(quote!(names.iter().enumerate())),
            "names.iter().enumerate()"
        );
        assert_eq!(compact(quote!(0..n - 1)), "0..n - 1");
        assert_eq!(compact(quote!(domain(x))), "domain(x)");
    }
}
