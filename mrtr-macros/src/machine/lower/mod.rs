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
//!
//! Where each part lives: [`builder`] (blocks, scopes, kept code), [`stmts`] (statement
//! lists and `let`), [`exprs`] (splitting expressions, suspensions), [`branches`] (`if`,
//! `match`, blocks), [`loops`] (`loop`, `while`, `for`), [`redirect`] (`?`/`return`/`break`
//! in kept code), [`suspends`] and [`borrows`] (syntactic facts), [`names`] (mentions and
//! bindings), [`compact`] (source text for descriptions). This file keeps the entry point,
//! [`lower`], and the types the parts share.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Expr, Stmt};

use crate::internals::errors::Errors;
use crate::machine::cfg::*;
use crate::machine::parse::MachineFn;
use names::Mentions;

mod borrows;
mod branches;
mod builder;
mod compact;
mod exprs;
mod loops;
pub mod names;
mod redirect;
mod stmts;
mod suspends;

pub use compact::compact;

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
    let mut cfg = lowerer.cfg;
    widen_rematched(&mut cfg);
    cfg
}

/// Code that reads a binding matched again from its scrutinee ([`DerivedLeaf::rematch`])
/// also reads what the scrutinee reads. The binding is marked only once its arm is lowered,
/// so its uses are widened here, over the whole graph.
fn widen_rematched(cfg: &mut Cfg) {
    let deps: std::collections::BTreeMap<VarId, Vec<VarId>> = cfg
        .vars
        .iter()
        .enumerate()
        .filter_map(|(var, info)| {
            let leaf = &cfg.derived[info.derived?];
            let also = leaf.rematch.as_ref()?;
            Some((
                var,
                std::iter::once(leaf.snap)
                    .chain(also.iter().copied())
                    .collect(),
            ))
        })
        .collect();
    if deps.is_empty() {
        return;
    }
    let widen = |code: &mut Code| loop {
        let before = code.uses.len();
        let extra: Vec<VarId> = code
            .uses
            .iter()
            .filter_map(|var| deps.get(var))
            .flatten()
            .copied()
            .collect();
        code.uses.extend(extra);
        if code.uses.len() == before {
            break;
        }
    };
    let widen_edge = |edge: &mut Edge| {
        if let Edge::Inline { body, .. } = edge {
            widen(body);
        }
    };
    for block in &mut cfg.blocks {
        for item in &mut block.items {
            match item {
                Item::Stmt(code) | Item::Assign { value: code, .. } => widen(code),
                Item::Let { init, diverge, .. } => {
                    init.iter_mut().chain(diverge.iter_mut()).for_each(widen);
                }
            }
        }
        match &mut block.term {
            Some(Term::If {
                cond,
                then_edge,
                else_edge,
                ..
            }) => {
                widen(cond);
                widen_edge(then_edge);
                widen_edge(else_edge);
            }
            Some(Term::Match { scrutinee, arms }) => {
                widen(scrutinee);
                for arm in arms {
                    arm.guard.iter_mut().for_each(widen);
                    widen_edge(&mut arm.edge);
                }
            }
            Some(Term::Return(code)) => widen(code),
            _ => {}
        }
    }
    for site in &mut cfg.sites {
        for request in &mut site.requests {
            widen(&mut request.input);
        }
    }
}
