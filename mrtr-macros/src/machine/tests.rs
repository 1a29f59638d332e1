use proc_macro2::TokenStream;
use quote::quote;

use super::*;

fn lower_tool(body: TokenStream) -> (cfg::Cfg, analyze::Liveness) {
    let item: syn::ItemFn = syn::parse2(quote!(async fn t(n: u32) -> String #body)).unwrap();
    let mut errors = errors::Errors::default();
    let function = parse::parse_fn(Kind::Tool, parse::Args::default(), item, &mut errors);
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
fn malformed_input_is_an_error_not_a_panic() {
    for body in [
        quote!({ ask!() }),
        quote!({ ask!(key = 3, text("a")) }),
        quote!({ join!(ask!(text("a"))) }),
        quote!({ roots!(text("a")) }),
        quote!({ let f = || ask!(text("a")); }),
        quote!({ while ask!(confirm("a")).is_accepted() {} }),
        quote!({ println!("{:?}", ask!(text("a"))); }),
    ] {
        let item: syn::ItemFn = syn::parse2(quote!(async fn t() #body)).unwrap();
        let mut errors = errors::Errors::default();
        let function = parse::parse_fn(Kind::Tool, parse::Args::default(), item, &mut errors);
        check::check_positions(&function.body, &mut errors);
        assert!(errors.finish().is_err(), "accepted {body}");
    }
}

/// Prints an expansion: `MRTR_SHOW='{ body }' cargo test -p mrtr-macros show -- --nocapture`.
#[test]
fn show() {
    let Ok(body) = std::env::var("MRTR_SHOW") else {
        return;
    };
    let item: TokenStream = format!("async fn t(n: u32) -> String {body}").parse().unwrap();
    let out = expand_attribute(Kind::Tool, TokenStream::new(), item);
    let file: syn::File = syn::parse2(out.clone()).unwrap_or_else(|e| panic!("{e}\n{out}"));
    println!("{}", prettyplease::unparse(&file));
}
