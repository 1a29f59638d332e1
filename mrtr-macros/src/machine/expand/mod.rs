//! Stage 5, code generation: the unit struct, its arguments type, the state enum (one
//! variant per resume point, generic so rustc infers the locals' types), and the dispatch
//! loop. Every check ran in the stages before; this one only writes tokens.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Delimiter, Group, Literal, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::Ident;

use crate::machine::analyze::Liveness;
use crate::machine::cfg::*;
use crate::machine::parse::{Kind, MachineFn};
use crate::machine::suspension::KindHint;

pub mod describe;
pub mod fingerprint;

fn field(var: VarId) -> Ident {
    format_ident!("v{}", var)
}

fn param(var: VarId) -> Ident {
    format_ident!("T{}", var)
}

fn variant(block: BlockId) -> Ident {
    format_ident!("B{}", block)
}

fn state_variant(site: usize) -> Ident {
    format_ident!("S{}", site)
}

fn hidden(var: VarId) -> Ident {
    format_ident!("__mrtr_v{}", var, span = Span::mixed_site())
}

fn dispatch_label() -> syn::Lifetime {
    syn::Lifetime::new("'__mrtr_dispatch", Span::mixed_site())
}

struct Gen<'a> {
    cfg: &'a Cfg,
    liveness: &'a Liveness,
}

/// What names mean while generating one block.
#[derive(Clone)]
struct Access {
    idents: BTreeMap<VarId, Ident>,
    names: Vec<(String, VarId)>,
}

impl Gen<'_> {
    fn var_expr(&self, access: &Access, var: VarId) -> TokenStream {
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

    fn transition(&self, target: BlockId, access: &Access) -> TokenStream {
        let name = variant(target);
        let fields = self.liveness.live_in[target].iter().map(|var| {
            let field = field(*var);
            let value = self.var_expr(access, *var);
            quote!(#field: #value)
        });
        let label = dispatch_label();
        quote! {
            __mrtr_flow = __MrtrFlow::#name { #(#fields),* };
            continue #label;
        }
    }

    /// Replaces `__mrtr_jump!(n[, value])` markers with transitions.
    fn jumps(&self, tokens: TokenStream, access: &Access) -> TokenStream {
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

    fn jump(&self, marker: TokenStream, access: &Access) -> TokenStream {
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

    fn code(&self, code: &Code, access: &Access) -> TokenStream {
        // A jump that would carry a shadowing binding was refused by `analyze::check_jumps`.
        self.jumps(code.tokens.clone(), access)
    }

    fn edge(&self, edge: &Edge, binds: &[VarId], access: &Access) -> TokenStream {
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
                    Dest::Return => quote! {
                        #declare
                        return ::core::result::Result::Ok(::mrtr::__private::Step::Done(#body));
                    },
                }
            }
        }
    }

    fn block(&self, block_id: BlockId) -> TokenStream {
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
        quote! {
            __MrtrFlow::#name { #(#bindings),* } => { #body }
        }
    }

    /// Binds the loop variables of snapshot loops this block sees, from the snapshot, in
    /// the order they were declared (a later `let line = line.trim();` after `line`).
    fn derivations(&self, block_id: BlockId, access: &Access) -> TokenStream {
        let block = &self.cfg.blocks[block_id];
        let mut out = TokenStream::new();
        for (index, leaf) in self.cfg.derived.iter().enumerate() {
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
                    out.extend(quote! {
                        let #pat = ::mrtr::__private::Slot::view(
                            &(*::mrtr::__private::Snapshot::current(&#snap)?) #(.#path)*
                        );
                    });
                }
            }
        }
        out
    }

    fn item(&self, item: &Item, live_after: &BTreeSet<VarId>, access: &mut Access) -> TokenStream {
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

    fn term(&self, term: Option<&Term>, access: &Access) -> TokenStream {
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
                quote!(return ::core::result::Result::Ok(::mrtr::__private::Step::Done(#value));)
            }
            Term::Unreachable => quote!(::core::unreachable!()),
        }
    }

    fn suspend(&self, site_id: usize, access: &Access) -> TokenStream {
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
            asks.push(quote!(.ask(#key, #input_ident)?));
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
        out.extend(quote! {
            let __mrtr_suspend = ::mrtr::__private::suspend_with(
                &mut __mrtr_slot,
                __MrtrState::#name { #(#fields,)* #(#markers),* },
                __MRTR_LITERALS,
            )? #(#asks)*;
            return ::core::result::Result::Ok(::mrtr::__private::Step::Suspend(__mrtr_suspend));
        });
        out
    }

    fn resume_arm(&self, site_id: usize, function: &MachineFn) -> TokenStream {
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

/// Where an unchanged parameter comes from on every round: the request's arguments, or
/// the server's application state for a `State<T>` parameter.
fn arg_source(function: &MachineFn, cfg: &Cfg, var: VarId) -> TokenStream {
    if let Some(position) = cfg.states.iter().position(|state| *state == var) {
        let local = state_local(position);
        return quote!(#local);
    }
    let position = cfg.args.iter().position(|arg| *arg == var).unwrap_or(0);
    let ident = &function.params[position].ident;
    quote!(__mrtr_args.#ident)
}

fn state_local(position: usize) -> Ident {
    format_ident!("__mrtr_state{}", position, span = Span::mixed_site())
}

fn output_type(kind: Kind) -> TokenStream {
    match kind {
        Kind::Tool => quote!(::mrtr::__private::rmcp::model::CallToolResult),
        Kind::Prompt => quote!(::mrtr::__private::rmcp::model::GetPromptResult),
        Kind::Resource => quote!(::mrtr::__private::rmcp::model::ReadResourceResult),
    }
}

fn cfg_attrs(function: &MachineFn) -> Vec<&syn::Attribute> {
    function
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("cfg"))
        .collect()
}

fn struct_item(function: &MachineFn) -> TokenStream {
    let vis = &function.vis;
    let name = &function.ident;
    let cfgs = cfg_attrs(function);
    let doc = &function.doc;
    let kind = function.kind.as_str();
    let listed = function.listed_name();
    let summary = format!("The `{listed}` {kind} (generated by `#[mrtr::{kind}]`).");
    let doc_attr = if doc.is_empty() {
        quote!(#[doc = #summary])
    } else {
        quote!(#[doc = #doc])
    };
    quote! {
        #(#cfgs)*
        #doc_attr
        #[allow(non_camel_case_types)]
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::default::Default)]
        #vis struct #name;
    }
}

/// An inert stand-in emitted when the function has errors, so follow-on errors (e.g. at
/// `.tool(deploy)`) stay quiet.
pub fn expand_stub(function: &MachineFn) -> TokenStream {
    let name = &function.ident;
    let output = output_type(function.kind);
    let cfgs = cfg_attrs(function);
    let item = struct_item(function);
    quote! {
        #item
        #(#cfgs)*
        const _: () = {
            impl ::mrtr::__private::Machine for #name {
                type Output = #output;
                fn descriptor(&self) -> &::mrtr::__private::MachineDescriptor {
                    ::core::unreachable!("this mrtr function did not compile")
                }
                fn step<'a>(&'a self, _: ::mrtr::__private::Run<'a>) -> ::mrtr::__private::StepFuture<'a, #output> {
                    ::core::unreachable!("this mrtr function did not compile")
                }
            }
        };
    }
}

fn descriptor(function: &MachineFn, kinds: &BTreeSet<KindHint>, fingerprint: u64) -> TokenStream {
    let listed = function.listed_name();
    let doc = &function.doc;
    let kinds = kinds.iter();
    let fingerprint = Literal::u64_suffixed(fingerprint);
    let model = quote!(::mrtr::__private::rmcp::model);
    let ret = &function.ret;
    match function.kind {
        Kind::Tool => quote! {
            ::mrtr::__private::MachineDescriptor::tool(
                ::mrtr::__private::with_output_schema(
                    #model::Tool::new(#listed, #doc, ::mrtr::__private::arguments_schema::<__MrtrArgs>()),
                    <#ret as ::mrtr::__private::IntoToolResult>::output_schema(),
                ),
                [#(#kinds),*],
                #fingerprint,
            )
        },
        Kind::Prompt => {
            let arguments = function.params.iter().map(|param| {
                let name = param.ident.to_string();
                let description = &param.doc;
                let optional = matches!(&param.ty, syn::Type::Path(path)
                    if path.path.segments.last().is_some_and(|s| s.ident == "Option"));
                let required = !optional;
                let description = if description.is_empty() {
                    quote!(::core::option::Option::None)
                } else {
                    quote!(::core::option::Option::Some(#description.to_string()))
                };
                quote! {{
                    let mut argument = #model::PromptArgument::new(#name);
                    argument.description = #description;
                    argument.required = ::core::option::Option::Some(#required);
                    argument
                }}
            });
            let description = if doc.is_empty() {
                quote!(::core::option::Option::None::<::std::string::String>)
            } else {
                quote!(::core::option::Option::Some(#doc))
            };
            quote! {
                ::mrtr::__private::MachineDescriptor::prompt(
                    #model::Prompt::new(#listed, #description, ::core::option::Option::Some(::std::vec![#(#arguments),*])),
                    [#(#kinds),*],
                    #fingerprint,
                )
            }
        }
        Kind::Resource => {
            let uri = resource_uri(function);
            let description = (!doc.is_empty()).then(
                || quote!(resource.description = ::core::option::Option::Some(#doc.to_string());),
            );
            let mime = function.args.mime_type.as_ref().map(|mime| {
                quote!(resource.mime_type = ::core::option::Option::Some(#mime.to_string());)
            });
            quote! {{
                let mut resource = #model::Resource::new(#uri, #listed);
                #description
                #mime
                ::mrtr::__private::MachineDescriptor::resource(resource, [#(#kinds),*], #fingerprint)
            }}
        }
    }
}

/// Every string literal in `tokens` (also inside macro invocations), sorted and
/// deduplicated: the strings a `&'static str` in the state may decode to.
pub fn string_literals(tokens: TokenStream) -> Vec<String> {
    fn walk(tokens: TokenStream, out: &mut std::collections::BTreeSet<String>) {
        for tree in tokens {
            match tree {
                TokenTree::Group(group) => walk(group.stream(), out),
                TokenTree::Literal(literal) => {
                    if let Ok(syn::Lit::Str(text)) = syn::parse2::<syn::Lit>(quote!(#literal)) {
                        out.insert(text.value());
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = std::collections::BTreeSet::new();
    walk(tokens, &mut out);
    out.into_iter().collect()
}

/// Generates the machine.
pub fn expand(
    function: &MachineFn,
    cfg: &Cfg,
    liveness: &Liveness,
    fingerprint: u64,
) -> TokenStream {
    let generator = Gen { cfg, liveness };
    let reachable = cfg.reachable();
    let name = &function.ident;
    let output = output_type(function.kind);
    let ret = &function.ret;
    let cfgs = cfg_attrs(function);
    let item = struct_item(function);
    let lints = function
        .attrs
        .iter()
        .filter(|attr| !attr.path().is_ident("cfg"));

    // Arguments type.
    let arg_fields = function.params.iter().map(|param| {
        let ident = &param.ident;
        let ty = &param.ty;
        let doc = &param.doc;
        let forwarded = &param.forwarded;
        let doc = (!doc.is_empty()).then(|| quote!(#[doc = #doc]));
        quote!(#doc #(#forwarded)* #ident: #ty)
    });

    // Flow enum: one variant per reachable block, fields = live-in variables.
    let mut flow_params = BTreeSet::new();
    let mut flow_variants = Vec::new();
    for (block, live) in liveness.live_in.iter().enumerate() {
        if !reachable[block] {
            continue;
        }
        flow_params.extend(live.iter().copied());
        let name = variant(block);
        let fields = live.iter().map(|var| {
            let field = field(*var);
            let param = param(*var);
            quote!(#field: #param)
        });
        flow_variants.push(quote!(#name { #(#fields),* }));
    }
    let flow_generics: Vec<Ident> = flow_params.iter().map(|var| param(*var)).collect();
    let flow_holes = flow_generics.iter().map(|_| quote!(_));

    // State enum: one variant per reachable suspension, fields = stored locals + answer markers.
    let mut state_generics: Vec<Ident> = Vec::new();
    let mut state_variants = Vec::new();
    let mut stored_params = BTreeSet::new();
    let mut kinds = BTreeSet::new();
    let mut resume_arms = Vec::new();
    for (site_id, site) in cfg.sites.iter().enumerate() {
        if !reachable[site.resume] {
            continue;
        }
        let stored = liveness.stored(cfg, site);
        stored_params.extend(stored.iter().copied());
        let mut fields: Vec<TokenStream> = stored
            .iter()
            .map(|var| {
                let field = field(*var);
                let param = param(*var);
                quote!(#field: #param)
            })
            .collect();
        for (index, request) in site.requests.iter().enumerate() {
            kinds.extend(request.kinds.iter().copied());
            let marker = format_ident!("o{}", index);
            let outcome = format_ident!("O{}_{}", site_id, index);
            fields.push(quote!(#marker: ::core::marker::PhantomData<#outcome>));
            state_generics.push(outcome);
        }
        let name = state_variant(site_id);
        state_variants.push(quote!(#name { #(#fields),* }));
        resume_arms.push(generator.resume_arm(site_id, function));
    }
    let mut all_state_generics: Vec<Ident> = stored_params.iter().map(|var| param(*var)).collect();
    all_state_generics.extend(state_generics);
    let state_holes = all_state_generics.iter().map(|_| quote!(_));
    let stored_generics: Vec<Ident> = stored_params.iter().map(|var| param(*var)).collect();
    let serialize_bound = stored_generics
        .iter()
        .map(|param| format!("{param}: ::mrtr::__private::KeepSerialize"))
        .collect::<Vec<_>>()
        .join(", ");
    let deserialize_bound = stored_generics
        .iter()
        .map(|param| format!("{param}: ::mrtr::__private::KeepDeserialize<'de>"))
        .collect::<Vec<_>>()
        .join(", ");

    // Entry.
    let entry_fields = liveness.live_in[0].iter().map(|var| {
        let field = field(*var);
        if cfg.args.contains(var) || cfg.states.contains(var) {
            let source = arg_source(function, cfg, *var);
            quote!(#field: #source)
        } else {
            let value = generator.var_expr(
                &Access {
                    idents: BTreeMap::new(),
                    names: Vec::new(),
                },
                *var,
            );
            quote!(#field: #value)
        }
    });
    // Hygienic, so a parameter named `run` does not collide.
    let input = Ident::new("__mrtr_input", Span::mixed_site());
    let cx = function
        .cx
        .as_ref()
        .map(|(cx, ty)| quote!(let #cx: #ty = #input.cx;));
    let states = function.states.iter().enumerate().map(|(position, state)| {
        let local = state_local(position);
        let inner = &state.inner;
        let fetch = quote!(::mrtr::__private::RequestCx::state::<#inner>(#input.cx)?);
        // Through the declared `State<T>` type, so the author's `use` of it counts.
        let ty = &state.ty;
        if state.destructured {
            let whole = Ident::new("__mrtr_whole", Span::mixed_site());
            quote!(let #local: #inner = { let #whole: #ty = #fetch; #whole.0 };)
        } else {
            quote!(let #local: #ty = #fetch;)
        }
    });
    let blocks: Vec<TokenStream> = (0..cfg.blocks.len())
        .filter(|block| reachable[*block])
        .map(|block| generator.block(block))
        .collect();
    let literals = string_literals(function.body.to_token_stream());
    let items = &cfg.items;
    let convert = match function.kind {
        Kind::Tool => quote!(::mrtr::__private::IntoToolResult::into_tool_result(value)?),
        Kind::Prompt => quote!(::mrtr::__private::IntoPromptResult::into_prompt_result(
            value
        )?),
        Kind::Resource => {
            let uri = resource_uri(function);
            quote!(::mrtr::__private::IntoResourceResult::into_resource_result(value, #uri)?)
        }
    };
    let descriptor = descriptor(function, &kinds, fingerprint);
    let description = describe::description(cfg, liveness, &reachable, &function.listed_name());
    let requirements = function.states.iter().map(|state| {
        let inner = &state.inner;
        quote!(::mrtr::__private::StateRequirement::of::<#inner>())
    });
    let descriptor = if function.states.is_empty() {
        descriptor
    } else {
        quote!(#descriptor.with_states([#(#requirements),*]))
    };
    let descriptor = match &function.args.rounds {
        Some(policy) => {
            quote!(#descriptor.with_replay(::mrtr::__private::ReplayPolicy::#policy))
        }
        None => descriptor,
    };
    let descriptor = match function.args.task {
        Some(required) => {
            let support = if required {
                quote!(::mrtr::__private::TaskSupport::required())
            } else {
                quote!(::mrtr::__private::TaskSupport::optional())
            };
            let support = match &function.args.mrtr_rounds {
                Some(rounds) => quote!(#support.after_rounds(#rounds)),
                None => support,
            };
            quote!(#descriptor.with_task(#support))
        }
        None => descriptor,
    };
    // Fixed questions are sealed as an index into these (see `MachineDescriptor::literals`).
    let descriptor = if literals.is_empty() {
        descriptor
    } else {
        quote!(#descriptor.with_literals(&[#(#literals),*]))
    };
    let label = dispatch_label();
    let serde_path = "::mrtr::__private::serde";
    let schemars_path = "::mrtr::__private::schemars";

    quote! {
        #item

        #(#cfgs)*
        const _: () = {
            // The unit struct shares the function's name; this shadows its value inside
            // the generated code, so a local or parameter may be named like the tool.
            #[allow(dead_code, non_snake_case)]
            fn #name() {}

            #[derive(::mrtr::__private::serde::Deserialize, ::mrtr::__private::schemars::JsonSchema)]
            #[serde(crate = #serde_path)]
            #[schemars(crate = #schemars_path)]
            #[allow(non_camel_case_types, dead_code)]
            struct __MrtrArgs { #(#arg_fields),* }

            impl ::mrtr::__private::Machine for #name {
                type Output = #output;

                fn descriptor(&self) -> &::mrtr::__private::MachineDescriptor {
                    static DESCRIPTOR: ::std::sync::OnceLock<::mrtr::__private::MachineDescriptor> =
                        ::std::sync::OnceLock::new();
                    DESCRIPTOR.get_or_init(|| #descriptor)
                }

                fn describe(&self) -> ::core::option::Option<&::mrtr::__private::MachineDescription> {
                    static DESCRIPTION: ::mrtr::__private::MachineDescription = #description;
                    ::core::option::Option::Some(&DESCRIPTION)
                }

                fn step<'a>(
                    &'a self,
                    run: ::mrtr::__private::Run<'a>,
                ) -> ::mrtr::__private::StepFuture<'a, #output> {
                    ::std::boxed::Box::pin(async move {
                        match __mrtr_run(run).await? {
                            ::mrtr::__private::Step::Done(value) => {
                                ::core::result::Result::Ok(::mrtr::__private::Step::Done(#convert))
                            }
                            ::mrtr::__private::Step::Suspend(suspend) => {
                                ::core::result::Result::Ok(::mrtr::__private::Step::Suspend(suspend))
                            }
                        }
                    })
                }
            }

            #(#lints)*
            #[allow(
                unused_variables, unused_mut, unused_assignments, unused_braces, unused_parens,
                unreachable_code, unreachable_patterns, irrefutable_let_patterns, dead_code,
                non_snake_case, non_camel_case_types, clippy::all
            )]
            async fn __mrtr_run(
                #input: ::mrtr::__private::Run<'_>,
            ) -> ::core::result::Result<::mrtr::__private::Step<#ret>, ::mrtr::__private::StepError> {
                #(#items)*

                // The only `&'static str` values a state may hold (see `decode_state`).
                const __MRTR_LITERALS: &[&str] = &[#(#literals),*];

                enum __MrtrFlow<#(#flow_generics),*> { #(#flow_variants),* }

                #[derive(::mrtr::__private::serde::Serialize, ::mrtr::__private::serde::Deserialize)]
                #[serde(crate = #serde_path, bound(serialize = #serialize_bound, deserialize = #deserialize_bound))]
                enum __MrtrState<#(#all_state_generics),*> { #(#state_variants),* }

                let __mrtr_args: __MrtrArgs = #input.parse_arguments()?;
                #cx
                #(#states)*
                let mut __mrtr_slot: ::core::option::Option<__MrtrState<#(#state_holes),*>> =
                    ::core::option::Option::None;
                let mut __mrtr_flow: __MrtrFlow<#(#flow_holes),*>;
                match #input.resume {
                    ::core::option::Option::None => {
                        __mrtr_flow = __MrtrFlow::B0 { #(#entry_fields),* };
                    }
                    ::core::option::Option::Some(mut __mrtr_resume) => {
                        __mrtr_slot = ::core::option::Option::Some(
                            __mrtr_resume.state_with_literals(__MRTR_LITERALS)?,
                        );
                        match __mrtr_slot.take() {
                            #(#resume_arms)*
                            _ => {
                                return ::core::result::Result::Err(::mrtr::__private::StepError::StateMismatch(
                                    ::core::convert::Into::into("no resume point"),
                                ));
                            }
                        }
                    }
                }
                #label: loop {
                    match __mrtr_flow {
                        #(#blocks)*
                    }
                }
            }
        };
    }
}

/// The `uri = ".."` of a `#[mrtr::resource]` (empty when absent; `check` reports that).
fn resource_uri(function: &MachineFn) -> String {
    function
        .args
        .uri
        .as_ref()
        .map(|uri| uri.value())
        .unwrap_or_default()
}

/// Whether the last token is a `{ .. }` group.
fn ends_in_brace(tokens: &TokenStream) -> bool {
    matches!(
        tokens.clone().into_iter().last(),
        Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace
    )
}
