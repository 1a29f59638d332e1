//! Stage 4, analysis: liveness — which variables each block needs at its entry, and so
//! which locals each resume point keeps in the sealed state — and the checks that need it:
//! locals a suspension cannot keep ([`check_stored`]), locals not assigned on every path
//! ([`check_assigned`]), jumps that would carry a shadowing binding ([`check_jumps`]) and
//! pattern bindings that hide a local still needed after them ([`check_shadowing`]).
//! Code generation runs only when all of them pass.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use syn::parse::Parser;

use super::cfg::*;
use super::lower::names::{collect_let_bindings, pattern_bindings};
use crate::internals::errors::Errors;

/// The result of the analysis.
pub struct Liveness {
    /// Variables live at each block's entry.
    pub live_in: Vec<BTreeSet<VarId>>,
    /// Variables live after each item of each block.
    pub live_after_item: Vec<Vec<BTreeSet<VarId>>>,
    /// Bindings of borrowed `match`/`if let` arms ([`DerivedLeaf::rematch`]) live at each
    /// block's entry: matched again there, never carried (so absent from `live_in`).
    pub rematched: Vec<BTreeSet<VarId>>,
}

impl Liveness {
    /// The variables a suspension stores (live at its resume block, minus the answer and
    /// the arguments, which are re-bound from the request).
    pub fn stored(&self, cfg: &Cfg, site: &Site) -> Vec<VarId> {
        self.live_in[site.resume]
            .iter()
            .copied()
            .filter(|var| *var != site.answer && !cfg.vars[*var].arg)
            .collect()
    }
}

fn edge_live(cfg: &Cfg, live_in: &[BTreeSet<VarId>], edge: &Edge) -> BTreeSet<VarId> {
    match edge {
        Edge::Block(block) => live_in[*block].clone(),
        Edge::Inline { body, dest, then } => {
            let mut live = live_in[*then].clone();
            if let Dest::Var(var) = dest {
                live.remove(var);
            }
            for var in &body.assigns {
                live.remove(var);
            }
            live.extend(jumps_live(cfg, live_in, body));
            live.extend(body.uses.iter().copied());
            live
        }
    }
}

fn jumps_live(cfg: &Cfg, live_in: &[BTreeSet<VarId>], code: &Code) -> BTreeSet<VarId> {
    let mut live = BTreeSet::new();
    for jump in &code.jumps {
        let jump = &cfg.jumps[*jump];
        live.extend(
            live_in[jump.target]
                .iter()
                .copied()
                .filter(|var| Some(*var) != jump.value),
        );
    }
    live
}

fn term_live(cfg: &Cfg, live_in: &[BTreeSet<VarId>], term: &Term) -> BTreeSet<VarId> {
    match term {
        Term::Goto(block) => live_in[*block].clone(),
        Term::If {
            cond,
            then_edge,
            else_edge,
            then_binds,
        } => {
            let mut live = edge_live(cfg, live_in, then_edge);
            for bind in then_binds {
                live.remove(bind);
            }
            live.extend(edge_live(cfg, live_in, else_edge));
            live.extend(cond.uses.iter().copied());
            live.extend(jumps_live(cfg, live_in, cond));
            live
        }
        Term::Match { scrutinee, arms } => {
            let mut live = BTreeSet::new();
            for arm in arms {
                let mut arm_live = edge_live(cfg, live_in, &arm.edge);
                for bind in &arm.binds {
                    arm_live.remove(bind);
                }
                if let Some(guard) = &arm.guard {
                    arm_live.extend(guard.uses.iter().copied());
                }
                live.extend(arm_live);
            }
            live.extend(scrutinee.uses.iter().copied());
            live.extend(jumps_live(cfg, live_in, scrutinee));
            live
        }
        Term::ForNext {
            iter,
            binds,
            body,
            exit,
            ..
        } => {
            let mut live = live_in[*body].clone();
            for bind in binds {
                live.remove(bind);
            }
            live.extend(live_in[*exit].iter().copied());
            live.insert(*iter);
            live
        }
        Term::Advance { snap, body, exit } => {
            let mut live = live_in[*body].clone();
            live.extend(live_in[*exit].iter().copied());
            live.insert(*snap);
            live
        }
        Term::Suspend(site) => {
            let site = &cfg.sites[*site];
            let mut live = live_in[site.resume].clone();
            live.remove(&site.answer);
            for request in &site.requests {
                live.extend(request.input.uses.iter().copied());
                live.extend(jumps_live(cfg, live_in, &request.input));
            }
            live
        }
        Term::Return(code) => {
            let mut live: BTreeSet<VarId> = code.uses.iter().copied().collect();
            live.extend(jumps_live(cfg, live_in, code));
            live
        }
        Term::Unreachable => BTreeSet::new(),
    }
}

fn item_step(
    cfg: &Cfg,
    live_in: &[BTreeSet<VarId>],
    item: &Item,
    after: &BTreeSet<VarId>,
) -> BTreeSet<VarId> {
    match item {
        Item::Stmt(code) => {
            let mut live = after.clone();
            live.extend(code.uses.iter().copied());
            live.extend(jumps_live(cfg, live_in, code));
            live
        }
        Item::Let {
            init,
            diverge,
            defs,
            ..
        } => {
            let mut live = after.clone();
            for def in defs {
                live.remove(def);
            }
            for code in init.iter().chain(diverge.iter()) {
                live.extend(code.uses.iter().copied());
                live.extend(jumps_live(cfg, live_in, code));
            }
            live
        }
        Item::Assign { var, value } => {
            let mut live = after.clone();
            live.remove(var);
            live.extend(value.uses.iter().copied());
            live.extend(jumps_live(cfg, live_in, value));
            live
        }
    }
}

/// Computes liveness to a fixed point.
pub fn analyze(cfg: &Cfg) -> Liveness {
    let count = cfg.blocks.len();
    let mut live_in: Vec<BTreeSet<VarId>> = vec![BTreeSet::new(); count];
    let mut live_after_item: Vec<Vec<BTreeSet<VarId>>> = cfg
        .blocks
        .iter()
        .map(|block| vec![BTreeSet::new(); block.items.len()])
        .collect();
    loop {
        let mut changed = false;
        for block_id in (0..count).rev() {
            let block = &cfg.blocks[block_id];
            let mut live = match &block.term {
                Some(term) => term_live(cfg, &live_in, term),
                None => BTreeSet::new(),
            };
            for (index, item) in block.items.iter().enumerate().rev() {
                live_after_item[block_id][index] = live.clone();
                live = item_step(cfg, &live_in, item, &live);
            }
            if live != live_in[block_id] {
                live_in[block_id] = live;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // Bindings matched again from their scrutinee are never carried between blocks.
    let rematch = |var: &VarId| {
        cfg.vars[*var]
            .derived
            .is_some_and(|leaf| cfg.derived[leaf].rematch.is_some())
    };
    let mut rematched = Vec::with_capacity(count);
    for live in &mut live_in {
        rematched.push(live.iter().copied().filter(rematch).collect());
        live.retain(|var| !rematch(var));
    }
    for block in &mut live_after_item {
        for live in block {
            live.retain(|var| !rematch(var));
        }
    }
    Liveness {
        live_in,
        live_after_item,
        rematched,
    }
}

/// Reports locals that hold a borrow across a suspension.
pub fn check_stored(cfg: &Cfg, liveness: &Liveness, reachable: &[bool], errors: &mut Errors) {
    let mut reported = BTreeSet::new();
    for site in &cfg.sites {
        if !reachable[site.resume] {
            continue;
        }
        for var in liveness.stored(cfg, site) {
            let info = &cfg.vars[var];
            if info.shared && reported.insert(var) {
                let name = &info.ident;
                let mut error = syn::Error::new(
                    name.span(),
                    format!(
                        "`{name}` is an `Rc`/`Arc` handle kept across a suspension: the sealed state stores a copy of the value, \
                         so after resume the handles no longer share it and a change through one is lost to the others. \
                         Keep the value itself, unwrapped, in one local; for state shared by every call, take a `State<T>` parameter"
                    ),
                );
                error.combine(syn::Error::new(site.span, "the suspension is here"));
                errors.push(error);
                continue;
            }
            if let Some((what, advice)) = &info.unstorable
                && reported.insert(var)
            {
                let name = &info.ident;
                let mut error = syn::Error::new(
                    name.span(),
                    format!(
                        "`{name}` is {what}, kept across a suspension, which the sealed state cannot hold: {advice}"
                    ),
                );
                error.combine(syn::Error::new(site.span, "the suspension is here"));
                errors.push(error);
                continue;
            }
            if info.borrowed && reported.insert(var) {
                let name = &info.ident;
                let mut error = syn::Error::new(
                    name.span(),
                    format!(
                        "`{name}` holds a reference across a suspension; the sealed state can only hold owned values. \
                         Keep an owned copy (`let {name} = ....to_owned();` or `.clone()`), or borrow again after the suspension"
                    ),
                );
                error.combine(syn::Error::new(site.span, "the suspension is here"));
                errors.push(error);
            }
        }
    }
}

/// Reports locals the code reads before they are assigned on every path: a local live at
/// the entry that is neither an argument nor a `State<T>` parameter (`let x;` assigned in
/// one branch only, then kept across a suspension) would have no value to start with.
pub fn check_assigned(cfg: &Cfg, liveness: &Liveness, errors: &mut Errors) {
    let entry = liveness.live_in.first().into_iter().flatten();
    for var in entry {
        if cfg.args.contains(var) || cfg.states.contains(var) {
            continue;
        }
        let ident = &cfg.vars[*var].ident;
        errors.at(
            ident.span(),
            format!(
                "`{ident}` is needed after this point but may not be assigned on every path; \
                 initialize it where it is declared (`let {ident} = ..;`)"
            ),
        );
    }
}

/// Reports a `break`/`continue` inside kept-as-written code that rebinds a name the code
/// after the jump still needs: the jump would carry the inner binding instead of the outer
/// local. Visits code in the order the expansion emits it, so errors keep source order.
pub fn check_jumps(cfg: &Cfg, liveness: &Liveness, reachable: &[bool], errors: &mut Errors) {
    let check = |code: &Code, errors: &mut Errors| {
        for jump in &code.jumps {
            for var in &liveness.live_in[cfg.jumps[*jump].target] {
                let info = &cfg.vars[*var];
                let name = info.ident.to_string();
                if !info.hidden && code.inner.contains(&name) {
                    errors.at(
                        info.ident.span(),
                        format!(
                            "`{name}` is rebound inside the statement this `break`/`continue` leaves, \
                             but the code after it needs the outer `{name}`; rename the inner binding"
                        ),
                    );
                }
            }
        }
    };
    let check_edge = |edge: &Edge, errors: &mut Errors| {
        if let Edge::Inline { body, .. } = edge {
            check(body, errors);
        }
    };
    for (block_id, block) in cfg.blocks.iter().enumerate() {
        if !reachable[block_id] {
            continue;
        }
        for item in &block.items {
            match item {
                Item::Stmt(code) | Item::Assign { value: code, .. } => check(code, errors),
                Item::Let { init, diverge, .. } => init
                    .iter()
                    .chain(diverge)
                    .for_each(|code| check(code, errors)),
            }
        }
        match &block.term {
            Some(Term::If {
                cond,
                then_edge,
                else_edge,
                ..
            }) => {
                check(cond, errors);
                check_edge(then_edge, errors);
                check_edge(else_edge, errors);
            }
            Some(Term::Match { scrutinee, arms }) => {
                check(scrutinee, errors);
                for arm in arms {
                    if let Some(guard) = &arm.guard {
                        check(guard, errors);
                    }
                    check_edge(&arm.edge, errors);
                }
            }
            Some(Term::Suspend(site)) => {
                for request in &cfg.sites[*site].requests {
                    check(&request.input, errors);
                }
            }
            Some(Term::Return(code)) => check(code, errors),
            Some(
                Term::Goto(_) | Term::ForNext { .. } | Term::Advance { .. } | Term::Unreachable,
            )
            | None => {}
        }
    }
}

/// The names a pattern binds (`Some(v)`, `A(x) | B(x)`), from its tokens.
fn pattern_names(pat: &TokenStream) -> Vec<syn::Ident> {
    syn::Pat::parse_multi_with_leading_vert
        .parse2(pat.clone())
        .map(|pat| pattern_bindings(&pat))
        .unwrap_or_default()
}

/// The names the `let`s of a condition or guard bind (`let Some(v) = x && v > 0`).
fn condition_names(cond: &Code) -> Vec<syn::Ident> {
    let mut names = Vec::new();
    if let Ok(cond) = syn::parse2::<syn::Expr>(cond.tokens.clone()) {
        collect_let_bindings(&cond, &mut names);
    }
    names
}

/// Where the flow goes from inside a branch: the block it continues in, and the targets of
/// the jumps in its kept code.
fn edge_targets(cfg: &Cfg, edge: &Edge) -> Vec<BlockId> {
    match edge {
        Edge::Block(block) => vec![*block],
        Edge::Inline { body, then, .. } => body
            .jumps
            .iter()
            .map(|jump| cfg.jumps[*jump].target)
            .chain([*then])
            .collect(),
    }
}

/// Reports a binding of a lowered `match` arm, `if let`, `while let` or `for` pattern that
/// hides a local the code after it still needs. The generated code leaves the branch from
/// inside the pattern's scope, naming each local it passes on: there the name means the
/// binding, so the outer local would silently take the binding's value.
pub fn check_shadowing(cfg: &Cfg, liveness: &Liveness, reachable: &[bool], errors: &mut Errors) {
    let mut reported = BTreeSet::new();
    for (block_id, block) in cfg.blocks.iter().enumerate() {
        if !reachable[block_id] {
            continue;
        }
        // What each name means where the block's terminator runs.
        let mut visible = block.scope.clone();
        for item in &block.items {
            if let Item::Let { defs, .. } = item {
                visible.extend(
                    defs.iter()
                        .map(|def| (cfg.vars[*def].ident.to_string(), *def)),
                );
            }
        }
        let mut branches: Vec<(Vec<syn::Ident>, &[VarId], Vec<BlockId>)> = Vec::new();
        match &block.term {
            Some(Term::Match { arms, .. }) => {
                for arm in arms {
                    let mut names = pattern_names(&arm.pat);
                    if let Some(guard) = &arm.guard {
                        names.extend(condition_names(guard));
                    }
                    branches.push((names, &arm.binds, edge_targets(cfg, &arm.edge)));
                }
            }
            Some(Term::If {
                cond,
                then_edge,
                then_binds,
                ..
            }) => branches.push((
                condition_names(cond),
                then_binds,
                edge_targets(cfg, then_edge),
            )),
            Some(Term::ForNext {
                pat, binds, body, ..
            }) => branches.push((pattern_names(pat), binds, vec![*body])),
            _ => {}
        }
        for (names, binds, targets) in branches {
            for name in names {
                let text = name.to_string();
                let Some(outer) = visible
                    .iter()
                    .rev()
                    .find(|(visible, _)| *visible == text)
                    .map(|(_, var)| *var)
                else {
                    continue;
                };
                let needed = targets
                    .iter()
                    .any(|target| liveness.live_in[*target].contains(&outer));
                if needed && !binds.contains(&outer) && reported.insert(outer) {
                    errors.at(
                        name.span(),
                        format!(
                            "`{text}` here hides the outer `{text}`, which the code after this branch still needs; \
                             around a suspension the outer value would be replaced by this binding: rename one of them"
                        ),
                    );
                }
            }
        }
    }
}
