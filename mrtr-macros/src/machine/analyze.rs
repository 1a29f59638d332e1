//! Liveness: which variables each block needs at its entry, and so which locals each
//! resume point keeps in the sealed state.

use std::collections::BTreeSet;

use super::cfg::*;
use super::errors::Errors;

/// The result of the analysis.
pub struct Liveness {
    /// Variables live at each block's entry.
    pub live_in: Vec<BTreeSet<VarId>>,
    /// Variables live after each item of each block.
    pub live_after_item: Vec<Vec<BTreeSet<VarId>>>,
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
    Liveness {
        live_in,
        live_after_item,
    }
}

/// Reports locals that hold a borrow across a suspension.
pub fn check_stored(cfg: &Cfg, liveness: &Liveness, reachable: &[bool], errors: &mut Errors) {
    let mut reported = BTreeSet::new();
    for (index, site) in cfg.sites.iter().enumerate() {
        if !reachable[site.resume] {
            continue;
        }
        let _ = index;
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
