//! How a block of the generated dispatch loop ends, in one place for the lowering (which
//! rewrites the `return` and `?` it can see) and the expansion (which ends each block).

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::Ident;

/// `<__MrtrExit as Exit>::method(arg)`: how a block of the dispatch loop ends (the body's
/// value, or a transition), in the output type of the `async` block each block runs in.
/// `__MrtrExit` is declared by the dispatch function for the body's return type.
pub(crate) fn exit_call(span: Span, method: &str, arg: TokenStream) -> TokenStream {
    let exit = Ident::new("__MrtrExit", Span::mixed_site());
    let method = Ident::new(method, span);
    quote_spanned!(span=> <#exit as ::mrtr::__private::Exit>::#method(#arg))
}
