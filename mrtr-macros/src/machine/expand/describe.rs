//! The machine's description (`Machine::describe`), from the analysis the expansion uses:
//! each reachable suspension site with its keys and input kinds, the locals liveness says it
//! keeps, and the sites (or the end) the flow can reach from its resume block.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::quote;

use crate::machine::analyze::Liveness;
use crate::machine::cfg::*;
use crate::machine::lower::compact;

/// Where the flow can go from `start` before it suspends again.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reach {
    /// Suspension sites (indices into [`Cfg::sites`]) it can stop at next.
    pub sites: BTreeSet<usize>,
    /// Whether it can finish: a result, an early `return`, or `?` on an error.
    pub done: bool,
}

/// Every piece of kept-as-written code in a block, including inline branch bodies.
fn block_codes<'c>(cfg: &'c Cfg, block: &'c Block) -> Vec<(Option<Dest>, &'c Code)> {
    let mut codes: Vec<(Option<Dest>, &'c Code)> = Vec::new();
    for item in &block.items {
        match item {
            Item::Stmt(code) | Item::Assign { value: code, .. } => codes.push((None, code)),
            Item::Let { init, diverge, .. } => {
                codes.extend(init.iter().chain(diverge).map(|code| (None, code)))
            }
        }
    }
    let edge = |edge: &'c Edge, codes: &mut Vec<(Option<Dest>, &'c Code)>| {
        if let Edge::Inline { body, dest, .. } = edge {
            codes.push((Some(*dest), body));
        }
    };
    match &block.term {
        Some(Term::If {
            cond,
            then_edge,
            else_edge,
            ..
        }) => {
            codes.push((None, cond));
            edge(then_edge, &mut codes);
            edge(else_edge, &mut codes);
        }
        Some(Term::Match { scrutinee, arms }) => {
            codes.push((None, scrutinee));
            for arm in arms {
                codes.extend(arm.guard.iter().map(|guard| (None, guard)));
                edge(&arm.edge, &mut codes);
            }
        }
        Some(Term::Suspend(site)) => {
            codes.extend(cfg.sites[*site].requests.iter().map(|r| (None, &r.input)))
        }
        Some(Term::Return(code)) => codes.push((Some(Dest::Return), code)),
        _ => {}
    }
    codes
}

/// Walks the graph from `start` to the next suspensions and ends.
pub fn reach(cfg: &Cfg, start: BlockId) -> Reach {
    let mut reach = Reach::default();
    let mut seen = vec![false; cfg.blocks.len()];
    let mut stack = vec![start];
    while let Some(block_id) = stack.pop() {
        if block_id >= seen.len() || std::mem::replace(&mut seen[block_id], true) {
            continue;
        }
        let block = &cfg.blocks[block_id];
        for (dest, code) in block_codes(cfg, block) {
            reach.done |= code.exits || dest == Some(Dest::Return);
        }
        if let Some(Term::Suspend(site)) = &block.term {
            reach.sites.insert(*site);
            continue;
        }
        stack.extend(cfg.successors(block_id));
    }
    reach
}

/// `::mrtr::__private::SuspensionMap::new(..)` for the machine listed as `name`.
pub fn description(cfg: &Cfg, liveness: &Liveness, reachable: &[bool], name: &str) -> TokenStream {
    // Numbered like the points a reader sees: reachable sites only, in source order.
    let points: Vec<usize> = (0..cfg.sites.len())
        .filter(|site| reachable[cfg.sites[*site].resume])
        .collect();
    let next = |reach: Reach| {
        let mut next: Vec<TokenStream> = reach
            .sites
            .iter()
            .filter_map(|site| points.iter().position(|point| point == site))
            .map(|index| quote!(::mrtr::__private::Next::Suspension(#index)))
            .collect();
        if reach.done {
            next.push(quote!(::mrtr::__private::Next::Done));
        }
        quote!(&[#(#next),*])
    };
    let start = next(reach(cfg, 0));
    let suspensions = points.iter().map(|site_id| {
        let site = &cfg.sites[*site_id];
        let requests = site.requests.iter().map(|request| {
            let key = &request.key;
            let kinds = request.kinds.iter().map(|kind| kind.to_tokens());
            quote!(::mrtr::__private::RequestSite::new(#key, &[#(#kinds),*]))
        });
        let keeps = liveness.stored(cfg, site).into_iter().map(|var| {
            let info = &cfg.vars[var];
            let name = if info.hidden {
                String::new()
            } else {
                info.ident.to_string()
            };
            let ty = option(info.declared.clone().map(compact));
            let about = match (&info.role, info.hidden) {
                (Some(role), _) => Some(role.clone()),
                (None, true) => Some("a value computed before the suspension".to_string()),
                (None, false) => None,
            };
            let about = option(about);
            quote!(::mrtr::__private::KeptLocal::new(#name, #ty, #about))
        });
        let next = next(reach(cfg, site.resume));
        quote! {
            ::mrtr::__private::SuspensionPoint::new(&[#(#requests),*], &[#(#keeps),*], #next)
        }
    });
    quote! {
        ::mrtr::__private::SuspensionMap::new(#name, #start, &[#(#suspensions),*])
    }
}

/// `Some("text")` or `None`, as tokens.
fn option(text: Option<String>) -> TokenStream {
    match text {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    }
}

/// The name of a stored local's field in the state enum, as errors at seal time show it:
/// the local's own name, or what it is for a hidden one (a loop's items, a value computed
/// before the suspension).
pub(super) fn state_field_name(cfg: &Cfg, var: VarId) -> String {
    let info = &cfg.vars[var];
    match (&info.role, info.hidden) {
        (_, false) => info.ident.to_string(),
        (Some(role), true) => role.clone(),
        (None, true) => "a value computed before the suspension".to_string(),
    }
}
