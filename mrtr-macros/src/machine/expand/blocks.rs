//! Per-block code: each reachable block of the graph becomes one arm of the dispatch loop,
//! with its items, its terminator (a transition, a branch, a suspension or the result), the
//! `break`/`continue` markers of kept code turned into transitions, and the resume arm of
//! each suspension site.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;

use super::{Access, Gen, arg_source, field, hidden, state_variant, variant};
use crate::machine::cfg::*;
use crate::machine::exit::exit_call;
use crate::machine::parse::MachineFn;

impl Gen<'_> {
    pub(super) fn var_expr(&self, access: &Access, var: VarId) -> TokenStream {
        match access.idents.get(&var) {
            Some(ident) => quote!(#ident),
            None => {
                // `analyze::check_assigned` rejects every body where this could happen; if
                // it ever does, say so instead of generating code that reads nothing.
                let ident = &self.cfg.vars[var].ident;
                let message = format!(
                    "internal error in mrtr's macro: `{ident}` has no value at this point of the \
                     generated code; please report this function"
                );
                quote_spanned!(ident.span()=> ::core::compile_error!(#message))
            }
        }
    }

    pub(super) fn transition(&self, target: BlockId, access: &Access) -> TokenStream {
        let name = variant(target);
        let fields = self.liveness.live_in[target].iter().map(|var| {
            let field = field(*var);
            let value = self.var_expr(access, *var);
            quote!(#field: #value)
        });
        end(quote!(::mrtr::__private::BlockEnd::Next(__MrtrFlow::#name { #(#fields),* })))
    }

    /// Replaces `__mrtr_jump!(n[, value])` markers with transitions.
    pub(super) fn jumps(&self, tokens: TokenStream, access: &Access) -> TokenStream {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut out = TokenStream::new();
        let mut index = 0;
        while index < trees.len() {
            if let (
                TokenTree::Ident(ident),
                Some(TokenTree::Punct(bang)),
                Some(TokenTree::Group(group)),
            ) = (&trees[index], trees.get(index + 1), trees.get(index + 2))
                && ident == "__mrtr_jump"
                && bang.as_char() == '!'
            {
                out.extend(self.jump(group.stream(), access));
                index += 3;
                continue;
            }
            match &trees[index] {
                TokenTree::Group(group) => {
                    let mut inner =
                        Group::new(group.delimiter(), self.jumps(group.stream(), access));
                    inner.set_span(group.span());
                    out.extend([TokenTree::Group(inner)]);
                }
                other => out.extend([other.clone()]),
            }
            index += 1;
        }
        out
    }

    pub(super) fn jump(&self, marker: TokenStream, access: &Access) -> TokenStream {
        let mut trees = marker.into_iter();
        let id: usize = trees
            .next()
            .map(|tree| tree.to_string())
            .and_then(|text| text.parse().ok())
            .unwrap_or(0);
        let _comma = trees.next();
        let value: TokenStream = self.jumps(trees.collect(), access);
        let jump = &self.cfg.jumps[id];
        let mut access = access.clone();
        let bind = match (jump.value, value.is_empty()) {
            (Some(var), false) => {
                let ident = self.cfg.vars[var].ident.clone();
                access.idents.insert(var, ident.clone());
                quote!(let #ident = (#value);)
            }
            (None, false) => quote!(let _ = (#value);),
            (_, true) => TokenStream::new(),
        };
        let transition = self.transition(jump.target, &access);
        let group = Group::new(Delimiter::Brace, quote!(#bind #transition));
        quote!(#group)
    }

    pub(super) fn code(&self, code: &Code, access: &Access) -> TokenStream {
        // A jump that would carry a shadowing binding was refused by `analyze::check_jumps`.
        self.jumps(code.tokens.clone(), access)
    }

    pub(super) fn edge(&self, edge: &Edge, binds: &[VarId], access: &Access) -> TokenStream {
        match edge {
            Edge::Block(target) => {
                let mut access = access.clone();
                for bind in binds {
                    access
                        .idents
                        .insert(*bind, self.cfg.vars[*bind].ident.clone());
                }
                self.transition(*target, &access)
            }
            Edge::Inline { body, dest, then } => {
                // A deferred initialization in this branch (`"tonight" => start = ..,`)
                // of a local declared in another block: declare it here.
                let mut access = access.clone();
                let mut declare = TokenStream::new();
                for var in &body.assigns {
                    if !access.idents.contains_key(var) {
                        let ident = self.cfg.vars[*var].ident.clone();
                        declare.extend(quote!(let mut #ident;));
                        access.idents.insert(*var, ident);
                    }
                }
                let access = &access;
                let body = self.code(body, access);
                // The declarations are statements of their own, before the body's value is
                // used (`let t = let mut x; { .. };` would not parse).
                match dest {
                    Dest::Discard => {
                        let transition = self.transition(*then, access);
                        quote!(#declare #body; #transition)
                    }
                    Dest::Var(var) => {
                        let ident = self.cfg.vars[*var].ident.clone();
                        let mut access = access.clone();
                        access.idents.insert(*var, ident.clone());
                        let transition = self.transition(*then, &access);
                        quote!(#declare let #ident = #body; #transition)
                    }
                    Dest::Return => {
                        let done = exit_call(Span::call_site(), "done", body);
                        quote!(#declare return #done;)
                    }
                }
            }
        }
    }

    pub(super) fn block(&self, block_id: BlockId) -> TokenStream {
        let block = &self.cfg.blocks[block_id];
        let mut access = Access {
            idents: BTreeMap::new(),
            names: block.scope.clone(),
        };
        let mut bindings = Vec::new();
        for var in &self.liveness.live_in[block_id] {
            let info = &self.cfg.vars[*var];
            let visible = info.hidden
                || block
                    .scope
                    .iter()
                    .any(|(name, id)| id == var && info.ident == name);
            let ident = if visible {
                info.ident.clone()
            } else {
                hidden(*var)
            };
            let field = field(*var);
            bindings.push(quote!(#field: mut #ident));
            access.idents.insert(*var, ident);
        }
        let mut body = self.derivations(block_id, &access);
        for (index, item) in block.items.iter().enumerate() {
            let live_after = &self.liveness.live_after_item[block_id][index];
            body.extend(self.item(item, live_after, &mut access));
        }
        body.extend(self.term(block.term.as_ref(), &access));
        let name = variant(block_id);
        // In an `async` block whose output is the body's return type wrapped (see
        // `::mrtr::__private::Exit`): a `return`/`?` from another macro's expansion then
        // ends the body with its own value, as in the plain function.
        let exit = crate::machine::exit::exit_value();
        let flow_type = Ident::new("__mrtr_flow_type", Span::mixed_site());
        quote! {
            __MrtrFlow::#name { #(#bindings),* } => {
                ::mrtr::__private::block(#exit, #flow_type, async { #body }).await
            }
        }
    }

    /// Binds the loop variables of snapshot loops this block sees, from the snapshot, in
    /// the order they were declared (a later `let line = line.trim();` after `line`).
    pub(super) fn derivations(&self, block_id: BlockId, access: &Access) -> TokenStream {
        let block = &self.cfg.blocks[block_id];
        let mut out = TokenStream::new();
        let rematched = &self.liveness.rematched[block_id];
        // A binding matched again from a scrutinee that reads another such binding
        // (`if let Some(b) = &a.b` inside `if let Some(a) = &x`) comes after it: the inner
        // arm's leaf was recorded first, so emit in dependency order.
        let mut order: Vec<usize> = Vec::new();
        let mut pending: Vec<usize> = (0..self.cfg.derived.len()).collect();
        while !pending.is_empty() {
            let before = pending.len();
            pending.retain(|index| {
                let leaf = &self.cfg.derived[*index];
                let ready = leaf.rematch.as_ref().is_none_or(|also| {
                    std::iter::once(&leaf.snap).chain(also).all(|dep| {
                        self.cfg.vars[*dep].derived.is_none_or(|other| {
                            self.cfg.derived[other].rematch.is_none() || order.contains(&other)
                        })
                    })
                });
                if ready {
                    order.push(*index);
                }
                !ready
            });
            if pending.len() == before {
                order.append(&mut pending);
            }
        }
        for index in order {
            let leaf = &self.cfg.derived[index];
            if let Some(also) = &leaf.rematch {
                let needed = leaf.vars.iter().any(|var| rematched.contains(var));
                if !needed {
                    continue;
                }
                // What the scrutinee reads must be here under its own name.
                let here = std::iter::once(&leaf.snap).chain(also).all(|dep| {
                    let info = &self.cfg.vars[*dep];
                    match info.derived {
                        Some(other) if self.cfg.derived[other].rematch.is_some() => true,
                        _ => access
                            .idents
                            .get(dep)
                            .is_some_and(|ident| *ident == info.ident),
                    }
                });
                if here {
                    let pat = &leaf.pat;
                    let init = self.jumps(leaf.init.clone().unwrap_or_default(), access);
                    out.extend(quote!(let #pat = #init;));
                }
                continue;
            }
            // Each name must mean this binding here, or a later derived binding of the
            // same snapshot that shadows it (and is derived after it).
            let visible = leaf.vars.iter().all(|var| {
                let name = self.cfg.vars[*var].ident.to_string();
                block.scope.iter().any(|(n, v)| {
                    *n == name
                        && (v == var
                            || self.cfg.vars[*v].derived.is_some_and(|later| {
                                later > index && self.cfg.derived[later].snap == leaf.snap
                            }))
                })
            });
            if !visible || !self.liveness.live_in[block_id].contains(&leaf.snap) {
                continue;
            }
            let Some(snap) = access.idents.get(&leaf.snap) else {
                continue;
            };
            let pat = &leaf.pat;
            match &leaf.init {
                Some(init) => {
                    let init = self.jumps(init.clone(), access);
                    out.extend(quote!(let #pat = #init;));
                }
                None => {
                    let path = leaf.path.iter().map(|index| syn::Index::from(*index));
                    let current = step_try(quote!(::mrtr::__private::Snapshot::current(&#snap)));
                    out.extend(quote! {
                        let #pat = ::mrtr::__private::Slot::view(&(*#current) #(.#path)*);
                    });
                }
            }
        }
        out
    }

    pub(super) fn item(
        &self,
        item: &Item,
        live_after: &BTreeSet<VarId>,
        access: &mut Access,
    ) -> TokenStream {
        match item {
            Item::Stmt(code) => self.code(code, access),
            Item::Assign { var, value } => {
                let value = self.code(value, access);
                match access.idents.get(var) {
                    Some(ident) => quote!(#ident = #value;),
                    None => {
                        // Deferred initialization (`let x;` in an earlier block).
                        let ident = self.cfg.vars[*var].ident.clone();
                        access.idents.insert(*var, ident.clone());
                        quote!(let mut #ident = #value;)
                    }
                }
            }
            Item::Let {
                pat,
                init,
                diverge,
                defs,
            } => {
                let init = init.as_ref().map(|init| self.code(init, access));
                let diverge = diverge.as_ref().map(|diverge| {
                    let diverge = self.code(diverge, access);
                    quote!(else #diverge)
                });
                // `let .. else` forbids an initializer ending in `}`, which a rewritten `?`
                // (a `match`) does: `let Some(v) = names? else { .. }`.
                let init = match init {
                    Some(init) if diverge.is_some() && ends_in_brace(&init) => {
                        Some(quote!((#init)))
                    }
                    init => init,
                };
                // A shadowed local that is still needed moves to a hidden name first.
                let mut moves = TokenStream::new();
                for def in defs {
                    let name = self.cfg.vars[*def].ident.to_string();
                    let shadowed = access
                        .names
                        .iter()
                        .find(|(visible, _)| *visible == name)
                        .map(|(_, var)| *var);
                    if let Some(old) = shadowed
                        && old != *def
                        && live_after.contains(&old)
                    {
                        let current = self.var_expr(access, old);
                        let hidden = hidden(old);
                        moves.extend(quote!(let mut #hidden = #current;));
                        access.idents.insert(old, hidden);
                    }
                }
                let tokens = match (init, moves.is_empty()) {
                    (Some(init), true) => quote!(let #pat = #init #diverge;),
                    (Some(init), false) => quote! {
                        let __mrtr_init = #init;
                        #moves
                        let #pat = __mrtr_init #diverge;
                    },
                    (None, _) => quote!(#moves let #pat;),
                };
                for def in defs {
                    let info = &self.cfg.vars[*def];
                    let name = info.ident.to_string();
                    access.names.retain(|(visible, _)| *visible != name);
                    access.names.push((name, *def));
                    access.idents.insert(*def, info.ident.clone());
                }
                tokens
            }
        }
    }

    pub(super) fn term(&self, term: Option<&Term>, access: &Access) -> TokenStream {
        let Some(term) = term else {
            return quote!(::core::unreachable!());
        };
        match term {
            Term::Goto(target) => self.transition(*target, access),
            Term::If {
                cond,
                then_edge,
                else_edge,
                then_binds,
            } => {
                let cond = self.code(cond, access);
                let then_code = self.edge(then_edge, then_binds, access);
                let else_code = self.edge(else_edge, &[], access);
                quote!(if #cond { #then_code } else { #else_code })
            }
            Term::Match { scrutinee, arms } => {
                let scrutinee = self.code(scrutinee, access);
                let arms = arms.iter().map(|arm| {
                    let pat = &arm.pat;
                    let guard = arm.guard.as_ref().map(|guard| {
                        let guard = self.code(guard, access);
                        quote!(if #guard)
                    });
                    let body = self.edge(&arm.edge, &arm.binds, access);
                    quote!(#pat #guard => { #body })
                });
                quote!(match #scrutinee { #(#arms)* })
            }
            Term::ForNext {
                iter,
                pat,
                binds,
                body,
                exit,
            } => {
                let iter = self.var_expr(access, *iter);
                let into_body = self.edge(&Edge::Block(*body), binds, access);
                let into_exit = self.transition(*exit, access);
                quote! {
                    let __mrtr_next = ::core::iter::Iterator::next(&mut #iter);
                    match __mrtr_next {
                        ::core::option::Option::Some(#pat) => { #into_body }
                        ::core::option::Option::None => { #into_exit }
                    }
                }
            }
            Term::Advance { snap, body, exit } => {
                let snap = self.var_expr(access, *snap);
                let into_body = self.transition(*body, access);
                let into_exit = self.transition(*exit, access);
                quote! {
                    if ::mrtr::__private::Snapshot::advance(&mut #snap) { #into_body } else { #into_exit }
                }
            }
            Term::Suspend(site_id) => self.suspend(*site_id, access),
            Term::Return(code) => {
                let value = self.code(code, access);
                let done = exit_call(Span::call_site(), "done", value);
                quote!(return #done;)
            }
            Term::Unreachable => quote!(::core::unreachable!()),
        }
    }

    pub(super) fn suspend(&self, site_id: usize, access: &Access) -> TokenStream {
        let site = &self.cfg.sites[site_id];
        let mut out = TokenStream::new();
        let mut markers = Vec::new();
        let mut asks = Vec::new();
        for (index, request) in site.requests.iter().enumerate() {
            let input_ident = format_ident!("__mrtr_in{}", index, span = Span::mixed_site());
            let input = self.code(&request.input, access);
            out.extend(quote!(let #input_ident = #input;));
            let marker = format_ident!("o{}", index);
            markers.push(quote!(#marker: ::mrtr::__private::outcome_marker(&#input_ident)));
            let key = &request.key;
            asks.push((key.clone(), input_ident));
        }
        let stored = self.liveness.stored(self.cfg, site);
        // `kept` checks each local at its own span; a local that cannot be kept gets one
        // error there, and its field type becomes an error type, which silences the
        // follow-on errors of the state enum.
        let fields = stored.iter().map(|var| {
            let field = field(*var);
            let span = self.cfg.vars[*var].ident.span();
            let value = self.var_expr(access, *var);
            let kept = quote_spanned!(span=> ::mrtr::__private::kept);
            quote!(#field: #kept(#value))
        });
        let name = state_variant(site_id);
        let mut suspend = step_try(quote! {
            ::mrtr::__private::suspend_with(
                &mut __mrtr_slot,
                __MrtrState::#name { #(#fields,)* #(#markers),* },
                __MRTR_LITERALS,
            )
        });
        for (key, input) in asks {
            suspend = step_try(quote!((#suspend).ask(#key, #input)));
        }
        let end = end(quote!(::mrtr::__private::BlockEnd::Suspend(#suspend)));
        out.extend(end);
        out
    }

    pub(super) fn resume_arm(&self, site_id: usize, function: &MachineFn) -> TokenStream {
        let site = &self.cfg.sites[site_id];
        let stored = self.liveness.stored(self.cfg, site);
        let restored = stored.iter().map(|var| {
            let field = field(*var);
            let local = hidden(*var);
            quote!(#field: #local)
        });
        let mut takes = TokenStream::new();
        let mut answers = Vec::new();
        let mut marker_fields = Vec::new();
        for (index, request) in site.requests.iter().enumerate() {
            let marker = format_ident!("o{}", index);
            let marker_local = format_ident!("__mrtr_o{}", index, span = Span::mixed_site());
            let answer = format_ident!("__mrtr_a{}", index, span = Span::mixed_site());
            let key = &request.key;
            marker_fields.push(quote!(#marker: #marker_local));
            takes.extend(quote! {
                let #answer = ::mrtr::__private::take_answer(__mrtr_resume.answers(), #key, #marker_local)?;
            });
            answers.push(answer);
        }
        let answer_value = if answers.len() == 1 {
            let answer = &answers[0];
            quote!(#answer)
        } else {
            quote!((#(#answers),*))
        };
        let fields = self.liveness.live_in[site.resume].iter().map(|var| {
            let field = field(*var);
            let info = &self.cfg.vars[*var];
            if *var == site.answer {
                quote!(#field: #answer_value)
            } else if info.arg {
                let source = arg_source(function, self.cfg, *var);
                quote!(#field: #source)
            } else {
                let local = hidden(*var);
                quote!(#field: #local)
            }
        });
        let name = state_variant(site_id);
        let target = variant(site.resume);
        quote! {
            ::core::option::Option::Some(__MrtrState::#name { #(#restored,)* #(#marker_fields),* }) => {
                #takes
                __mrtr_flow = __MrtrFlow::#target { #(#fields),* };
            }
        }
    }
}

/// Ends the block (`return`, from its `async` block) with a machine step: a transition, a
/// suspension or a failure of the machine.
fn end(step: TokenStream) -> TokenStream {
    let end = exit_call(Span::call_site(), "end", step);
    quote!(return #end;)
}

/// `expr?` for the machine's own `Result<_, StepError>`: its error ends the block as a
/// failure of the machine, never as the body's error.
fn step_try(expr: TokenStream) -> TokenStream {
    let value = Ident::new("__mrtr_ok", Span::mixed_site());
    let error = Ident::new("__mrtr_err", Span::mixed_site());
    let fail = end(quote!(::mrtr::__private::BlockEnd::Fail(::core::convert::From::from(#error))));
    quote! {
        match #expr {
            ::core::result::Result::Ok(#value) => #value,
            ::core::result::Result::Err(#error) => { #fail }
        }
    }
}

/// Whether the last token is a `{ .. }` group.
fn ends_in_brace(tokens: &TokenStream) -> bool {
    matches!(
        tokens.clone().into_iter().last(),
        Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace
    )
}
