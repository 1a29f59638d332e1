//! Block building: the [`Lowerer`]'s cursor into the graph (new blocks, terminators,
//! items), its lexical scopes (declaring and resolving names), and turning kept-as-written
//! code into a [`Code`] with its redirections and the variables it reads.

use std::collections::BTreeSet;

use proc_macro2::Span;
use quote::{format_ident, quote};
use syn::{Expr, Ident};

use super::borrows::is_shared_name;
use super::names::mentioned;
use super::redirect::Redirect;
use super::{CodeNode, Lowerer};
use crate::machine::cfg::*;

impl<'e> Lowerer<'e> {
    /// A new variable, not yet visible under any name.
    pub(super) fn new_var(&mut self, ident: Ident, hidden: bool) -> VarId {
        self.cfg.vars.push(Var {
            ident,
            hidden,
            arg: false,
            borrowed: false,
            shared: false,
            unstorable: None,
            derived: None,
            declared: None,
            role: None,
        });
        self.cfg.vars.len() - 1
    }

    /// A temporary the user cannot name (an answer, a loop's result, a hoisted value).
    pub(super) fn temp(&mut self) -> VarId {
        self.temp_at(Span::call_site())
    }

    /// A temporary whose diagnostics (e.g. "cannot be kept across a suspension") point
    /// at `at`; it stays unnameable by the user.
    pub(super) fn temp_at(&mut self, at: Span) -> VarId {
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
    pub(super) fn declare(&mut self, ident: &Ident) -> VarId {
        let var = self.new_var(ident.clone(), false);
        if let Some(scope) = self.scopes.last_mut() {
            scope.push((ident.to_string(), var));
        }
        var
    }

    /// Every name visible here and the variable it means, innermost binding winning.
    pub(super) fn visible(&self) -> Vec<(String, VarId)> {
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
    pub(super) fn resolve(&self, names: &BTreeSet<String>) -> BTreeSet<VarId> {
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
    pub(super) fn new_block(&mut self) -> BlockId {
        self.cfg.blocks.push(Block {
            scope: Vec::new(),
            items: Vec::new(),
            term: None,
        });
        self.cfg.blocks.len() - 1
    }

    /// Continues lowering in `block`, whose entry sees the current scope.
    pub(super) fn enter(&mut self, block: BlockId) {
        self.cfg.blocks[block].scope = self.visible();
        self.cur = Some(block);
    }

    /// The block being filled; after a diverging statement, a fresh unreachable one.
    pub(super) fn current(&mut self) -> BlockId {
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
    pub(super) fn terminate(&mut self, term: Term) {
        let block = self.current();
        self.cfg.blocks[block].term = Some(term);
        self.cur = None;
    }

    /// Falls through to `target`, unless the current block already ended (after `return`,
    /// `break`, a diverging statement).
    pub(super) fn goto(&mut self, target: BlockId) {
        if self.cur.is_some() {
            self.terminate(Term::Goto(target));
        }
    }

    /// Appends a straight-line item to the current block.
    pub(super) fn push(&mut self, item: Item) {
        let block = self.current();
        self.cfg.blocks[block].items.push(item);
    }

    /// Rewrites kept-as-written code and records what it reads; `bound` names are local
    /// to it (pattern bindings of an inline arm).
    pub(super) fn code(&mut self, mut node: impl CodeNode, bound: &[Ident]) -> Code {
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
    pub(super) fn shares(&self, init: &Code) -> bool {
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
    pub(super) fn mark_borrowed(&mut self, vars: &[VarId], scrutinee_borrows: bool) {
        if scrutinee_borrows {
            for var in vars {
                self.cfg.vars[*var].borrowed = true;
            }
        }
    }

    /// A loop binding derived from a snapshot is read from the snapshot.
    /// A binding matched again from a borrowed scrutinee keeps its own liveness, and reads
    /// what the scrutinee reads.
    pub(super) fn map_derived(&self, vars: BTreeSet<VarId>) -> BTreeSet<VarId> {
        let mut out = BTreeSet::new();
        for var in vars {
            match self.cfg.vars[var].derived {
                Some(leaf) => {
                    let leaf = &self.cfg.derived[leaf];
                    out.insert(leaf.snap);
                    if let Some(also) = &leaf.rematch {
                        out.insert(var);
                        out.extend(also.iter().copied());
                    }
                }
                None => {
                    out.insert(var);
                }
            }
        }
        out
    }

    /// The bindings `vars` of a suspending arm of a borrowed `match`/`if let` (`if let
    /// Some(v) = &x`): when the scrutinee can be evaluated again (it reads only named
    /// locals, and neither suspends nor exits), they are matched again from it where they
    /// are needed instead of being carried, so a binding is never kept apart from its
    /// owner. Otherwise they are marked borrowed.
    pub(super) fn rematch(
        &mut self,
        vars: &[VarId],
        pat: &syn::Pat,
        scrutinee: &Code,
        borrows: bool,
    ) {
        if !borrows || vars.is_empty() {
            return;
        }
        let deps: Vec<VarId> = scrutinee.uses.iter().copied().collect();
        let storable = !deps.is_empty()
            && scrutinee.jumps.is_empty()
            && !scrutinee.exits
            && deps.iter().all(|var| !self.cfg.vars[*var].hidden);
        if !storable {
            self.mark_borrowed(vars, true);
            return;
        }
        let leaf = self.cfg.derived.len();
        for var in vars {
            self.cfg.vars[*var].derived = Some(leaf);
        }
        let tokens = &scrutinee.tokens;
        self.cfg.derived.push(DerivedLeaf {
            snap: deps[0],
            pat: quote!((#pat)),
            path: Vec::new(),
            vars: vars.to_vec(),
            init: Some(quote!((#tokens) else { ::core::unreachable!() })),
            rematch: Some(deps[1..].to_vec()),
        });
    }

    /// Emits a value that needs no splitting into `dest`: a statement, a `let` of the
    /// destination temporary, or the block's `return`.
    pub(super) fn deliver(&mut self, value: Expr, dest: Dest) {
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
}
