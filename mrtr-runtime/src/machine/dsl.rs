//! `ask!`, `sample!`, `roots!` and `join!` outside an mrtr function.
//!
//! Inside `#[mrtr::tool]`, `#[mrtr::prompt]` and `#[mrtr::resource]` functions the attribute
//! rewrites these macros into suspension points before they are ever expanded; these
//! definitions only exist so that a use anywhere else is a clear compile error.

/// Asks the user through an elicitation and evaluates to the typed answer
/// ([`Elicited<T>`](crate::machine::Elicited)). Only inside an mrtr function.
///
/// Forms: `ask!(<input>)` or `ask!(key = "name", <input>)`, where `<input>` is an
/// `Input<Elicited<_>>` such as `choice("Where?", ["a", "b"])`, `text(..)`, `confirm(..)`,
/// `multi_choice(..)`, `form::<T>(..)` or `url(..)` (these builders need no import there).
///
/// ```compile_fail
/// let answer = mrtr_runtime::ask!(text("Name?")); // error: only inside an mrtr function
/// ```
#[macro_export]
macro_rules! ask {
    ($($tokens:tt)*) => {
        ::core::compile_error!(
            "`ask!` can only be used directly in the body of a #[mrtr::tool], #[mrtr::prompt] or #[mrtr::resource] function, not in a helper function or a closure: only the function the attribute compiles can suspend. Have the helper return the input to ask for (an `Input`, e.g. `mrtr::machine::input::confirm(..)`) and `ask!` it in the tool"
        )
    };
}

/// Asks the client's LLM through `sampling/createMessage` and evaluates to the
/// [`Sampled`](crate::machine::Sampled) message. Only inside an mrtr function.
///
/// Forms: `sample!(prompt("..."))` (builder methods `.system(..)`, `.max_tokens(..)`,
/// `.model_hint(..)`, `.tools(..)` apply), `sample!(<Input<Sampled> expr>)`, optionally
/// with `key = "name",` first.
///
/// ```compile_fail
/// let summary = mrtr_runtime::sample!(prompt("Summarize")); // error: only inside an mrtr function
/// ```
#[macro_export]
macro_rules! sample {
    ($($tokens:tt)*) => {
        ::core::compile_error!(
            "`sample!` can only be used directly in the body of a #[mrtr::tool], #[mrtr::prompt] or #[mrtr::resource] function, not in a helper function or a closure: only the function the attribute compiles can suspend. Have the helper return the input to ask for (an `Input`, e.g. `mrtr::machine::input::confirm(..)`) and `sample!` it in the tool"
        )
    };
}

/// Asks the client for its workspace roots (`roots/list`) and evaluates to
/// [`Roots`](crate::machine::Roots). Only inside an mrtr function.
///
/// ```compile_fail
/// let roots = mrtr_runtime::roots!(); // error: only inside an mrtr function
/// ```
#[macro_export]
macro_rules! roots {
    ($($tokens:tt)*) => {
        ::core::compile_error!(
            "`roots!` can only be used directly in the body of a #[mrtr::tool], #[mrtr::prompt] or #[mrtr::resource] function, not in a helper function or a closure: only the function the attribute compiles can suspend. Have the helper return the input to ask for (an `Input`, e.g. `mrtr::machine::input::confirm(..)`) and `roots!` it in the tool"
        )
    };
}

/// Sends several requests in one round and evaluates to the tuple of their answers:
/// `let (summary, roots) = join!(sample!(prompt("..")), roots!());`. Only inside an mrtr
/// function.
///
/// ```compile_fail
/// let both = mrtr_runtime::join!(roots!(), roots!()); // error: only inside an mrtr function
/// ```
#[macro_export]
macro_rules! join {
    ($($tokens:tt)*) => {
        ::core::compile_error!(
            "`join!` can only be used directly in the body of a #[mrtr::tool], #[mrtr::prompt] or #[mrtr::resource] function, not in a helper function or a closure: only the function the attribute compiles can suspend. Have the helper return the input to ask for (an `Input`, e.g. `mrtr::machine::input::confirm(..)`) and `join!` it in the tool"
        )
    };
}
