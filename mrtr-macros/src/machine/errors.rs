//! Collects every independent error so users see all of them at once.

use proc_macro2::Span;

/// Spanned errors gathered during one expansion.
#[derive(Default)]
pub struct Errors {
    list: Vec<syn::Error>,
}

impl Errors {
    /// Records an error at `span`.
    pub fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.list.push(syn::Error::new(span, message));
    }

    /// Records an existing error.
    pub fn push(&mut self, error: syn::Error) {
        self.list.push(error);
    }

    /// Whether nothing went wrong so far.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// All errors combined into one, or `Ok` when there were none.
    pub fn finish(self) -> Result<(), syn::Error> {
        let mut iter = self.list.into_iter();
        match iter.next() {
            None => Ok(()),
            Some(mut first) => {
                for error in iter {
                    first.combine(error);
                }
                Err(first)
            }
        }
    }
}
