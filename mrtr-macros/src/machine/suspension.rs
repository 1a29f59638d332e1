//! Recognising and parsing `ask!`, `sample!`, `roots!` and `join!`.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, LitStr, Macro, Token};

/// The suspension macros.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuspensionKind {
    /// `ask!`
    Ask,
    /// `sample!`
    Sample,
    /// `roots!`
    Roots,
    /// `join!`
    Join,
}

impl SuspensionKind {
    /// The macro's name.
    pub fn as_str(self) -> &'static str {
        match self {
            SuspensionKind::Ask => "ask",
            SuspensionKind::Sample => "sample",
            SuspensionKind::Roots => "roots",
            SuspensionKind::Join => "join",
        }
    }
}

/// Which suspension macro `mac` is, if any: `ask!` or `mrtr::ask!` (and so on).
pub fn suspension_kind(mac: &Macro) -> Option<SuspensionKind> {
    let segments = &mac.path.segments;
    let last = segments.last()?;
    let qualified_ok = match segments.len() {
        1 => mac.path.leading_colon.is_none(),
        2 => segments[0].ident == "mrtr",
        _ => false,
    };
    if !qualified_ok {
        return None;
    }
    match last.ident.to_string().as_str() {
        "ask" => Some(SuspensionKind::Ask),
        "sample" => Some(SuspensionKind::Sample),
        "roots" => Some(SuspensionKind::Roots),
        "join" => Some(SuspensionKind::Join),
        _ => None,
    }
}

/// Whether raw tokens (another macro's input) mention a suspension macro.
pub fn tokens_mention_suspension(tokens: &TokenStream) -> Option<Span> {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    for (index, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Ident(ident)
                if ["ask", "sample", "roots", "join"].contains(&ident.to_string().as_str()) =>
            {
                if let Some(TokenTree::Punct(punct)) = trees.get(index + 1)
                    && punct.as_char() == '!'
                {
                    return Some(ident.span());
                }
            }
            TokenTree::Group(group) => {
                if let Some(span) = tokens_mention_suspension(&group.stream()) {
                    return Some(span);
                }
            }
            _ => {}
        }
    }
    None
}

/// Which client capability an input needs, as far as the syntax tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum KindHint {
    /// `InputKind::FormElicitation`
    Form,
    /// `InputKind::UrlElicitation`
    Url,
    /// `InputKind::Sampling`
    Sampling,
    /// `InputKind::SamplingWithTools`
    SamplingWithTools,
    /// `InputKind::Roots`
    Roots,
}

impl KindHint {
    /// The runtime's `InputKind` variant.
    pub fn to_tokens(self) -> TokenStream {
        let variant = match self {
            KindHint::Form => quote!(FormElicitation),
            KindHint::Url => quote!(UrlElicitation),
            KindHint::Sampling => quote!(Sampling),
            KindHint::SamplingWithTools => quote!(SamplingWithTools),
            KindHint::Roots => quote!(Roots),
        };
        quote!(::mrtr::__private::InputKind::#variant)
    }
}

/// One request of a suspension.
#[derive(Clone)]
pub struct InputSpec {
    /// `ask`, `sample` or `roots`.
    pub kind: SuspensionKind,
    /// Explicit key.
    pub key: Option<LitStr>,
    /// The input expression (builders qualified), wrapped to pin its type.
    pub expr: Expr,
    /// Capabilities it may need.
    pub kinds: Vec<KindHint>,
}

struct KeyedInput {
    key: Option<LitStr>,
    expr: Option<Expr>,
}

impl Parse for KeyedInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut key = None;
        if input.peek(syn::Ident) && input.peek2(Token![=]) && !input.peek2(Token![==]) {
            let name: syn::Ident = input.parse()?;
            if name != "key" {
                return Err(syn::Error::new(
                    name.span(),
                    "expected `key = \"...\"` or an input expression",
                ));
            }
            input.parse::<Token![=]>()?;
            key = Some(input.parse::<LitStr>().map_err(|error| {
                syn::Error::new(
                    error.span(),
                    "an explicit key is a string literal: `ask!(key = \"environment\", choice(..))`",
                )
            })?);
            if input.is_empty() {
                return Ok(KeyedInput { key, expr: None });
            }
            input.parse::<Token![,]>()?;
        }
        let expr = if input.is_empty() {
            None
        } else {
            Some(input.parse::<Expr>()?)
        };
        input.parse::<Option<Token![,]>>()?;
        if !input.is_empty() {
            return Err(input.error("unexpected tokens after the input expression"));
        }
        Ok(KeyedInput { key, expr })
    }
}

const BUILDERS: &[&str] = &[
    "form",
    "choice",
    "multi_choice",
    "text",
    "confirm",
    "url",
    "prompt",
    "sampling",
    "roots",
];

/// Qualifies a bare builder call at the root of `expr` (`choice(..)`, `prompt(..).system(..)`).
fn qualify_builders(expr: &mut Expr) -> Option<String> {
    match expr {
        Expr::MethodCall(call) => qualify_builders(&mut call.receiver),
        Expr::Paren(paren) => qualify_builders(&mut paren.expr),
        Expr::Call(call) => {
            let Expr::Path(path) = &mut *call.func else {
                return None;
            };
            if path.qself.is_some()
                || path.path.leading_colon.is_some()
                || path.path.segments.len() != 1
            {
                return None;
            }
            let segment = path.path.segments[0].clone();
            let name = segment.ident.to_string();
            if !BUILDERS.contains(&name.as_str()) {
                return None;
            }
            let span = segment.ident.span();
            path.path = syn::parse_quote_spanned!(span=> ::mrtr::__private::builders::#segment);
            Some(name)
        }
        _ => None,
    }
}

fn calls_method(expr: &Expr, method: &str) -> bool {
    match expr {
        Expr::MethodCall(call) => call.method == method || calls_method(&call.receiver, method),
        Expr::Paren(paren) => calls_method(&paren.expr, method),
        _ => false,
    }
}

fn parse_one(kind: SuspensionKind, mac: &Macro) -> syn::Result<InputSpec> {
    let span = mac.span();
    let parsed: KeyedInput = mac.parse_body()?;
    let name = kind.as_str();
    let (expr, kinds) = match kind {
        SuspensionKind::Roots => {
            if let Some(expr) = &parsed.expr {
                return Err(syn::Error::new(
                    expr.span(),
                    "`roots!()` takes no input (optionally `roots!(key = \"...\")`)",
                ));
            }
            (
                syn::parse_quote_spanned!(span=> ::mrtr::__private::builders::roots()),
                vec![KindHint::Roots],
            )
        }
        SuspensionKind::Ask | SuspensionKind::Sample => {
            let Some(mut expr) = parsed.expr else {
                return Err(syn::Error::new(
                    span,
                    format!(
                        "`{name}!` needs an input, e.g. `{name}!({})`",
                        match kind {
                            SuspensionKind::Ask =>
                                "choice(\"Which environment?\", [\"staging\", \"prod\"])",
                            _ => "prompt(\"Summarize the plan\")",
                        }
                    ),
                ));
            };
            let builder = qualify_builders(&mut expr);
            let kinds = match (kind, builder.as_deref()) {
                (SuspensionKind::Ask, Some("url")) => vec![KindHint::Url],
                (SuspensionKind::Ask, Some(_)) => vec![KindHint::Form],
                (SuspensionKind::Ask, None) => vec![KindHint::Form, KindHint::Url],
                (_, Some("prompt")) if calls_method(&expr, "tools") => {
                    vec![KindHint::SamplingWithTools]
                }
                (_, Some("prompt")) => vec![KindHint::Sampling],
                _ => vec![KindHint::Sampling, KindHint::SamplingWithTools],
            };
            let expr_span = expr.span();
            let wrapped: Expr = match kind {
                SuspensionKind::Ask => {
                    syn::parse_quote_spanned!(expr_span=> ::mrtr::__private::elicit_input(#expr))
                }
                _ => syn::parse_quote_spanned!(expr_span=> ::mrtr::__private::sample_input(#expr)),
            };
            (wrapped, kinds)
        }
        SuspensionKind::Join => unreachable!("join! is split before"),
    };
    Ok(InputSpec {
        kind,
        key: parsed.key,
        expr,
        kinds,
    })
}

/// Parses a suspension macro into its requests (one, or several for `join!`).
pub fn parse_suspension(kind: SuspensionKind, mac: &Macro) -> syn::Result<Vec<InputSpec>> {
    if kind != SuspensionKind::Join {
        return Ok(vec![parse_one(kind, mac)?]);
    }
    let elements = mac.parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated)?;
    if elements.len() < 2 {
        return Err(syn::Error::new(
            mac.span(),
            "`join!` takes two or more suspensions, e.g. `join!(sample!(prompt(..)), roots!())`",
        ));
    }
    let mut specs = Vec::new();
    for element in &elements {
        let inner = match element {
            Expr::Macro(inner) => suspension_kind(&inner.mac)
                .filter(|kind| *kind != SuspensionKind::Join)
                .map(|kind| (kind, &inner.mac)),
            _ => None,
        };
        let Some((kind, inner)) = inner else {
            return Err(syn::Error::new(
                element.span(),
                "each element of `join!` must be `ask!(..)`, `sample!(..)` or `roots!()`",
            ));
        };
        specs.push(parse_one(kind, inner)?);
    }
    let mut seen = Vec::new();
    for spec in &specs {
        if let Some(key) = &spec.key {
            if seen.contains(&key.value()) {
                return Err(syn::Error::new(
                    key.span(),
                    format!("key `{}` is used twice in one `join!`", key.value()),
                ));
            }
            seen.push(key.value());
        }
    }
    Ok(specs)
}

impl ToTokens for KindHint {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(KindHint::to_tokens(*self));
    }
}
