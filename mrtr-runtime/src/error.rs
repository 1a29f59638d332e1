//! What the error types of this crate share: the boxed cause they carry as their
//! [`source`](std::error::Error::source), and a way to print an error with its causes.
//!
//! Errors here follow the Rust API guidelines: a variant either shows its cause in its own
//! message or returns it from `source()`, never both. Print the whole chain with
//! [`ErrorChain`] (or a reporter such as `anyhow`'s `{:#}`).
//!
//! ```
//! use mrtr_runtime::error::ErrorChain;
//! use mrtr_runtime::machine::StepError;
//!
//! let error = StepError::InvalidArguments("missing field `service`".into());
//! assert_eq!(error.to_string(), "invalid arguments");
//! assert_eq!(
//!     ErrorChain(&error).to_string(),
//!     "invalid arguments: missing field `service`"
//! );
//! ```

use std::error::Error;
use std::fmt;

/// A cause of any error type, as the variants of [`StepError`](crate::machine::StepError)
/// and `ClientError` carry it. Strings convert too: `"reason".into()`.
///
/// ```
/// let cause: mrtr_runtime::error::BoxError = "the form has no fields".into();
/// assert_eq!(cause.to_string(), "the form has no fields");
/// ```
pub type BoxError = Box<dyn Error + Send + Sync + 'static>;

/// Displays an error followed by each of its causes, separated by `": "`.
///
/// ```
/// use mrtr_runtime::error::ErrorChain;
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("could not load the profile")]
/// struct Load(#[source] std::io::Error);
///
/// let error = Load(std::io::Error::other("disk full"));
/// assert_eq!(ErrorChain(&error).to_string(), "could not load the profile: disk full");
/// ```
#[derive(Clone, Copy)]
pub struct ErrorChain<'a>(pub &'a (dyn Error + 'static));

impl fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(error) = cause {
            write!(f, ": {error}")?;
            cause = error.source();
        }
        Ok(())
    }
}

impl fmt::Debug for ErrorChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
