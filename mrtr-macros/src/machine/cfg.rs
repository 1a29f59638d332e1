//! The control-flow graph a body is lowered into.

use std::collections::BTreeSet;

use proc_macro2::{Span, TokenStream};
use syn::Ident;

use super::suspension::KindHint;

/// Index of a [`Var`].
pub type VarId = usize;
/// Index of a [`Block`].
pub type BlockId = usize;

/// A binding that may flow between blocks: a user local, an argument or a temporary.
#[derive(Debug, Clone)]
pub struct Var {
    /// The user's identifier (its span points at the definition), or a hygienic
    /// identifier for temporaries.
    pub ident: Ident,
    /// A temporary the user cannot name.
    pub hidden: bool,
    /// An unchanged function argument: re-bound from the request, never stored.
    pub arg: bool,
    /// Initialized from a borrow (`&x`) or annotated with a reference type.
    pub borrowed: bool,
    /// A shared-ownership handle (`Rc`/`Arc`): handles would stop aliasing once stored.
    pub shared: bool,
    /// A value that can never be sealed, read from its initializer: what it is (`a
    /// closure`, `a \`&mut\` reference returned by \`get_or_insert_with\``, `a lock guard`)
    /// and a rewrite that compiles.
    pub unstorable: Option<(String, String)>,
    /// A binding of a loop over borrowed items: never stored, re-derived from the loop's
    /// snapshot (index into [`Cfg::derived`]) at the start of every block that sees it.
    pub derived: Option<usize>,
    /// The type written for it (`let x: T`, a parameter's type), for the machine's
    /// description; `None` when rustc infers it.
    pub declared: Option<TokenStream>,
    /// What a hidden temporary holds, in words, for the machine's description (e.g. the
    /// items a suspending `for` loop has left).
    pub role: Option<String>,
}

/// One irrefutable part of a snapshot loop's pattern and the bindings it introduces.
#[derive(Debug, Clone)]
pub struct DerivedLeaf {
    /// The snapshot variable.
    pub snap: VarId,
    /// The sub-pattern, as the user wrote it.
    pub pat: TokenStream,
    /// Tuple indices from the item to this part.
    pub path: Vec<usize>,
    /// The variables the sub-pattern binds.
    pub vars: Vec<VarId>,
    /// For `let x = <borrow of loop bindings>;` in the body (`let line = line.trim();`):
    /// the initializer, evaluated again instead of viewing a slot.
    pub init: Option<TokenStream>,
    /// For the bindings of a borrowed `match`/`if let` arm that suspends (`if let Some(v) =
    /// &x`): the other locals the scrutinee reads, besides `snap`. Such bindings are matched
    /// again (`let <pat> = <init> else { unreachable }`) at the start of each block where
    /// they are live, and analysis tracks their own liveness ([`Var::derived`]).
    pub rematch: Option<Vec<VarId>>,
}

/// Rewritten code with the variables it reads and the jumps it contains.
#[derive(Debug, Clone, Default)]
pub struct Code {
    /// The tokens, with `?`, `return`, `break` and `continue` rewritten.
    pub tokens: TokenStream,
    /// Variables mentioned.
    pub uses: BTreeSet<VarId>,
    /// Jumps (indices into [`Cfg::jumps`]) inside the code.
    pub jumps: Vec<usize>,
    /// Names bound inside the code (a jump from there cannot name an outer local so named).
    pub inner: BTreeSet<String>,
    /// Variables a branch body assigns unconditionally at its top level (`x = ..;`): the
    /// branch initializes them, and does not read them unless `uses` says so.
    pub assigns: BTreeSet<VarId>,
    /// Contains a `return` or `?` that may end the whole flow here.
    pub exits: bool,
}

/// A straight-line piece of a block.
#[derive(Debug, Clone)]
pub enum Item {
    /// A statement kept as written.
    Stmt(Code),
    /// `let <pat> = <init> [else { .. }];`, whose bindings are CFG variables.
    Let {
        /// The pattern, with its type annotation.
        pat: TokenStream,
        /// The initializer.
        init: Option<Code>,
        /// The `else` block of `let .. else`.
        diverge: Option<Code>,
        /// The variables the pattern binds.
        defs: Vec<VarId>,
    },
    /// `<var> = <value>;`: a (possibly deferred) initialization that overwrites the variable.
    Assign {
        /// The assigned variable.
        var: VarId,
        /// The new value.
        value: Code,
    },
}

/// Where a value goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dest {
    /// Evaluated for its effects.
    Discard,
    /// Into a temporary.
    Var(VarId),
    /// The function's result.
    Return,
}

/// A branch of an `if`/`match`.
#[derive(Debug, Clone)]
pub enum Edge {
    /// Continue in a block.
    Block(BlockId),
    /// Evaluate `body` right in the branch, deliver it to `dest`, then go to `then`.
    Inline {
        /// The branch's code.
        body: Code,
        /// Where its value goes.
        dest: Dest,
        /// The join block.
        then: BlockId,
    },
}

/// One arm of a lowered `match` (also `if let`, `while let`).
#[derive(Debug, Clone)]
pub struct Arm {
    /// The pattern.
    pub pat: TokenStream,
    /// The guard.
    pub guard: Option<Code>,
    /// Variables the pattern binds (for block edges).
    pub binds: Vec<VarId>,
    /// Where the arm goes.
    pub edge: Edge,
}

/// One request of a suspension.
#[derive(Debug, Clone)]
pub struct Request {
    /// The `inputRequests` key.
    pub key: String,
    /// Builds the `Input<O>`.
    pub input: Code,
    /// Capabilities it may need.
    pub kinds: Vec<KindHint>,
}

/// A suspension point.
#[derive(Debug, Clone)]
pub struct Site {
    /// The requests, asked in one round.
    pub requests: Vec<Request>,
    /// Receives the answer (a tuple for `join!`).
    pub answer: VarId,
    /// Where the function continues once answered.
    pub resume: BlockId,
    /// The macro's span.
    pub span: Span,
}

/// How a block ends.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // one per block, built once per expansion
pub enum Term {
    /// Go to another block.
    Goto(BlockId),
    /// Two-way branch.
    If {
        /// The condition.
        cond: Code,
        /// Taken when true.
        then_edge: Edge,
        /// Taken when false.
        else_edge: Edge,
        /// Variables a let-chain condition binds for the `then` edge.
        then_binds: Vec<VarId>,
    },
    /// Multi-way branch.
    Match {
        /// The scrutinee.
        scrutinee: Code,
        /// The arms.
        arms: Vec<Arm>,
    },
    /// Next item of a stored iterator.
    ForNext {
        /// The iterator variable.
        iter: VarId,
        /// The loop pattern.
        pat: TokenStream,
        /// Variables the pattern binds.
        binds: Vec<VarId>,
        /// The loop body.
        body: BlockId,
        /// After the loop.
        exit: BlockId,
    },
    /// Next item of a loop snapshot: its bindings are derived in the body's blocks.
    Advance {
        /// The snapshot variable.
        snap: VarId,
        /// The loop body.
        body: BlockId,
        /// After the loop.
        exit: BlockId,
    },
    /// Suspend (index into [`Cfg::sites`]).
    Suspend(usize),
    /// Finish with a value.
    Return(Code),
    /// The block's last statement diverges (`return ..;`, `panic!(..)`).
    Unreachable,
}

/// A straight-line block.
#[derive(Debug, Clone)]
pub struct Block {
    /// Visible name → variable at the block's entry.
    pub scope: Vec<(String, VarId)>,
    /// The statements.
    pub items: Vec<Item>,
    /// How it ends (`None` only while lowering).
    pub term: Option<Term>,
}

/// A `break`/`continue` out of kept-as-written code into the lowered structure.
#[derive(Debug, Clone)]
pub struct Jump {
    /// The target block.
    pub target: BlockId,
    /// The loop's result variable (for `break value`).
    pub value: Option<VarId>,
}

/// A lowered body.
#[derive(Debug, Clone, Default)]
pub struct Cfg {
    /// All variables.
    pub vars: Vec<Var>,
    /// All blocks; block 0 is the entry; in source order.
    pub blocks: Vec<Block>,
    /// All suspension points, in source order.
    pub sites: Vec<Site>,
    /// All jumps out of opaque code.
    pub jumps: Vec<Jump>,
    /// Items declared in the body, hoisted to the top.
    pub items: Vec<TokenStream>,
    /// The argument variables, in parameter order.
    pub args: Vec<VarId>,
    /// The `State<T>` parameter variables, in parameter order.
    pub states: Vec<VarId>,
    /// The parts of snapshot loops' patterns.
    pub derived: Vec<DerivedLeaf>,
}

impl Cfg {
    /// The blocks `term` can continue in.
    pub fn successors(&self, block: BlockId) -> Vec<BlockId> {
        let mut out = Vec::new();
        for item in &self.blocks[block].items {
            let code = match item {
                Item::Stmt(code) => vec![code],
                Item::Let { init, diverge, .. } => init.iter().chain(diverge.iter()).collect(),
                Item::Assign { value, .. } => vec![value],
            };
            for code in code {
                out.extend(code.jumps.iter().map(|jump| self.jumps[*jump].target));
            }
        }
        let edge_target = |edge: &Edge, out: &mut Vec<BlockId>| match edge {
            Edge::Block(block) => out.push(*block),
            Edge::Inline { body, then, .. } => {
                out.extend(body.jumps.iter().map(|jump| self.jumps[*jump].target));
                out.push(*then);
            }
        };
        match &self.blocks[block].term {
            Some(Term::Goto(target)) => out.push(*target),
            Some(Term::If {
                cond,
                then_edge,
                else_edge,
                ..
            }) => {
                out.extend(cond.jumps.iter().map(|jump| self.jumps[*jump].target));
                edge_target(then_edge, &mut out);
                edge_target(else_edge, &mut out);
            }
            Some(Term::Match { scrutinee, arms }) => {
                out.extend(scrutinee.jumps.iter().map(|jump| self.jumps[*jump].target));
                for arm in arms {
                    edge_target(&arm.edge, &mut out);
                }
            }
            Some(Term::ForNext { body, exit, .. }) | Some(Term::Advance { body, exit, .. }) => {
                out.extend([*body, *exit])
            }
            Some(Term::Suspend(site)) => out.push(self.sites[*site].resume),
            Some(Term::Return(code)) => {
                out.extend(code.jumps.iter().map(|jump| self.jumps[*jump].target))
            }
            Some(Term::Unreachable) | None => {}
        }
        out
    }

    /// Blocks reachable from the entry, as a mask.
    pub fn reachable(&self) -> Vec<bool> {
        let mut seen = vec![false; self.blocks.len()];
        let mut stack = vec![0];
        while let Some(block) = stack.pop() {
            if block >= seen.len() || seen[block] {
                continue;
            }
            seen[block] = true;
            stack.extend(self.successors(block));
        }
        seen
    }
}
