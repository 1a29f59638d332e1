//! How a block of the generated dispatch loop ends, in one place for the lowering (which
//! rewrites the `return` and `?` it can see) and the expansion (which ends each block).

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::Ident;

/// `Exit::method(__mrtr_exit, arg)`: how a block of the dispatch loop ends (the body's
/// value, or a transition), in the output type of the `async` block each block runs in.
/// `__mrtr_exit` is picked by the dispatch function from the body's return type.
pub(crate) fn exit_call(span: Span, method: &str, arg: TokenStream) -> TokenStream {
    let exit = exit_value();
    let method = Ident::new(method, span);
    quote_spanned!(span=> ::mrtr::__private::Exit::#method(#exit, #arg))
}

/// The hygienic local holding the body's exit (`::mrtr::__private::Exit`), declared by
/// the dispatch function: a body's own `__mrtr_exit` cannot name it.
pub(crate) fn exit_value() -> Ident {
    Ident::new("__mrtr_exit", Span::mixed_site())
}
