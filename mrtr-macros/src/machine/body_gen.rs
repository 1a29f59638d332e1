//! Fuzzing the expander: a grammar-driven generator of tool bodies (statements,
//! expressions, loops, matches, suspensions, labels, closures, macros — well-formed and
//! not) and the oracle that runs one through parse → check → lower → analyze → expand.
//!
//! Compiled for this crate's tests (the stable driver below) and, through `fuzz/macros`,
//! for libFuzzer, which cannot link a proc-macro crate: that package builds this `machine`
//! module as an ordinary library (`cfg(fuzzing)`).

use std::str::FromStr;

use arbitrary::{Result, Unstructured};
use proc_macro2::TokenStream;

use super::{Kind, Staged, run_stages};
use crate::internals::errors::Errors;

/// Names the generated code binds and uses; `n`, `names`, `text` are parameters.
const LOCALS: [&str; 6] = ["a", "b", "acc", "n", "names", "text"];
const LABELS: [&str; 2] = ["'outer", "'inner"];

/// Writes one body as source text.
struct Writer<'a, 'b> {
    input: &'a mut Unstructured<'b>,
    out: String,
    depth: usize,
}

impl Writer<'_, '_> {
    fn pick<'s>(&mut self, options: &[&'s str]) -> Result<&'s str> {
        Ok(*self.input.choose(options)?)
    }

    fn local(&mut self) -> Result<&'static str> {
        self.pick(&LOCALS)
    }

    fn push(&mut self, text: &str) {
        self.out.push_str(text);
        self.out.push(' ');
    }

    fn suspension(&mut self) -> Result<()> {
        let text = self.pick(&[
            "ask!(text(\"q\"))",
            "ask!(text(\"q\")).accepted()?",
            "ask!(confirm(\"ok?\")).accepted()?",
            "ask!(choice(\"env\", [\"a\", \"b\"])).ok().unwrap_or_default()",
            "ask!(multi_choice(\"tags\", [\"x\", \"y\"]))",
            "ask!(key = \"named\", text(\"k\"))",
            "ask!(url(\"go\", \"https://example.com\")).is_accepted()",
            "sample!(prompt(\"p\").max_tokens(5)).text().to_owned()",
            "roots!().len()",
            "mrtr::join!(ask!(text(\"x\")), roots!())",
            "join!(sample!(prompt(\"s\")), ask!(confirm(\"c\")))",
            // Malformed uses, each a refusal to be reported.
            "ask!()",
            "ask!(key = 3, text(\"a\"))",
            "roots!(text(\"a\"))",
            "join!(ask!(text(\"a\")))",
            "ask!(key = \"dup\", text(\"a\"))",
        ])?;
        self.push(text);
        Ok(())
    }

    fn expr(&mut self) -> Result<()> {
        if self.depth > 4 {
            let leaf = self.pick(&["1", "\"s\"", "true", "n", "a", "names.len()"])?;
            self.push(leaf);
            return Ok(());
        }
        self.depth += 1;
        match self.input.int_in_range(0..=22u8)? {
            choice @ 0..=10 => self.expr_simple(choice)?,
            choice @ 11..=15 => self.expr_control(choice)?,
            choice => self.expr_postfix(choice)?,
        }
        self.depth -= 1;
        Ok(())
    }

    /// An atom, operator, tuple, macro call, closure or `async` block (choices 0..=10).
    fn expr_simple(&mut self, choice: u8) -> Result<()> {
        match choice {
            0..=3 => self.suspension()?,
            4 => {
                let local = self.local()?;
                self.push(local);
            }
            5 => {
                let literal = self.pick(&["0", "42u8", "\"lit\"", "'c'", "2.5", "false"])?;
                self.push(literal);
            }
            6 => {
                self.expr()?;
                let op = self.pick(&["+", "*", "==", "&&", "||", "<", "-"])?;
                self.push(op);
                self.expr()?;
            }
            7 => {
                self.push("(");
                self.expr()?;
                self.push(",");
                self.expr()?;
                self.push(")");
            }
            8 => {
                let name = self.pick(&["format!", "vec!", "println!", "assert!", "dbg!"])?;
                self.push(name);
                self.push("(\"{:?}\",");
                self.expr()?;
                self.push(")");
            }
            9 => {
                self.push("|x: u32|");
                self.expr()?;
            }
            _ => {
                self.push("async {");
                self.expr()?;
                self.push("}.await");
            }
        }
        Ok(())
    }

    /// A block, `if`, `match`, `loop` or `?` (choices 11..=15).
    fn expr_control(&mut self, choice: u8) -> Result<()> {
        match choice {
            11 => self.block()?,
            12 => {
                self.push("if");
                self.expr()?;
                self.block()?;
                self.push("else");
                self.block()?;
            }
            13 => {
                self.push("match");
                self.expr()?;
                self.push("{");
                for _ in 0..self.input.int_in_range(1..=3u8)? {
                    let pattern = self.pick(&["1", "Some(v)", "(p, q)", "\"s\"", "x if x > 2"])?;
                    self.push(pattern);
                    if self.input.ratio(1, 4)? {
                        self.push("if");
                        self.expr()?;
                    }
                    self.push("=>");
                    self.expr()?;
                    self.push(",");
                }
                self.push("_ =>");
                self.expr()?;
                self.push("}");
            }
            14 => {
                let label = self.pick(&["", "'outer:", "'inner:"])?;
                self.push(label);
                self.push("loop {");
                self.stmts()?;
                self.push("break");
                self.expr()?;
                self.push("; }");
            }
            _ => {
                self.expr()?;
                self.push("?");
            }
        }
        Ok(())
    }

    /// An index, call, `unsafe` block, unary or method call, array, or noise (16..=22).
    fn expr_postfix(&mut self, choice: u8) -> Result<()> {
        match choice {
            16 => {
                let local = self.local()?;
                self.push(local);
                self.push("[");
                self.expr()?;
                self.push("]");
            }
            17 => {
                let call = self.pick(&["helper(", "Some(", "Ok::<_, ToolError>(", "drop("])?;
                self.push(call);
                self.expr()?;
                self.push(")");
            }
            18 => {
                self.push("unsafe {");
                self.expr()?;
                self.push("}");
            }
            19 => {
                let reference = self.pick(&["&", "&mut ", "*", "!", "-"])?;
                self.push(reference);
                self.expr()?;
            }
            20 => {
                self.expr()?;
                let method =
                    self.pick(&[".clone()", ".to_string()", ".len()", ".iter()", ".await"])?;
                self.push(method);
            }
            21 => {
                self.push("[");
                self.expr()?;
                self.push(";");
                self.push("3]");
            }
            _ => {
                // Raw noise: whatever the grammar does not produce.
                let noise = self.pick(&["{", "}", ";", "=>", "let", "'a", "#", "..", "::", ","])?;
                self.push(noise);
            }
        }
        Ok(())
    }

    fn pattern(&mut self) -> Result<()> {
        let pattern = self.pick(&["x", "mut x", "(i, item)", "_", "Some(v)", "[p, q]", "ref r"])?;
        self.push(pattern);
        Ok(())
    }

    fn stmt(&mut self) -> Result<()> {
        self.depth += 1;
        match self.input.int_in_range(0..=17u8)? {
            choice @ 0..=6 => self.stmt_simple(choice)?,
            choice @ 7..=11 => self.stmt_control(choice)?,
            choice => self.stmt_other(choice)?,
        }
        self.depth -= 1;
        Ok(())
    }

    /// A `let`, assignment or expression statement (choices 0..=6).
    fn stmt_simple(&mut self, choice: u8) -> Result<()> {
        match choice {
            0..=2 => {
                self.push("let");
                if self.input.arbitrary()? {
                    self.push("mut");
                }
                let local = self.local()?;
                self.push(local);
                if self.input.ratio(1, 4)? {
                    let ty =
                        self.pick(&[": String", ": u32", ": Vec<String>", ": &str", ": Rc<u8>"])?;
                    self.push(ty);
                }
                self.push("=");
                self.expr()?;
                self.push(";");
            }
            3 => {
                let local = self.local()?;
                self.push("let");
                self.push(local);
                self.push(";");
            }
            4 => {
                let local = self.local()?;
                self.push(local);
                let op = self.pick(&["=", "+=", "-="])?;
                self.push(op);
                self.expr()?;
                self.push(";");
            }
            _ => {
                self.expr()?;
                self.push(";");
            }
        }
        Ok(())
    }

    /// An `if let`, `for`, `while`, `while let` or jump (choices 7..=11).
    fn stmt_control(&mut self, choice: u8) -> Result<()> {
        match choice {
            7 => {
                self.push("if let");
                self.pattern()?;
                self.push("=");
                self.expr()?;
                self.block()?;
                if self.input.arbitrary()? {
                    self.push("else");
                    self.block()?;
                }
            }
            8 => {
                let label = self.pick(&["", "'outer:", "'inner:"])?;
                self.push(label);
                self.push("for");
                self.pattern()?;
                self.push("in");
                let iter = self.pick(&[
                    "0..n",
                    "1..=3",
                    "&names",
                    "names.iter().enumerate()",
                    "names.clone()",
                    "text.lines()",
                    "names.iter_mut()",
                    "text.chars()",
                    "names.chunks(2)",
                ])?;
                self.push(iter);
                self.block()?;
            }
            9 => {
                self.push("while");
                self.expr()?;
                self.block()?;
            }
            10 => {
                self.push("while let");
                self.pattern()?;
                self.push("=");
                self.expr()?;
                self.block()?;
            }
            _ => {
                let jump = self.pick(&["break", "continue", "return"])?;
                self.push(jump);
                if jump != "return" && self.input.arbitrary()? {
                    let label = self.pick(&LABELS)?;
                    self.push(label);
                }
                if jump != "continue" && self.input.arbitrary()? {
                    self.expr()?;
                }
                self.push(";");
            }
        }
        Ok(())
    }

    /// A `let`-`else`, closure, nested `fn`, block, let chain, or noise (12..=17).
    fn stmt_other(&mut self, choice: u8) -> Result<()> {
        match choice {
            12 => {
                self.push("let Some(v) =");
                self.expr()?;
                self.push("else {");
                self.stmts()?;
                self.push("return Ok(String::new()); };");
            }
            13 => {
                self.push("let f = ||");
                self.expr()?;
                self.push(";");
            }
            14 => {
                self.push("fn nested() -> u32 {");
                self.expr()?;
                self.push("}");
            }
            15 => {
                let label = self.pick(&["'outer:", ""])?;
                self.push(label);
                self.block()?;
            }
            16 => {
                self.push("if let Some(x) =");
                self.expr()?;
                self.push("&& let Ok(y) =");
                self.expr()?;
                self.block()?;
            }
            _ => {
                let noise = self.pick(&["let x = ;", "};", "else {}", "match {", "'l: 1;"])?;
                self.push(noise);
            }
        }
        Ok(())
    }

    fn stmts(&mut self) -> Result<()> {
        let count = if self.depth > 3 {
            0
        } else {
            self.input.int_in_range(0..=4u8)?
        };
        for _ in 0..count {
            self.stmt()?;
        }
        Ok(())
    }

    fn block(&mut self) -> Result<()> {
        self.push("{");
        self.stmts()?;
        if self.input.arbitrary()? {
            self.expr()?;
        }
        self.push("}");
        Ok(())
    }
}

/// A whole tool function around a generated body, as source text.
///
/// ```ignore
/// let source = body_gen::tool_source(&mut arbitrary::Unstructured::new(&[1, 2, 3]));
/// assert!(source.starts_with("async fn fuzzed"));
/// ```
pub fn tool_source(input: &mut Unstructured<'_>) -> String {
    let mut writer = Writer {
        input,
        out: String::new(),
        depth: 0,
    };
    // Running out of input just ends the body early.
    let _ = writer.stmts();
    let _ = writer.expr();
    format!(
        "async fn fuzzed(n: u32, names: Vec<String>, text: String) -> Result<String, ToolError> {{ {} }}",
        writer.out
    )
}

/// What the pipeline made of one function.
#[derive(Debug)]
pub enum Verdict {
    /// The source is not a function (the attribute reports that at the item).
    NotAFunction,
    /// Refused with these errors.
    Refused(Vec<syn::Error>),
    /// Expanded; the expansion parsed as a file.
    Expanded,
}

/// Runs `source` through parse → check → lower → analyze → expand, as the attribute does,
/// and checks what must hold of any input: refusals are `syn::Error`s, an accepted body's
/// expansion parses as Rust items, and the attribute entry point itself never panics
/// (a panic anywhere fails the caller).
pub fn run_pipeline(source: &str) -> Verdict {
    let Ok(tokens) = TokenStream::from_str(source) else {
        return Verdict::NotAFunction;
    };
    // The entry point users reach: never panics, always yields tokens.
    let _ = super::expand_attribute(Kind::Tool, TokenStream::new(), tokens.clone());
    let Ok(item) = syn::parse2::<syn::ItemFn>(tokens) else {
        return Verdict::NotAFunction;
    };
    match run_stages(Kind::Tool, Default::default(), item, Errors::default()) {
        Staged::Expanded(expansion) => {
            if let Err(error) = syn::parse2::<syn::File>(expansion.clone()) {
                panic!(
                    "the expansion of an accepted body does not parse ({error}):\n{source}\n→ {expansion}"
                );
            }
            Verdict::Expanded
        }
        Staged::Refused(_, errors) => match errors.finish() {
            Ok(()) => panic!("refused without an error:\n{source}"),
            Err(error) => Verdict::Refused(error.into_iter().collect()),
        },
    }
}

/// One fuzz input: generate, run, and (outside libFuzzer, where proc-macro2 tracks source
/// locations) check that every refusal points into the function.
pub fn fuzz_one(data: &[u8]) -> Verdict {
    let source = tool_source(&mut Unstructured::new(data));
    let verdict = run_pipeline(&source);
    #[cfg(not(fuzzing))]
    if let Verdict::Refused(errors) = &verdict {
        for error in errors {
            let start = error.span().start();
            assert!(
                start.line >= 1,
                "a refusal without a span in the body: {error}\n{source}"
            );
        }
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::Rng as _;
    use proptest::test_runner::{RngAlgorithm, TestRng};

    /// The generator's finding, kept: `let .. else` on an initializer with `?` after a
    /// suspension expanded to `let P = match .. { .. } else { .. }`, which does not parse.
    #[test]
    fn let_else_on_a_question_mark_after_a_suspension_expands_to_rust() {
        let source = "async fn fuzzed(names: Vec<String>) -> Result<String, ToolError> { \
            let prefix = ask!(text(\"Prefix?\")).accepted()?; \
            let Some(found) = pick(&names, &prefix)? else { return Ok(String::new()); }; \
            Ok(found) }";
        assert!(matches!(run_pipeline(source), Verdict::Expanded));
    }

    /// libFuzzer's finding: a statement starting with a rewritten `?` after a suspension
    /// (`x? + y;`, `x?.len();`) became `match .. { .. } + y;`, which does not parse.
    #[test]
    fn a_statement_starting_with_a_question_mark_after_a_suspension_expands_to_rust() {
        for statement in [
            "ask!(text(\"q\")).accepted()? + ask!(text(\"q\"));",
            "ask!(text(\"q\")).accepted()?.len();",
        ] {
            let source = format!(
                "async fn fuzzed(n: u32) -> Result<String, ToolError> {{ {statement} Ok(String::new()) }}"
            );
            assert!(
                matches!(run_pipeline(&source), Verdict::Expanded),
                "{source}"
            );
        }
    }

    /// libFuzzer's finding: a branch that initializes a deferred local and whose value is
    /// kept (`let v = if ask!(..)? { x = 1; .. } else { .. };`) expanded to
    /// `let t = let mut x; { .. };`, which does not parse.
    #[test]
    fn a_valued_branch_that_initializes_a_deferred_local_expands_to_rust() {
        let source = "async fn fuzzed(n: u32) -> Result<String, ToolError> { \
            let start: u32; \
            let when = if ask!(confirm(\"Now?\")).accepted()? { start = 1; \"now\" } \
                else { start = 2; \"later\" }; \
            Ok(format!(\"{when} {start}\")) }";
        assert!(matches!(run_pipeline(source), Verdict::Expanded));
    }

    /// Every crash input libFuzzer found, kept in `fuzz/regressions/macro_bodies/`.
    #[test]
    fn kept_crash_inputs_expand_or_are_refused() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fuzz/regressions/macro_bodies");
        let mut replayed = 0;
        for entry in std::fs::read_dir(dir).expect("the regressions directory") {
            let data = std::fs::read(entry.expect("an entry").path()).expect("readable");
            fuzz_one(&data);
            replayed += 1;
        }
        assert!(replayed > 0, "no kept inputs");
    }

    /// The stable driver: 1000 generated functions from a fixed seed (libFuzzer runs the
    /// same generator for millions, see `fuzz/README.md`).
    #[test]
    fn generated_bodies_expand_or_are_refused_with_spans() {
        let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let (mut expanded, mut refused) = (0, 0);
        for _ in 0..1000 {
            let mut data = vec![0u8; 256];
            rng.fill_bytes(&mut data);
            match fuzz_one(&data) {
                Verdict::Expanded => expanded += 1,
                Verdict::Refused(_) => refused += 1,
                Verdict::NotAFunction => {}
            }
            proc_macro2::extra::invalidate_current_thread_spans();
        }
        // Both sides of the pipeline are exercised, not just the parser's refusals.
        assert!(expanded > 50, "only {expanded} bodies expanded");
        assert!(refused > 50, "only {refused} bodies refused");
    }
}
