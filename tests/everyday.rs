//! The everyday corpus (issue 8): 57 tool bodies as server authors write them — deploy,
//! ticketing, data clean-up, onboarding, code review — each written once and compiled both
//! through `#[mrtr::tool]` and as plain Rust in which `ask!` asks a scripted oracle. Every
//! test drives the machine through the real sealing pipeline (a token sealed and opened
//! every round) with several scripts (accept with different values, decline, cancel) and
//! asserts the same result and the same questions as the plain body, plus concrete
//! expected values.
//!
//! One file per category. Bodies the macro cannot compile yet are marked `waiting!`,
//! bodies that compile but fail carry `#[ignore = "pending .."]`; see
//! `everyday/support.rs` for the markers and how to flip them.

mod machine_support;

mod everyday {
    #[macro_use]
    mod support;

    mod app_state; // 5. application state (`State<T>`)
    mod borrows; // 9. borrowed `match`/`if let` arms that suspend, loops over reference-typed bindings, refusals that say what a local is
    mod dtos; // 4. DTO structs from other crates (`AsJson<T>`) and serde-derived DTOs
    mod errors; // 6. error paths
    mod exits; // 8. exits from other macros' expansions (`bail!`, `ensure!`, `macro_rules!`) and early exits after a suspension
    mod gaps; // 11. a `Result` alias under another name, a `const` scrutinee, a let chain that suspends, a shorthand field from an argument
    mod literals; // 3. string literals kept across a suspension
    mod loops; // 1. loops over borrowed iterators
    mod maps; // 2. HashMap / HashSet / BTreeMap across a suspension
    mod shapes;
    mod storing; // 10. `&'static str` from named consts/statics; the rewrite of a refused shared handle // 7. deferred init in brace-less arms, pure prefixes, parameter named like the tool
}
