//! Collects every independent error of one expansion so users see all of them at once
//! (serde_derive's `Ctxt` plays this part there).
//!
//! Both the attribute macros (`machine/`) and the derives (`form/`) record into an
//! [`Errors`] and keep going; the expansion then reports them together with an inert stub
//! of the item, so one typo does not hide the next problem.

use proc_macro2::Span;
use quote::ToTokens;

/// Spanned errors gathered during one expansion, in the order they were found.
///
/// ```ignore
/// let mut errors = Errors::default();
/// errors.at(Span::call_site(), "first");
/// errors.spanned(&ty, "second, covering the whole type");
/// assert_eq!(errors.finish().unwrap_err().into_iter().count(), 2);
/// ```
#[derive(Default)]
pub(crate) struct Errors {
    list: Vec<syn::Error>,
}

impl Errors {
    /// Records an error at `span`.
    pub(crate) fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.list.push(syn::Error::new(span, message));
    }

    /// Records an error covering all of `tokens` (a whole type or expression, not just its
    /// first token).
    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.list.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an existing error (e.g. one `syn` returned while parsing).
    pub(crate) fn push(&mut self, error: syn::Error) {
        self.list.push(error);
    }

    /// Whether nothing went wrong so far.
    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// All errors combined into one, or `None` when there were none.
    pub(crate) fn into_error(self) -> Option<syn::Error> {
        let mut iter = self.list.into_iter();
        let mut first = iter.next()?;
        for error in iter {
            first.combine(error);
        }
        Some(first)
    }

    /// The messages, in order (for tests).
    #[cfg(test)]
    pub(crate) fn messages(self) -> Vec<String> {
        self.list.iter().map(ToString::to_string).collect()
    }

    /// All errors combined into one, or `Ok` when there were none.
    pub(crate) fn finish(self) -> Result<(), syn::Error> {
        match self.into_error() {
            None => Ok(()),
            Some(error) => Err(error),
        }
    }
}

/// The span of a syntax node: its first token's span joined with its last one's where the
/// compiler allows joining (on stable, the first token's).
///
/// Unlike [`Errors::spanned`] this yields a plain [`Span`], for errors built by hand or
/// combined with a second location.
pub(crate) fn spanned(node: &impl ToTokens) -> Span {
    let mut tokens = node.to_token_stream().into_iter();
    let Some(first) = tokens.next() else {
        return Span::call_site();
    };
    let first_span = first.span();
    match tokens.last() {
        Some(last) => first_span.join(last.span()).unwrap_or(first_span),
        None => first_span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_reported_together_in_order() {
        let mut errors = Errors::default();
        assert!(errors.is_empty());
        errors.at(Span::call_site(), "first");
        let ty: syn::Type = syn::parse_quote!(Vec<String>);
        errors.spanned(&ty, "second");
        errors.push(syn::Error::new(Span::call_site(), "third"));
        assert!(!errors.is_empty());
        let messages: Vec<String> = errors
            .finish()
            .unwrap_err()
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(messages, ["first", "second", "third"]);
    }

    #[test]
    fn no_errors_finish_ok() {
        assert!(Errors::default().finish().is_ok());
        assert!(Errors::default().into_error().is_none());
    }
}
