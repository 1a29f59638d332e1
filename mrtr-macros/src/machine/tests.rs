use proc_macro2::TokenStream;
use quote::quote;

use super::*;
use crate::internals::errors::Errors;

fn lower_tool(body: TokenStream) -> (cfg::Cfg, analyze::Liveness) {
    let item: syn::ItemFn = syn::parse2(quote!(async fn t(n: u32) -> String #body)).unwrap();
    let mut errors = Errors::default();
    let function = parse::parse_fn(Kind::Tool, Default::default(), item, &mut errors);
    check::check_positions(&function.body, &mut errors);
    let cfg = lower::lower(&function, &mut errors);
    assert!(errors.finish().is_ok());
    let liveness = analyze::analyze(&cfg);
    (cfg, liveness)
}

fn stored_names(cfg: &cfg::Cfg, liveness: &analyze::Liveness, site: usize) -> Vec<String> {
    liveness
        .stored(cfg, &cfg.sites[site])
        .into_iter()
        .map(|var| cfg.vars[var].ident.to_string())
        .collect()
}

#[test]
fn only_live_locals_are_stored() {
    let (cfg, liveness) = lower_tool(quote!({
        let kept = String::from("a");
        let dropped = String::from("b");
        drop(dropped);
        let answer = ask!(text("q"));
        format!("{kept} {answer:?} {n}")
    }));
    assert_eq!(cfg.sites.len(), 1);
    assert_eq!(stored_names(&cfg, &liveness, 0), ["kept"]);
}

#[test]
fn loop_carries_accumulator_and_iterator() {
    let (cfg, liveness) = lower_tool(quote!({
        let mut acc = Vec::new();
        for i in 0..n {
            let a = ask!(text(format!("q{i}")));
            acc.push(a);
        }
        format!("{acc:?}")
    }));
    let mut stored = stored_names(&cfg, &liveness, 0);
    stored.sort();
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert!(stored.contains(&"acc".to_string()));
}

#[test]
fn a_break_out_of_kept_code_keeps_what_the_loop_exit_reads() {
    // The loop's only exit is the `break` inside an `if` kept as written, so `after` is
    // live across the suspension only through that jump.
    let (cfg, liveness) = lower_tool(quote!({
        let after = String::from("z");
        let mut acc = Vec::new();
        loop {
            let a = ask!(text("q"));
            acc.push(a);
            if acc.len() > n as usize {
                break;
            }
        }
        format!("{after} {acc:?}")
    }));
    let mut stored = stored_names(&cfg, &liveness, 0);
    stored.sort();
    assert_eq!(stored, ["acc", "after"]);
}

#[test]
fn an_exit_after_a_suspension_keeps_nothing_of_the_other_path() {
    // `return`, `continue`, `break` (also nested in an `if`/`else` both of whose branches
    // exit, or a panic) after a suspension do not fall through to the code after them:
    // `other`, used only on the path that does not suspend, is not stored.
    let bodies = [
        quote!({
            let other = std::time::Instant::now();
            if n > 1 {
                let a = ask!(text("q"));
                return format!("{a:?}");
            }
            format!("{:?}", other.elapsed())
        }),
        quote!({
            let mut seen = Vec::new();
            for i in 0..n {
                let other = std::time::Instant::now();
                if i % 2 == 0 {
                    let a = ask!(text("q"));
                    seen.push(a);
                    continue;
                }
                seen.push(format!("{:?}", other.elapsed()));
            }
            format!("{seen:?}")
        }),
        quote!({
            let mut seen = Vec::new();
            loop {
                let other = "x".repeat(100_000);
                if seen.len() > n as usize {
                    let a = ask!(text("q"));
                    seen.push(a);
                    break;
                }
                seen.push(other);
            }
            format!("{seen:?}")
        }),
        quote!({
            let other = String::from("x");
            if n > 1 {
                let a = ask!(text("q"));
                if a.is_empty() {
                    return String::new();
                } else {
                    panic!("{a}")
                }
            }
            other
        }),
    ];
    for (index, body) in bodies.into_iter().enumerate() {
        let (cfg, liveness) = lower_tool(body);
        let stored = stored_names(&cfg, &liveness, 0);
        assert!(
            !stored.iter().any(|name| name == "other"),
            "body {index} keeps {stored:?}"
        );
        if index > 0 && index < 3 {
            assert!(
                stored.iter().any(|name| name == "seen"),
                "body {index}: {stored:?}"
            );
        }
    }
}

#[test]
fn a_suspension_in_statement_position_is_lowered_and_its_answer_dropped() {
    let (cfg, liveness) = lower_tool(quote!({
        let kept = String::from("a");
        ask!(text("q"));
        kept
    }));
    assert_eq!(cfg.sites.len(), 1);
    assert_eq!(stored_names(&cfg, &liveness, 0), ["kept"]);
}

#[test]
fn pure_operands_before_a_suspension_are_accepted() {
    // Evaluating these after the answer instead of before changes nothing observable.
    let invisible = proc_macro2::Group::new(proc_macro2::Delimiter::None, quote!(n));
    for operand in [
        quote!(n),
        quote!(1),
        quote!(-n),
        quote!(items[n]),
        quote!(n + 1),
        quote!((n)),
        quote!(#invisible),
        quote!(&n),
        quote!(pair.0),
        quote!(n as u64),
        quote!((n, 1)),
        quote!([n, 1]),
    ] {
        let (cfg, _) = lower_tool(quote!({
            let x = combine(#operand, ask!(text("a")));
            x
        }));
        assert_eq!(cfg.sites.len(), 1, "{operand}");
    }
}

#[test]
fn only_breaks_that_leave_kept_code_become_jumps() {
    // Each body has exactly one `break` that leaves the code kept as written for the
    // lowered loop; the others stay inside a loop or labeled block of the kept code.
    for body in [
        quote!({
            loop {
                let a = ask!(text("q"));
                for x in 0..3 {
                    if x == n {
                        break;
                    }
                }
                if a.is_none() {
                    break;
                }
            }
            String::new()
        }),
        quote!({
            loop {
                let a = ask!(text("q"));
                let mut i = 0;
                while i < n {
                    i += 1;
                    if i == 2 {
                        break;
                    }
                }
                if a.is_none() {
                    break;
                }
            }
            String::new()
        }),
        quote!({
            'outer: loop {
                let a = ask!(text("q"));
                for x in 0..3 {
                    if x == n {
                        break 'outer;
                    }
                }
                'blk: {
                    if a.is_none() {
                        break 'blk;
                    }
                }
            }
            String::new()
        }),
        quote!({
            #[allow(unused_labels)]
            'a: loop {
                let a = ask!(text("q"));
                'a: loop {
                    break 'a;
                }
                if a.is_none() {
                    break 'a;
                }
            }
            String::new()
        }),
    ] {
        let (cfg, _) = lower_tool(body.clone());
        assert_eq!(cfg.jumps.len(), 1, "{body}");
    }
    // A `continue` leaves the kept code too; a labeled block that shadows the lowered
    // loop's label keeps its `break`, even with an unlabeled block inside it.
    for body in [
        quote!({
            loop {
                let a = ask!(text("q"));
                if a.is_none() {
                    continue;
                }
                if n > 0 {
                    break;
                }
            }
            String::new()
        }),
        quote!({
            'a: loop {
                let a = ask!(text("q"));
                'a: {
                    {
                        let _ = 1;
                    }
                    if a.is_none() {
                        break 'a;
                    }
                }
                if n > 0 {
                    break;
                }
            }
            String::new()
        }),
    ] {
        let (cfg, _) = lower_tool(body.clone());
        let expected = if body.to_string().contains("continue") {
            2
        } else {
            1
        };
        assert_eq!(cfg.jumps.len(), expected, "{body}");
    }
}

#[test]
fn a_question_mark_in_a_closure_is_the_closures_own() {
    let expand = |statement: TokenStream| {
        expand_attribute(
            Kind::Tool,
            TokenStream::new(),
            quote!(
                async fn t(n: Option<u32>) -> Result<String, String> {
                    let a = ask!(text("q"));
                    #statement
                    Ok(format!("{a:?}{f:?}"))
                }
            ),
        )
        .to_string()
    };
    // In the body itself, `?` leaves the tool: it goes through the runtime.
    let direct = expand(quote!(let f = n.ok_or("none")?;));
    assert!(direct.contains("__mrtr_residual"), "{direct}");
    // So does a `?` in a format-like macro's arguments.
    let in_macro = expand(quote!(let f = format!("{}", n.ok_or("none")?);));
    assert!(in_macro.contains("__mrtr_residual"), "{in_macro}");
    for statement in [
        quote!(let f = (|| -> Option<u32> { Some(n? + 1) })();),
        quote!(let f = async { n? ; Some(1) };),
    ] {
        let out = expand(statement.clone());
        assert!(!out.contains("compile_error"), "{statement}: {out}");
        assert!(!out.contains("__mrtr_residual"), "{statement}: {out}");
    }
}

#[test]
fn malformed_input_is_an_error_not_a_panic() {
    for (body, expected) in [
        (quote!({ ask!() }), "needs an input"),
        (
            quote!({ ask!(key = 3, text("a")) }),
            "an explicit key is a string literal",
        ),
        (
            quote!({ join!(ask!(text("a"))) }),
            "takes two or more suspensions",
        ),
        (quote!({ roots!(text("a")) }), "takes no input"),
        (
            quote!({
                let f = || ask!(text("a"));
            }),
            "cannot be used inside a closure",
        ),
        (
            quote!({ while ask!(confirm("a")).is_accepted() {} }),
            "cannot be used in a `while` condition",
        ),
        (
            quote!({
                println!("{:?}", ask!(text("a")));
            }),
            "inside another macro's arguments (`println!`)",
        ),
        (
            // Hoisting the suspension would call `side()` after the user answered.
            quote!({
                let x = combine(side(), ask!(text("a")));
                x
            }),
            "this suspension would run before code that comes first in evaluation order",
        ),
        (
            quote!({
                let x = combine(n += 1, ask!(text("a")));
                x
            }),
            "this suspension would run before code that comes first in evaluation order",
        ),
        (
            quote!({
                let x = combine(items[side()], ask!(text("a")));
                x
            }),
            "this suspension would run before code that comes first in evaluation order",
        ),
        (
            quote!({
                let x = combine(n + side(), ask!(text("a")));
                x
            }),
            "this suspension would run before code that comes first in evaluation order",
        ),
    ] {
        let item = quote!(async fn t() -> String #body);
        let out = expand_attribute(Kind::Tool, TokenStream::new(), item).to_string();
        assert!(out.contains("compile_error"), "accepted {body}");
        assert!(
            out.contains(expected),
            "{body}: expected `{expected}` in {out}"
        );
    }
}

fn expand_file(source: &str) -> String {
    let file: syn::File = syn::parse_str(source).expect("a snapshot input parses");
    let mut out = TokenStream::new();
    for item in file.items {
        let syn::Item::Fn(mut item_fn) = item else {
            continue;
        };
        let position = item_fn.attrs.iter().position(|attr| {
            attr.path()
                .segments
                .first()
                .is_some_and(|s| s.ident == "mrtr")
        });
        let Some(position) = position else { continue };
        let attr = item_fn.attrs.remove(position);
        let kind = match attr
            .path()
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .as_deref()
        {
            Some("prompt") => Kind::Prompt,
            Some("resource") => Kind::Resource,
            _ => Kind::Tool,
        };
        let args = match attr.meta {
            syn::Meta::List(list) => list.tokens,
            _ => TokenStream::new(),
        };
        out.extend(expand_attribute(kind, args, quote!(#item_fn)));
    }
    let file: syn::File = syn::parse2(out).expect("the expansion parses");
    prettyplease::unparse(&file)
}

/// In-process expansion snapshots: `tests/expand/NAME.rs` expands to
/// `tests/expand/NAME.expanded.rs`. Regenerate with `MRTR_BLESS=1`.
#[test]
fn expansion_snapshots() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/expand");
    let bless = super::difftest::blessing();
    let mut checked = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    entries.sort_by_key(|entry| entry.path());
    for entry in entries {
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".rs") || name.ends_with(".expanded.rs") {
            continue;
        }
        let expanded = expand_file(&std::fs::read_to_string(&path).unwrap());
        let golden = path.with_file_name(name.replace(".rs", ".expanded.rs"));
        if bless {
            std::fs::write(&golden, &expanded).unwrap();
        } else {
            let expected = std::fs::read_to_string(&golden)
                .unwrap_or_else(|_| panic!("missing {}; run with MRTR_BLESS=1", golden.display()));
            assert_eq!(
                expanded, expected,
                "{name} expands differently; run with MRTR_BLESS=1 if intended"
            );
        }
        checked += 1;
    }
    assert!(checked >= 3);
}

/// Measures expansion time of the largest test tool: `cargo test -p mrtr-macros
/// expansion_time -- --ignored --nocapture`.
#[test]
#[ignore]
fn expansion_time() {
    let source = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/control_flow.rs"),
    )
    .unwrap();
    let start = source.find("#[mrtr::tool]\nasync fn loops").unwrap();
    let end = start + source[start..].find("\n}\n").unwrap() + 3;
    let tool = &source[start..end];
    let runs = 200;
    let item: syn::ItemFn = syn::parse_str(&tool.replace("#[mrtr::tool]", "")).unwrap();
    let item = quote!(#item);
    let started = std::time::Instant::now();
    for _ in 0..runs {
        let _ = expand_attribute(Kind::Tool, TokenStream::new(), item.clone());
    }
    println!(
        "largest test tool: {:?} per expansion (expand only)",
        started.elapsed() / runs
    );
    let started = std::time::Instant::now();
    for _ in 0..runs {
        let _ = expand_file(tool);
    }
    let per = started.elapsed() / runs;
    println!(
        "largest test tool (`loops`, {} lines): {per:?} per expansion (incl. pretty-printing)",
        tool.lines().count()
    );
}

/// Every token of `tokens`, delimiters as their own tokens.
fn flat_tokens(tokens: TokenStream, out: &mut Vec<String>) {
    use proc_macro2::{Delimiter, TokenTree};
    for tree in tokens {
        match tree {
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::None => ("", ""),
                };
                out.push(open.into());
                flat_tokens(group.stream(), out);
                out.push(close.into());
            }
            TokenTree::Punct(punct) => out.push(punct.as_char().to_string()),
            other => out.push(other.to_string()),
        }
    }
}

fn corpus() -> &'static [Vec<String>] {
    static CORPUS: std::sync::OnceLock<Vec<Vec<String>>> = std::sync::OnceLock::new();
    CORPUS.get_or_init(read_corpus)
}

fn read_corpus() -> Vec<Vec<String>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut sources = Vec::new();
    for file in ["tests/control_flow.rs", "tests/deploy.rs"] {
        sources.push(std::fs::read_to_string(root.join(file)).unwrap());
    }
    for dir in ["tests/expand", "tests/ui"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            if entry.path().extension().is_some_and(|e| e == "rs") {
                sources.push(std::fs::read_to_string(entry.path()).unwrap());
            }
        }
    }
    let mut functions = Vec::new();
    for source in sources {
        let Ok(file) = syn::parse_file(&source) else {
            continue;
        };
        for item in file.items {
            if let syn::Item::Fn(mut item_fn) = item {
                item_fn.attrs.retain(|attr| {
                    attr.path()
                        .segments
                        .first()
                        .is_none_or(|s| s.ident != "mrtr")
                });
                let mut tokens = Vec::new();
                flat_tokens(quote!(#item_fn), &mut tokens);
                functions.push(tokens);
            }
        }
    }
    functions
}

const INSERTABLE: &[&str] = &[
    "ask", "!", "(", ")", "{", "}", ";", ",", "?", "return", "break", "continue", "loop", "while",
    "for", "in", "if", "else", "match", "=>", "let", "mut", "&", "&&", "||", ".", "|", "x",
    "sample", "roots", "join", "'a", ":", "async", "move", "fn", "=", "_", "1", "\"s\"", "..",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// Malformed input always becomes an error (or a valid expansion), never a panic.
    #[test]
    fn mutated_functions_never_panic(
        pick in 0usize..1000,
        edits in proptest::collection::vec((0u8..3, 0usize..10_000, 0usize..INSERTABLE.len()), 1..6),
        kind in 0u8..3,
    ) {
        let corpus = corpus();
        let mut tokens = corpus[pick % corpus.len()].clone();
        for (op, at, insert) in edits {
            if tokens.is_empty() { break; }
            let at = at % tokens.len();
            match op {
                0 => { tokens.remove(at); }
                1 => tokens.insert(at, INSERTABLE[insert].to_string()),
                _ => { let t = tokens[at].clone(); tokens.insert(at, t); }
            }
        }
        let Ok(item) = tokens.join(" ").parse::<TokenStream>() else { return Ok(()); };
        let kind = [Kind::Tool, Kind::Prompt, Kind::Resource][kind as usize];
        let result = std::panic::catch_unwind(|| expand_attribute(kind, TokenStream::new(), item.clone()));
        proptest::prop_assert!(result.is_ok(), "panicked on {}", item);
    }
}

#[test]
fn arguments_are_rebound_not_stored_unless_mutable() {
    let (cfg, liveness) = lower_tool(quote!({
        let a = ask!(text("q"));
        format!("{n} {a:?}")
    }));
    assert!(stored_names(&cfg, &liveness, 0).is_empty());
    let item: syn::ItemFn = syn::parse2(quote!(
        async fn t(mut n: u32) -> String {
            n += 1;
            let a = ask!(text("q"));
            format!("{n} {a:?}")
        }
    ))
    .unwrap();
    let mut errors = Errors::default();
    let function = parse::parse_fn(Kind::Tool, Default::default(), item, &mut errors);
    let cfg = lower::lower(&function, &mut errors);
    let liveness = analyze::analyze(&cfg);
    assert_eq!(stored_names(&cfg, &liveness, 0), ["n"]);
}

#[test]
fn machine_args_report_every_problem_at_once() {
    let mut errors = Errors::default();
    let args = crate::internals::attr::machine_args(
        Kind::Tool,
        quote!(nmae = "x", compat = 3, name = "ok"),
        &mut errors,
    );
    assert_eq!(args.name.unwrap().value(), "ok");
    let message = errors
        .finish()
        .unwrap_err()
        .into_compile_error()
        .to_string();
    assert!(message.contains("unknown argument `nmae`"), "{message}");
    assert!(
        message.contains("`compat` takes a string literal"),
        "{message}"
    );
    let mut errors = Errors::default();
    crate::internals::attr::machine_args(Kind::Resource, TokenStream::new(), &mut errors);
    assert!(errors.finish().is_err(), "a resource needs a uri");
}

#[test]
fn round_policy_argument_names_a_variant() {
    let mut errors = Errors::default();
    let args = crate::internals::attr::machine_args(
        Kind::Tool,
        quote!(replay = "at_most_once"),
        &mut errors,
    );
    assert!(errors.finish().is_ok());
    assert_eq!(args.replay.unwrap().to_string(), "AtMostOnce");
    assert!(args.deprecated.is_empty());
    let mut errors = Errors::default();
    let args =
        crate::internals::attr::machine_args(Kind::Tool, quote!(replay = "twice"), &mut errors);
    assert!(args.replay.is_none());
    let message = errors
        .finish()
        .unwrap_err()
        .into_compile_error()
        .to_string();
    assert!(
        message.contains(r#"unknown round policy \"twice\"; expected one of \"rerun_after_lease\", \"at_most_once\", \"unprotected\""#),
        "{message}"
    );
}

#[test]
fn old_key_names_still_work_and_are_deprecated_at_the_key() {
    let mut errors = Errors::default();
    let args = crate::internals::attr::machine_args(
        Kind::Tool,
        quote!(rounds = "unprotected", task = "optional", mrtr_rounds = 2),
        &mut errors,
    );
    assert!(errors.finish().is_ok());
    assert_eq!(args.replay.as_ref().unwrap().to_string(), "Unprotected");
    assert_eq!(args.task_after.as_ref().unwrap().to_string(), "2");
    let old: Vec<String> = args.deprecated.iter().map(|d| d.key.to_string()).collect();
    assert_eq!(old, ["rounds", "mrtr_rounds"]);

    let item = quote!(
        async fn pay() -> String {
            String::new()
        }
    );
    let expand =
        |attr: TokenStream| super::expand_attribute(Kind::Tool, attr, item.clone()).to_string();
    let new = expand(quote!(
        replay = "unprotected",
        task = "optional",
        task_after = 2
    ));
    let old = expand(quote!(
        rounds = "unprotected",
        task = "optional",
        mrtr_rounds = 2
    ));
    assert!(!new.contains("deprecated"), "{new}");
    for note in [
        "`rounds` is renamed: use `replay = \\\"...\\\"` instead",
        "`mrtr_rounds` is renamed: use `task_after = N` instead",
    ] {
        assert!(old.contains(note), "{note} in {old}");
    }
    // Same machine: only the deprecation uses are added.
    let deprecations = crate::internals::attr::deprecations(&args, &[]).to_string();
    assert_eq!(old.replacen(&deprecations, "", 1).replace("  ", " "), new);
    let mut errors = Errors::default();
    crate::internals::attr::machine_args(
        Kind::Tool,
        quote!(replay = "unprotected", rounds = "at_most_once"),
        &mut errors,
    );
    assert_eq!(
        errors.messages(),
        ["`replay` is given twice (`rounds` is its old name)"]
    );
}

#[test]
fn position_check_names_the_construct() {
    let body: syn::Block = syn::parse2(quote!({
        if a || ask!(confirm("x")).is_accepted() {}
        match x {
            _ if ask!(confirm("y")).is_accepted() => {}
            _ => {}
        }
    }))
    .unwrap();
    let mut errors = Errors::default();
    check::check_positions(&body, &mut errors);
    let message = errors
        .finish()
        .unwrap_err()
        .into_compile_error()
        .to_string();
    assert!(message.contains("right side of `||`"), "{message}");
    assert!(message.contains("match guard"), "{message}");
}

#[test]
fn expansion_is_a_unit_struct_and_a_machine_impl() {
    let out = expand_attribute(
        Kind::Tool,
        quote!(name = "renamed"),
        quote!(
            pub async fn deploy(service: String) -> String {
                let env = ask!(choice("Where?", ["a", "b"]));
                format!("{service} {env:?}")
            }
        ),
    );
    let file: syn::File = syn::parse2(out).unwrap();
    assert!(
        matches!(&file.items[0], syn::Item::Struct(s) if s.ident == "deploy" && matches!(s.vis, syn::Visibility::Public(_)))
    );
    let text = quote!(#file).to_string();
    assert!(text.contains("\"renamed\""));
    assert!(text.contains("\"ask_0\""));
    assert!(!text.contains("compile_error"));
}

/// Expansion time of a large synthetic tool (the generated differential bodies, concatenated):
/// `cargo test -p mrtr-macros --release large_expansion_time -- --ignored --nocapture`.
#[test]
#[ignore]
fn large_expansion_time() {
    let source = crate::machine::difftest::generate(7);
    let mut body = String::new();
    for chunk in source.split("#[mrtr::tool]").skip(1).take(40) {
        let start = chunk.find("let mut acc").unwrap();
        let end = chunk.find("Some(format!(\"{:?}\", acc))\n}").unwrap();
        body.push_str("{\n");
        body.push_str(&chunk[start..end]);
        body.push_str("}\n");
    }
    let item: TokenStream = format!("async fn big(seed: u32) -> Option<String> {{ {body} None }}")
        .parse()
        .unwrap();
    let runs = 20;
    let started = std::time::Instant::now();
    for _ in 0..runs {
        let _ = expand_attribute(Kind::Tool, TokenStream::new(), item.clone());
    }
    println!(
        "{} lines: {:?} per expansion",
        body.lines().count(),
        started.elapsed() / runs
    );
}

#[test]
fn loops_over_borrowed_items_store_a_snapshot_and_derive_their_bindings() {
    let (cfg, liveness) = lower_tool(quote!({
        let files = vec![String::new()];
        let mut log = Vec::new();
        for (i, (name, _)) in files.iter().zip(files.iter()).enumerate() {
            let answer = ask!(text(format!("{i} {name}")));
            log.push(format!("{name}{answer:?}"));
        }
        format!("{log:?}")
    }));
    // The loop bindings are derived from the snapshot, never stored themselves.
    let parts: Vec<(String, Vec<usize>)> = cfg
        .derived
        .iter()
        .map(|leaf| (leaf.pat.to_string(), leaf.path.clone()))
        .collect();
    assert_eq!(parts, [("i".into(), vec![0]), ("name".into(), vec![1, 0])]);
    let stored = stored_names(&cfg, &liveness, 0);
    assert!(
        !stored.iter().any(|name| name == "i" || name == "name"),
        "{stored:?}"
    );
    assert!(stored.iter().any(|name| name == "log"), "{stored:?}");
    assert!(
        stored.iter().any(|name| name.starts_with("__mrtr_t")),
        "the snapshot is stored: {stored:?}"
    );
}

#[test]
fn borrowed_iterables_are_seen_through_parentheses_and_invisible_groups() {
    let invisible = proc_macro2::Group::new(proc_macro2::Delimiter::None, quote!(&files));
    for iterable in [
        quote!((&files)),
        quote!(#invisible),
        quote!((files.iter())),
        // An owned receiver zipped with a borrowing argument still borrows.
        quote!(files.clone().into_iter().zip(files.iter())),
    ] {
        let (cfg, _) = lower_tool(quote!({
            let files = vec![String::new()];
            let mut log = Vec::new();
            for name in #iterable {
                let answer = ask!(text("q"));
                log.push(format!("{name}{answer:?}"));
            }
            format!("{log:?}")
        }));
        assert!(
            !cfg.derived.is_empty(),
            "{iterable} borrows: a snapshot loop"
        );
    }
}

#[test]
fn a_snapshot_stores_only_the_bound_parts_of_each_item() {
    let out = expand_attribute(
        Kind::Tool,
        TokenStream::new(),
        quote!(
            async fn t() -> String {
                let files = vec![String::new()];
                let mut log = Vec::new();
                for ((i, ((name), _))) in files.iter().zip(files.iter()).enumerate() {
                    let answer = ask!(text(format!("{i} {name}")));
                    log.push(format!("{name}{answer:?}"));
                }
                format!("{log:?}")
            }
        ),
    )
    .to_string();
    assert!(!out.contains("compile_error"), "{out}");
    // `i` and `name` are stored, through the parentheses; the wildcard is not.
    assert!(out.contains("__mrtr_part1"), "{out}");
    assert!(!out.contains("__mrtr_part2"), "{out}");
}

/// Lowers and analyses `body`, returning the errors (empty when accepted).
fn analysis_errors(body: TokenStream) -> String {
    let item: syn::ItemFn = syn::parse2(quote!(async fn t(n: u32) -> String #body)).unwrap();
    let mut errors = Errors::default();
    let function = parse::parse_fn(Kind::Tool, Default::default(), item, &mut errors);
    super::lower_and_analyze(&function, &mut errors);
    errors
        .finish()
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
}

#[test]
fn bindings_of_a_borrowing_scrutinee_without_a_local_owner_cannot_be_kept_across_a_suspension() {
    // The scrutinee reads no local of the body (nothing to keep and borrow again from).
    for scrutinee in [
        quote!(&opt),
        quote!((&opt)),
        quote!(map.get("k")),
        quote!(items.iter().find(|x| **x > 3)),
    ] {
        let if_let = analysis_errors(quote!({
            if let Some(v) = #scrutinee {
                let a = ask!(text("q"));
                format!("{v}{a:?}")
            } else {
                String::new()
            }
        }));
        assert!(
            if_let.contains("`v` holds a reference"),
            "{scrutinee}: {if_let}"
        );
        let matched = analysis_errors(quote!({
            match #scrutinee {
                Some(v) => {
                    let a = ask!(text("q"));
                    format!("{v}{a:?}")
                }
                None => String::new(),
            }
        }));
        assert!(
            matched.contains("`v` holds a reference"),
            "{scrutinee}: {matched}"
        );
    }
    let owned = analysis_errors(quote!({
        if let Some(v) = opt.clone() {
            let a = ask!(text("q"));
            format!("{v}{a:?}")
        } else {
            String::new()
        }
    }));
    assert_eq!(owned, "");
}

#[test]
fn a_local_initialised_with_a_borrow_cannot_be_kept_across_a_suspension() {
    let invisible = proc_macro2::Group::new(proc_macro2::Delimiter::None, quote!(&s));
    for init in [
        quote!(&s),
        quote!((&s)),
        quote!(#invisible),
        quote!(s.as_str()),
        quote!(s.as_deref().unwrap_or("none")),
        quote!(s.as_ref()?),
        quote!(Cow::Borrowed(&s)),
        quote!(std::borrow::Cow::Borrowed(&s)),
    ] {
        let errors = analysis_errors(quote!({
            let v = #init;
            let a = ask!(text("q"));
            format!("{v}{a:?}")
        }));
        assert!(errors.contains("`v` holds a reference"), "{init}: {errors}");
    }
    for init in [
        quote!(s.clone()),
        quote!(s.to_owned()?),
        quote!(Cow::Owned(s.clone())),
        quote!(Borrowed(&s)),
        quote!(s.len().unwrap_or(0)),
    ] {
        let errors = analysis_errors(quote!({
            let v = #init;
            let a = ask!(text("q"));
            format!("{v}{a:?}")
        }));
        assert_eq!(errors, "", "{init}");
    }
}

#[test]
fn shared_handles_and_typed_borrows_cannot_be_kept_across_a_suspension() {
    let kept = |local: TokenStream| {
        analysis_errors(quote!({
            #local
            let a = ask!(text("q"));
            format!("{v:?}{a:?}")
        }))
    };
    for local in [
        quote!(let v = Rc::new(1);),
        quote!(let v = std::sync::Arc::new(1);),
        quote!(let v: Rc<u8> = make();),
        quote!(let v: std::sync::Arc<u8> = make();),
        // A clone of a handle, and a method chain rooted at a constructor.
        quote!(let u: Rc<u8> = make(); drop(u.clone()); let v = u.clone();),
        quote!(let v = Rc::new(1).into_handle();),
    ] {
        let errors = kept(local.clone());
        assert!(errors.contains("no longer share"), "{local}: {errors}");
    }
    for local in [
        quote!(let v: Cow<'_, str> = make();),
        quote!(let v: &'a str = make();),
    ] {
        let errors = kept(local.clone());
        assert!(
            errors.contains("`v` holds a reference"),
            "{local}: {errors}"
        );
    }
    for local in [
        quote!(let v = Box::new(1);),
        quote!(let v: Box<u8> = make();),
        quote!(let v: &'static str = "text";),
        quote!(let v: &str = "text";),
        quote!(let v: Vec<u8> = make();),
        quote!(let u = vec![1]; let v = u.clone();),
        quote!(let u: Rc<u8> = make(); let v = u.clone_into_vec(); drop(u);),
    ] {
        assert_eq!(kept(local.clone()), "", "{local}");
    }
}

#[test]
fn a_local_assigned_in_every_arm_that_does_not_suspend_is_initialised() {
    for arms in [
        quote!(Some(s) => region = s, None => region = String::new(),),
        quote!(Some(s) => { region = s; } None => { region = String::new(); }),
    ] {
        let errors = analysis_errors(quote!({
            let region;
            match ask!(text("where")) {
                #arms
            }
            region
        }));
        assert_eq!(errors, "", "{arms}");
    }
}

#[test]
fn owned_iterables_keep_ordinary_bindings() {
    let (cfg, liveness) = lower_tool(quote!({
        let files = vec![String::new()];
        let mut log = Vec::new();
        for (i, name) in files.into_iter().enumerate() {
            let answer = ask!(text("q"));
            log.push(format!("{i}{name}{answer:?}"));
        }
        format!("{log:?}")
    }));
    assert!(cfg.derived.is_empty());
    let mut stored = stored_names(&cfg, &liveness, 0);
    stored.sort();
    assert!(stored.contains(&"i".to_string()) && stored.contains(&"name".to_string()));
}

#[test]
fn mutable_items_and_mut_snapshot_bindings_are_refused_at_their_tokens() {
    for (body, expected) in [
        (
            quote!({
                let mut v = vec![1];
                for x in v.iter_mut() {
                    let _ = ask!(text("q"));
                    *x += 1;
                }
                String::new()
            }),
            "`&mut` items",
        ),
        (
            // A mutable borrow in a method argument counts too.
            quote!({
                let a = vec![1];
                let mut b = vec![1];
                for (x, y) in a.into_iter().zip(b.iter_mut()) {
                    let _ = ask!(text("q"));
                    *y += x;
                }
                String::new()
            }),
            "`&mut` items",
        ),
        (
            quote!({
                let v = vec![1];
                for mut x in &v {
                    let _ = ask!(text("q"));
                    x = &0;
                }
                String::new()
            }),
            "cannot be `mut`",
        ),
    ] {
        let item: syn::ItemFn = syn::parse2(quote!(async fn t() -> String #body)).unwrap();
        let mut errors = Errors::default();
        let function = parse::parse_fn(Kind::Tool, Default::default(), item, &mut errors);
        let _ = lower::lower(&function, &mut errors);
        let error = errors.finish().unwrap_err().to_string();
        assert!(error.contains(expected), "{error}");
    }
}

#[test]
fn state_parameters_are_rebound_every_round_not_stored_or_listed() {
    let item: syn::ItemFn = syn::parse2(quote!(
        async fn t(pool: State<Pool>, State(cfg): State<Config>, n: u32) -> String {
            let _ = ask!(text("q"));
            format!("{pool:?}{cfg:?}{n}")
        }
    ))
    .unwrap();
    let mut errors = Errors::default();
    let function = parse::parse_fn(Kind::Tool, Default::default(), item, &mut errors);
    assert!(errors.finish().is_ok());
    assert_eq!(function.params.len(), 1, "only `n` is an argument");
    let states: Vec<(String, bool)> = function
        .states
        .iter()
        .map(|state| (state.ident.to_string(), state.destructured))
        .collect();
    assert_eq!(states, [("pool".into(), false), ("cfg".into(), true)]);
    let mut errors = Errors::default();
    let cfg = lower::lower(&function, &mut errors);
    let liveness = analyze::analyze(&cfg);
    assert!(stored_names(&cfg, &liveness, 0).is_empty());
}

#[test]
fn parameters_that_cannot_be_arguments_point_to_app_state() {
    let item: syn::ItemFn = syn::parse2(quote!(
        async fn t(pool: Arc<Pool>, items: impl Iterator<Item = u8>) -> impl Display {
            String::new()
        }
    ))
    .unwrap();
    let mut errors = Errors::default();
    let _ = parse::parse_fn(Kind::Tool, Default::default(), item, &mut errors);
    let messages: Vec<String> = errors
        .finish()
        .unwrap_err()
        .into_iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(messages[0].contains("State<Pool>"), "{}", messages[0]);
    assert!(messages[1].contains("`impl Trait`"), "{}", messages[1]);
    assert!(messages[2].contains("return type"), "{}", messages[2]);
}

#[test]
fn string_literals_are_collected_sorted_from_everywhere_in_the_body() {
    let literals = expand::string_literals(quote!({
        let env = if p { "prod" } else { "dev" };
        let _ = format!("{}", r"raw");
        vec!["prod", "b"]
    }));
    assert_eq!(literals, ["b", "dev", "prod", "raw", "{}"]);
}

#[test]
fn analysis_reports_a_local_read_before_any_assignment() {
    // Lowering always declares a local before reading it, so this graph is built by hand:
    // one block that returns `x`, which nothing assigned.
    let x: syn::Ident = syn::parse_quote!(x);
    let cfg = cfg::Cfg {
        vars: vec![cfg::Var {
            ident: x,
            hidden: false,
            arg: false,
            borrowed: false,
            shared: false,
            unstorable: None,
            derived: None,
            declared: None,
            role: None,
        }],
        blocks: vec![cfg::Block {
            scope: vec![("x".into(), 0)],
            items: Vec::new(),
            term: Some(cfg::Term::Return(cfg::Code {
                tokens: quote!(x),
                uses: [0].into(),
                ..Default::default()
            })),
        }],
        ..Default::default()
    };
    let liveness = analyze::analyze(&cfg);
    let mut errors = Errors::default();
    analyze::check_assigned(&cfg, &liveness, &mut errors);
    let message = errors.finish().unwrap_err().to_string();
    assert_eq!(
        message,
        "`x` is needed after this point but may not be assigned on every path; \
         initialize it where it is declared (`let x = ..;`)"
    );

    // An argument is assigned by the request: nothing to report.
    let mut with_arg = cfg.clone();
    with_arg.args.push(0);
    let mut errors = Errors::default();
    analyze::check_assigned(&with_arg, &analyze::analyze(&with_arg), &mut errors);
    assert!(errors.is_empty());
}

#[test]
fn analysis_reports_a_jump_that_would_carry_a_shadowing_binding() {
    let (cfg, liveness) = lower_tool(quote!({
        let x = String::from("outer");
        loop {
            let answer = ask!(text("Again?")).ok().unwrap_or_default();
            if let Some(x) = answer.strip_prefix("stop:") {
                let _ = x;
                break;
            }
        }
        x
    }));
    let mut errors = Errors::default();
    analyze::check_jumps(&cfg, &liveness, &cfg.reachable(), &mut errors);
    let message = errors.finish().unwrap_err().to_string();
    assert!(
        message.starts_with("`x` is rebound inside the statement"),
        "{message}"
    );
}

#[test]
fn crate_option_points_every_generated_path_at_the_renamed_facade() {
    let item = quote!(
        pub async fn deploy(service: String) -> String {
            let env = ask!(choice("Where?", ["a", "b"]));
            let notes: Vec<String> = roots!();
            format!("{service} {env:?} {notes:?}")
        }
    );
    let default = expand_attribute(Kind::Tool, TokenStream::new(), item.clone()).to_string();
    assert!(default.contains(":: mrtr :: __private"), "{default}");

    let renamed =
        expand_attribute(Kind::Tool, quote!(crate = "::my_mrtr"), item.clone()).to_string();
    assert!(!renamed.contains(":: mrtr ::"), "{renamed}");
    assert!(renamed.contains(":: my_mrtr :: __private"), "{renamed}");
    assert!(!renamed.contains("compile_error"), "{renamed}");

    // The inert stub emitted next to compile errors uses the renamed path too, so the real
    // error is not followed by "unresolved crate `mrtr`".
    let broken = quote!(
        pub async fn deploy(service: String) -> String {
            let r = &service;
            let answer = ask!(text("Why?"));
            format!("{r} {answer:?}")
        }
    );
    let stub = expand_attribute(Kind::Tool, quote!(crate = "::my_mrtr"), broken).to_string();
    assert!(stub.contains("compile_error"), "{stub}");
    assert!(!stub.contains(":: mrtr ::"), "{stub}");
}

/// Each straight-line item of the graph, block by block, compacted: `let PAT = INIT`,
/// `VAR := VALUE` for an assignment lowering tracks, and a kept statement as written.
fn item_texts(cfg: &cfg::Cfg) -> Vec<String> {
    use lower::compact;
    cfg.blocks
        .iter()
        .flat_map(|block| &block.items)
        .map(|item| match item {
            cfg::Item::Stmt(code) => compact(code.tokens.clone()),
            cfg::Item::Let {
                pat,
                init: Some(init),
                ..
            } => format!(
                "let {} = {}",
                compact(pat.clone()),
                compact(init.tokens.clone())
            ),
            cfg::Item::Let {
                pat, init: None, ..
            } => format!("let {}", compact(pat.clone())),
            cfg::Item::Assign { var, value } => format!(
                "{} := {}",
                cfg.vars[*var].ident,
                compact(value.tokens.clone())
            ),
        })
        .collect()
}

#[test]
fn an_assignment_to_a_local_overwrites_it_and_other_assignments_are_kept_as_written() {
    let (cfg, liveness) = lower_tool(quote!({
        let mut x = String::from("a");
        let mut pair = (1, 2);
        let a = ask!(text("q"));
        x = format!("{a:?}");
        pair.0 = 3;
        #[cfg(any())]
        x = String::new();
        format!("{x}{pair:?}")
    }));
    // `x = ..` is tracked (an `Item::Assign`, shown as `:=`); a field is not a local, and an
    // assignment with attributes stays as written so that its `#[cfg]` still applies.
    assert_eq!(
        item_texts(&cfg),
        [
            r#"let mut x = String::from("a")"#,
            "let mut pair = (1, 2)",
            "let a = __mrtr_t3",
            r#"x := format!("{a:?}")"#,
            "pair.0 = 3;",
            "#[cfg(any())]x = String::new();",
        ]
    );
    // The tracked assignment overwrites `x` before any read: its old value is not kept.
    assert_eq!(stored_names(&cfg, &liveness, 0), ["pair"]);
}

#[test]
fn a_suspending_assignment_in_an_arm_is_tracked_and_delivers_unit_only_where_used() {
    let (cfg, liveness) = lower_tool(quote!({
        let mut region = String::new();
        let mut pair = (String::new(), 0);
        match n {
            0 => region = ask!(text("r")).unwrap_or_default(),
            1 => pair.0 = ask!(text("p")).unwrap_or_default(),
            _ => {}
        }
        let unit = match n {
            0 => region = ask!(text("r")).unwrap_or_default(),
            _ => {}
        };
        format!("{region}{pair:?}{unit:?}")
    }));
    // The statement `match` discards its arms' `()`; the one bound to `unit` gets it in
    // its temporary (`__mrtr_t5`).
    assert_eq!(
        item_texts(&cfg),
        [
            "let mut region = String::new()",
            "let mut pair = (String::new(), 0)",
            "region := __mrtr_t3.unwrap_or_default()",
            "pair.0 = __mrtr_t4.unwrap_or_default();",
            "let unit = __mrtr_t5",
            "region := __mrtr_t6.unwrap_or_default()",
            "let __mrtr_t5 = ()",
        ]
    );
    // Across the `region` question only `pair` is kept: the answer overwrites `region`.
    assert_eq!(stored_names(&cfg, &liveness, 0), ["pair"]);
    assert_eq!(stored_names(&cfg, &liveness, 1), ["region", "pair"]);
}

#[test]
fn a_local_assigned_in_every_arm_is_not_kept_across_the_scrutinee() {
    for arms in [
        quote!(Some(s) => region = s, None => region = String::new(),),
        quote!(Some(s) => { region = s; } None => { region = String::new(); }),
    ] {
        let (cfg, liveness) = lower_tool(quote!({
            let region;
            match ask!(text("where")) {
                #arms
            }
            region
        }));
        assert!(stored_names(&cfg, &liveness, 0).is_empty(), "{arms}");
    }
    // A labeled block can be left before its assignment runs: the old value may be read.
    let (cfg, liveness) = lower_tool(quote!({
        let mut region = String::from("default");
        match ask!(text("where")) {
            Some(s) => 'set: {
                if s.is_empty() {
                    break 'set;
                }
                region = s;
            }
            None => region = String::new(),
        }
        region
    }));
    assert_eq!(stored_names(&cfg, &liveness, 0), ["region"]);
}

/// How each block of `cfg` ends.
fn terms(cfg: &cfg::Cfg) -> Vec<&'static str> {
    cfg.blocks
        .iter()
        .map(|block| match &block.term {
            Some(cfg::Term::Return(_)) => "return",
            Some(cfg::Term::Unreachable) => "unreachable",
            Some(cfg::Term::Suspend(_)) => "suspend",
            Some(cfg::Term::Goto(_)) => "goto",
            Some(_) => "branch",
            None => "open",
        })
        .collect()
}

#[test]
fn a_body_whose_last_statement_diverges_ends_unreachable_not_with_unit() {
    for body in [
        quote!({
            let a = ask!(text("q"));
            return format!("{a:?}");
        }),
        quote!({
            let a = ask!(text("q"));
            drop(a);
            panic!("no answer");
        }),
    ] {
        let (cfg, _) = lower_tool(body.clone());
        assert_eq!(terms(&cfg), ["suspend", "unreachable"], "{body}");
    }
    // A suspending block used as a value that ends in a statement is `()`.
    let (cfg, _) = lower_tool(quote!({
        let v = {
            let a = ask!(text("q"));
            drop(a);
        };
        format!("{v:?}")
    }));
    assert_eq!(terms(&cfg), ["suspend", "goto", "return"]);
    assert!(item_texts(&cfg).contains(&"let __mrtr_t1 = ()".to_string()));
}

#[test]
fn a_suspending_return_ends_the_flow_and_keeps_nothing_for_later() {
    let (cfg, liveness) = lower_tool(quote!({
        let later = String::from("z");
        if n > 0 {
            return ask!(text("q")).unwrap_or_default();
        }
        later
    }));
    let resume = cfg.sites[0].resume;
    assert!(
        matches!(&cfg.blocks[resume].term, Some(cfg::Term::Return(code)) if code.tokens.to_string().ends_with("unwrap_or_default ()")),
        "{:?}",
        cfg.blocks[resume]
    );
    assert!(stored_names(&cfg, &liveness, 0).is_empty());
}

#[test]
fn a_suspending_break_value_goes_to_its_loops_result() {
    for body in [
        quote!({
            let v = loop {
                break ask!(text("q")).unwrap_or_default();
            };
            v
        }),
        quote!({
            let v = 'outer: loop {
                loop {
                    break 'outer ask!(text("q")).unwrap_or_default();
                }
            };
            v
        }),
    ] {
        let (cfg, _) = lower_tool(body.clone());
        // Lowered directly: no jump marker, the value is bound in the resume block, which
        // goes to the exit of the labeled loop, where `v` is returned.
        assert!(cfg.jumps.is_empty(), "{body}");
        let resume = &cfg.blocks[cfg.sites[0].resume];
        assert_eq!(resume.items.len(), 1, "{body}");
        assert!(matches!(&resume.items[0], cfg::Item::Let { .. }), "{body}");
        let Some(cfg::Term::Goto(exit)) = resume.term else {
            panic!("{body}: {:?}", resume.term);
        };
        assert!(
            matches!(&cfg.blocks[exit].term, Some(cfg::Term::Return(code)) if code.tokens.to_string() == "v"),
            "{body}: {:?}",
            cfg.blocks[exit]
        );
    }
}

#[test]
fn a_loop_in_statement_position_has_no_result_for_its_breaks() {
    let lowered = |head: TokenStream| {
        lower_tool(quote!({
            let mut last = String::new();
            #head loop {
                let a = ask!(text("q")).unwrap_or_default();
                if a.is_empty() {
                    break a;
                }
                last = a;
            };
            last
        }))
        .0
    };
    // The kept `break a` discards its value (`let _ = (a);` once expanded) ...
    let cfg = lowered(TokenStream::new());
    assert_eq!(cfg.jumps.len(), 1);
    assert_eq!(cfg.jumps[0].value, None);
    // ... and binds it when the loop is a value.
    let cfg = lowered(quote!(let _v =));
    assert_eq!(cfg.jumps.len(), 1);
    assert!(cfg.jumps[0].value.is_some());
}

#[test]
fn a_statement_macro_reads_its_names_and_its_question_marks_leave_the_tool() {
    let (cfg, liveness) = lower_tool(quote!({
        let kept = String::from("a");
        let a = ask!(text("q"));
        println!("{kept} {}", a.ok_or("none")?);
        String::new()
    }));
    assert_eq!(stored_names(&cfg, &liveness, 0), ["kept"]);
    let printed = cfg
        .blocks
        .iter()
        .flat_map(|block| &block.items)
        .find_map(|item| match item {
            cfg::Item::Stmt(code) if code.tokens.to_string().starts_with("println") => Some(code),
            _ => None,
        })
        .expect("the println! statement is kept");
    assert!(printed.exits);
    assert!(
        printed.tokens.to_string().contains("__mrtr_residual"),
        "{}",
        printed.tokens
    );
}

#[test]
fn names_bound_inside_kept_code_shadow_and_its_free_names_are_read() {
    // Each statement reads `kept` (and only there) and binds its own `v`, which shadows
    // the outer `v`: across the suspension only `kept` is stored.
    for statement in [
        quote!(let f = |v: usize, y: usize| v + y + kept.len();),
        quote!(let g = match n.checked_sub(1) { Some(v) => v as usize + kept.len(), None => 0 };),
        quote!(for v in kept.chars() {
            drop(v);
        }),
        quote!(while let Some(v) = n.checked_sub(1) {
            drop((v, &kept));
            break;
        }),
        quote!(if let Some(v) = kept.chars().next() {
            drop(v);
        }),
        quote!(if let Some(v) = n.checked_sub(1)
            && v > 0
        {
            drop((v, &kept));
        }),
        quote!(while let Some(v) = n.checked_sub(1)
            && v > 0
        {
            drop((v, &kept));
            break;
        }),
    ] {
        let (cfg, liveness) = lower_tool(quote!({
            let kept = String::from("k");
            let v = String::from("shadowed");
            let a = ask!(text("q"));
            #statement
            format!("{a:?}")
        }));
        assert_eq!(stored_names(&cfg, &liveness, 0), ["kept"], "{statement}");
    }
    // rustc refuses a parenthesised `let`, but the macro sees it first: it binds like any
    // other, so the macro adds no error of its own about the outer, borrowed `v`.
    let errors = analysis_errors(quote!({
        let s = String::from("s");
        let v = s.as_str();
        let a = ask!(text("q"));
        if (let Some(v) = n.checked_sub(1)) {
            drop(v);
        }
        format!("{a:?}")
    }));
    assert_eq!(errors, "");
}

#[test]
fn only_a_borrow_of_loop_bindings_alone_is_derived_again_after_a_suspension() {
    let lowered = |statement: TokenStream| {
        lower_tool(quote!({
            let files = vec![String::new()];
            let cut = 1;
            let mut log = Vec::new();
            for name in &files {
                #statement
                let answer = ask!(text("q"));
                log.push(format!("{v:?}{answer:?}"));
            }
            format!("{log:?}")
        }))
        .0
    };
    let derived = |cfg: &cfg::Cfg| {
        cfg.derived
            .iter()
            .filter(|leaf| leaf.init.is_some())
            .count()
    };
    assert_eq!(derived(&lowered(quote!(let v = name.trim();))), 1);
    // Not a borrow; a `mut` binding; a borrow that also reads a local that is not a loop
    // binding: ordinary locals.
    for statement in [
        quote!(let v = name.len();),
        quote!(let mut v = name.trim();),
        quote!(let v = &name[..cut];),
    ] {
        assert_eq!(derived(&lowered(statement.clone())), 0, "{statement}");
    }
}

#[test]
fn a_let_chain_that_suspends_binds_for_its_later_conditions_and_its_body() {
    // The `let` of the chain suspends, so the condition and the `then` branch are lowered
    // apart; both still see the chain's `v`, not the outer one (moved before the question).
    for condition in [
        quote!(let Some(v) = ask!(text("q")).ok() && !v.is_empty()),
        // rustc refuses a parenthesised `let`; the macro binds it all the same.
        quote!((let Some(v) = ask!(text("q")).ok())),
    ] {
        let (cfg, liveness) = lower_tool(quote!({
            let v = String::from("moved");
            drop(v);
            if #condition {
                drop(v);
            }
            String::new()
        }));
        assert!(
            stored_names(&cfg, &liveness, 0).is_empty(),
            "{condition}: {:?}",
            stored_names(&cfg, &liveness, 0)
        );
    }
}

#[test]
fn a_pattern_binding_that_hides_a_local_needed_after_it_is_refused() {
    for construct in [
        // An arm that suspends, and an arm kept inline after a suspending scrutinee.
        quote!(let p = match n.checked_sub(1) {
            Some(v) => { let a = ask!(text("q")); format!("{v}{a:?}") }
            None => String::new(),
        };),
        quote!(let p = match ask!(text("q")).ok() { Some(v) => v, None => String::new() };),
        // `if let`, a let chain, an `if let` guard.
        quote!(let p = if let Some(v) = n.checked_sub(1) {
            let a = ask!(text("q"));
            format!("{v}{a:?}")
        } else {
            String::new()
        };),
        quote!(let p = if let Some(v) = n.checked_sub(1) && v > 0 {
            let a = ask!(text("q"));
            format!("{v}{a:?}")
        } else {
            String::new()
        };),
        quote!(let p = match n.checked_sub(1) {
            Some(w) if let Some(v) = w.checked_sub(1) => { let a = ask!(text("q")); format!("{v}{a:?}") }
            _ => String::new(),
        };),
        // Loops.
        quote!(let mut p = String::new(); for v in 0..n { let a = ask!(text("q")); p = format!("{v}{a:?}"); }),
        quote!(let mut p = String::new(); let mut i = 0; while let Some(v) = n.checked_sub(i) {
            i += 1;
            let a = ask!(text("q"));
            p = format!("{v}{a:?}");
        }),
    ] {
        let hidden = analysis_errors(quote!({
            let v = String::from("outer");
            #construct
            format!("{p}{v}")
        }));
        assert_eq!(
            hidden,
            "`v` here hides the outer `v`, which the code after this branch still needs; \
             around a suspension the outer value would be replaced by this binding: rename one of them",
            "{construct}"
        );
        // Once the outer `v` is not needed after the branch, nothing to refuse.
        let unneeded = analysis_errors(quote!({
            let v = String::from("outer");
            drop(v);
            #construct
            format!("{p}")
        }));
        assert_eq!(unneeded, "", "{construct}");
    }
    // A binding of another name is fine.
    for body in [
        quote!({
            let v = String::from("outer");
            let p = match ask!(text("q")).ok() {
                Some(w) => w,
                None => String::new(),
            };
            format!("{p}{v}")
        }),
        // The outer `v` is passed on under a hidden name where an inner `v` hides it.
        quote!({
            let v = String::from("outer");
            let p = {
                let v = 1;
                drop(v);
                match ask!(text("q")).ok() {
                    Some(v) => v,
                    None => String::new(),
                }
            };
            format!("{p}{v}")
        }),
    ] {
        assert_eq!(analysis_errors(body.clone()), "", "{body}");
    }
}

#[test]
fn an_if_let_guard_of_a_lowered_match_reads_its_scrutinee() {
    let (cfg, liveness) = lower_tool(quote!({
        let kept = String::from("7");
        match ask!(text("q")).ok() {
            Some(s) if let Ok(x) = kept.parse::<u32>() => format!("{s}{x}"),
            _ => String::new(),
        }
    }));
    assert_eq!(stored_names(&cfg, &liveness, 0), ["kept"]);
}

/// Issue 33, class 1: the bindings of a borrowed `match`/`if let` arm that suspends are
/// matched again from their owner: dead at the suspension, nothing is kept for them; live
/// across it, the owner is kept (never the borrow).
#[test]
fn bindings_of_a_borrowing_scrutinee_are_matched_again_from_their_owner() {
    for scrutinee in [
        quote!(&opt),
        quote!((&opt)),
        quote!(opt.as_deref()),
        quote!(opt.as_ref()),
        quote!(map.get(&n)),
        quote!(items.iter().find(|x| **x > n)),
    ] {
        let dead = analysis_errors(quote!({
            let opt = Some(n.to_string());
            let map = std::collections::HashMap::from([(n, n)]);
            let items = vec![n];
            if let Some(v) = #scrutinee {
                let len = format!("{v}").len();
                let a = ask!(text("q"));
                format!("{len}{a:?}")
            } else {
                String::new()
            }
        }));
        assert_eq!(dead, "", "{scrutinee}");
        let live = analysis_errors(quote!({
            let opt = Some(n.to_string());
            let map = std::collections::HashMap::from([(n, n)]);
            let items = vec![n];
            match #scrutinee {
                Some(v) => {
                    let a = ask!(text("q"));
                    format!("{v}{a:?}")
                }
                None => String::new(),
            }
        }));
        assert_eq!(live, "", "{scrutinee}");
    }
    let (cfg, liveness) = lower_tool(quote!({
        let opt = Some(n.to_string());
        let other = String::from("unused after");
        drop(other);
        if let Some(v) = &opt {
            let len = v.len();
            let a = ask!(text("q"));
            return format!("{len}{a:?}");
        }
        String::new()
    }));
    assert_eq!(stored_names(&cfg, &liveness, 0), ["len"]);
    let (cfg, liveness) = lower_tool(quote!({
        let opt = Some(n.to_string());
        if let Some(v) = &opt {
            let a = ask!(text("q"));
            return format!("{v}{a:?}");
        }
        String::new()
    }));
    assert_eq!(stored_names(&cfg, &liveness, 0), ["opt"]);
}

/// Issue 33, class 4: a local that can never be sealed is refused saying what it is, with
/// a rewrite that compiles.
#[test]
fn unstorable_locals_are_refused_saying_what_they_are() {
    let mut_ref = analysis_errors(quote!({
        let mut tags: Option<Vec<String>> = None;
        let list = tags.get_or_insert_with(Vec::new);
        let a = ask!(text("q"));
        list.push(format!("{a:?}"));
        String::new()
    }));
    assert!(
        mut_ref.contains("`list` is a `&mut` reference returned by `get_or_insert_with`")
            && mut_ref.contains("`let list = tags.get_or_insert_with(Vec::new);`"),
        "{mut_ref}"
    );
    let closure = analysis_errors(quote!({
        let f = |x: u32| x + n;
        let a = ask!(text("q"));
        format!("{}{a:?}", f(1))
    }));
    assert!(closure.contains("`f` is a closure"), "{closure}");
    let guard = analysis_errors(quote!({
        let m = std::sync::Mutex::new(n);
        let g = m.lock().unwrap();
        let a = ask!(text("q"));
        format!("{}{a:?}", *g)
    }));
    assert!(
        guard.contains("`g` is a lock guard (`.lock()`)")
            && guard.contains("`let g = m.lock().unwrap();`"),
        "{guard}"
    );
    // Not kept across the suspension: nothing to refuse.
    let done = analysis_errors(quote!({
        let mut set = std::collections::HashSet::new();
        let added = set.insert(n);
        let a = ask!(text("q"));
        format!("{added}{a:?}")
    }));
    assert_eq!(done, "");
}

#[test]
fn a_field_or_path_segment_in_a_macro_is_not_a_use_of_the_local() {
    // `card.label` and `config::label` name no local; `0..label` and `{label}` do.
    let (cfg, liveness) = lower_tool(quote!({
        let label = String::from("a");
        let width = 3usize;
        let card = Card { label };
        let answer = ask!(text("q"));
        format!("{} {} {answer:?}", card.label, config::width)
    }));
    assert_eq!(stored_names(&cfg, &liveness, 0), ["card"]);
    let (cfg, liveness) = lower_tool(quote!({
        let label = 2usize;
        let answer = ask!(text("q"));
        format!("{:?} {label} {answer:?}", (0..label))
    }));
    assert_eq!(stored_names(&cfg, &liveness, 0), ["label"]);
}

#[test]
fn the_state_enum_names_each_field_like_the_local_it_keeps() {
    let expanded = expand_file(
        "#[mrtr::tool]\nasync fn t(n: u32) -> String {\n    let label = String::new();\n    \
         for i in 0..n {\n        let _ = ask!(text(\"q\"));\n    }\n    label\n}\n",
    );
    assert!(
        expanded.contains("#[serde(rename = \"label\")]"),
        "{expanded}"
    );
    assert!(
        expanded.contains("#[serde(rename = \"the items left in `for i in 0..n`\")]"),
        "{expanded}"
    );
}

#[test]
fn strings_of_named_consts_join_the_literal_table_only_when_the_body_names_one() {
    let named = expand_file(
        "#[mrtr::tool]\nasync fn t(i: usize) -> String {\n    let env = ENVS[i];\n    \
         let _ = ask!(text(\"q\"));\n    env.to_string()\n}\n",
    );
    assert!(
        named.contains("::mrtr::__private::StrProbe(&ENVS)"),
        "{named}"
    );
    assert!(
        named.contains("::mrtr::__private::literal_table("),
        "{named}"
    );
    let plain = expand_file(
        "#[mrtr::tool]\nasync fn t() -> String {\n    let env = \"dev\";\n    \
         let _ = ask!(text(\"q\"));\n    env.to_string()\n}\n",
    );
    assert!(
        plain.contains("const __MRTR_LITERALS: &[&str] = &[\"dev\", \"q\"];"),
        "{plain}"
    );
}
