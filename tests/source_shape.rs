//! The shape rule for shipped sources: no source file over 1,000 lines and no function over
//! 100 lines, in the `src/` of every published crate (`mrtr`, `mrtr-runtime`, `mrtr-macros`,
//! `mrtr-cli`).
//!
//! Each `.rs` file is parsed with `syn`; a function is measured from the line of its `fn`
//! keyword to the line of its closing brace. Free functions, inherent and trait-impl
//! methods, trait default methods and functions nested in other functions all count. Tests
//! are exempt: files named `tests.rs`, every item under `#[cfg(test)]` and the files of
//! modules declared under it (`#[cfg(test)] mod difftest;`) are skipped.

use std::{
    fmt::Write as _,
    fs,
    path::{Path, PathBuf},
};

use syn::{
    Attribute, Block, ImplItemFn, Item, ItemFn, ItemImpl, ItemMod, ItemTrait, Meta, Signature,
    TraitItemFn, Type,
    punctuated::Punctuated,
    token::Comma,
    visit::{self, Visit},
};

/// The shipped source directories, relative to the workspace root.
const SHIPPED: [&str; 4] = ["src", "mrtr-runtime/src", "mrtr-macros/src", "mrtr-cli/src"];
/// The longest a shipped source file may be, in lines.
const MAX_FILE_LINES: usize = 1_000;
/// The longest a shipped function may be, from its `fn` line to its closing brace.
const MAX_FN_LINES: usize = 100;

/// A function too long for the rule, or any function when the limit is what is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Function {
    /// The enclosing impl, trait or function names and the function's own, `::`-joined.
    name: String,
    /// The line of the `fn` keyword, 1-based.
    line: usize,
    /// Lines from the `fn` keyword to the closing brace, both included.
    lines: usize,
}

/// Walks one parsed file and records every non-test function with a body.
#[derive(Default)]
struct Measure {
    /// Names of the impls, traits and functions the walk is inside.
    scope: Vec<String>,
    /// The inline modules the walk is inside.
    modules: Vec<String>,
    functions: Vec<Function>,
    /// Out-of-line modules declared under `#[cfg(test)]`: their path from the file's module
    /// directory, without `.rs`.
    test_modules: Vec<PathBuf>,
}

impl Measure {
    fn record(&mut self, sig: &Signature, body: &Block) {
        let line = sig.fn_token.span.start().line;
        let end = body.brace_token.span.close().end().line;
        let mut name = self.scope.join("::");
        if !name.is_empty() {
            name.push_str("::");
        }
        name.push_str(&sig.ident.to_string());
        self.functions.push(Function {
            name,
            line,
            lines: end + 1 - line,
        });
    }

    fn scoped(&mut self, name: String, walk: impl FnOnce(&mut Self)) {
        self.scope.push(name);
        walk(self);
        self.scope.pop();
    }
}

impl<'ast> Visit<'ast> for Measure {
    fn visit_item(&mut self, item: &'ast Item) {
        let attrs = match item {
            Item::Fn(i) => &i.attrs,
            Item::Impl(i) => &i.attrs,
            Item::Mod(i) => &i.attrs,
            Item::Trait(i) => &i.attrs,
            Item::Const(i) => &i.attrs,
            Item::Static(i) => &i.attrs,
            Item::Macro(i) => &i.attrs,
            Item::Struct(i) => &i.attrs,
            Item::Enum(i) => &i.attrs,
            Item::Union(i) => &i.attrs,
            Item::Use(i) => &i.attrs,
            _ => return visit::visit_item(self, item),
        };
        if !test_only(attrs) {
            visit::visit_item(self, item);
        } else if let Item::Mod(m) = item
            && m.content.is_none()
        {
            let mut path: PathBuf = self.modules.iter().collect();
            path.push(m.ident.to_string());
            self.test_modules.push(path);
        }
    }

    fn visit_item_fn(&mut self, item: &'ast ItemFn) {
        self.record(&item.sig, &item.block);
        self.scoped(item.sig.ident.to_string(), |m| {
            visit::visit_item_fn(m, item)
        });
    }

    fn visit_item_impl(&mut self, item: &'ast ItemImpl) {
        let name = type_name(&item.self_ty);
        self.scoped(name, |m| visit::visit_item_impl(m, item));
    }

    fn visit_item_trait(&mut self, item: &'ast ItemTrait) {
        self.scoped(item.ident.to_string(), |m| visit::visit_item_trait(m, item));
    }

    fn visit_item_mod(&mut self, item: &'ast ItemMod) {
        self.modules.push(item.ident.to_string());
        self.scoped(item.ident.to_string(), |m| visit::visit_item_mod(m, item));
        self.modules.pop();
    }

    fn visit_impl_item_fn(&mut self, item: &'ast ImplItemFn) {
        if test_only(&item.attrs) {
            return;
        }
        self.record(&item.sig, &item.block);
        self.scoped(item.sig.ident.to_string(), |m| {
            visit::visit_impl_item_fn(m, item)
        });
    }

    fn visit_trait_item_fn(&mut self, item: &'ast TraitItemFn) {
        if test_only(&item.attrs) {
            return;
        }
        if let Some(body) = &item.default {
            self.record(&item.sig, body);
        }
        self.scoped(item.sig.ident.to_string(), |m| {
            visit::visit_trait_item_fn(m, item)
        });
    }
}

/// The last path segment of an impl's self type (`Driver` for `impl<T> super::Driver<T>`).
fn type_name(ty: &Type) -> String {
    match ty {
        Type::Path(p) => p
            .path
            .segments
            .last()
            .map_or_else(|| "impl".to_owned(), |s| s.ident.to_string()),
        Type::Reference(r) => type_name(&r.elem),
        _ => "impl".to_owned(),
    }
}

/// Whether the attributes compile the item only under `cfg(test)`: `cfg(test)`,
/// `cfg(all(test, ..))` or `cfg(any(..))` whose every branch is test-only.
fn test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<Meta>().is_ok_and(|m| meta_test_only(&m))
    })
}

fn meta_test_only(meta: &Meta) -> bool {
    match meta {
        Meta::Path(p) => p.is_ident("test"),
        Meta::List(list) => {
            let Ok(args) = list.parse_args_with(Punctuated::<Meta, Comma>::parse_terminated) else {
                return false;
            };
            if list.path.is_ident("all") {
                args.iter().any(meta_test_only)
            } else if list.path.is_ident("any") {
                !args.is_empty() && args.iter().all(meta_test_only)
            } else {
                false
            }
        }
        Meta::NameValue(_) => false,
    }
}

/// Every function with a body in `source` and the test-only modules it declares, outside
/// `#[cfg(test)]` items.
fn measure(source: &str) -> syn::Result<Measure> {
    let file = syn::parse_file(source)?;
    let mut measure = Measure::default();
    if !test_only(&file.attrs) {
        measure.visit_file(&file);
    }
    Ok(measure)
}

fn functions(source: &str) -> syn::Result<Vec<Function>> {
    measure(source).map(|m| m.functions)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The directory a file's `mod name;` declarations resolve in.
fn module_dir(file: &Path) -> PathBuf {
    let parent = file.parent().expect("a file in a directory");
    match file.file_stem().and_then(|s| s.to_str()) {
        Some("mod" | "lib" | "main") | None => parent.to_path_buf(),
        Some(stem) => parent.join(stem),
    }
}

/// One shipped source file, read and parsed.
struct Source {
    path: PathBuf,
    lines: usize,
    parsed: syn::Result<Measure>,
}

/// Every `.rs` file under the shipped directories except test code: files named `tests.rs`
/// and the files of modules declared under `#[cfg(test)]`.
fn shipped_sources(root: &Path) -> Vec<Source> {
    let mut sources = Vec::new();
    for dir in SHIPPED {
        let mut files = Vec::new();
        rust_files(&root.join(dir), &mut files);
        assert!(!files.is_empty(), "no Rust sources under {dir}");
        files.sort();
        for path in files {
            let text = fs::read_to_string(&path).expect("a readable source file");
            let (lines, parsed) = (text.lines().count(), measure(&text));
            sources.push(Source {
                path,
                lines,
                parsed,
            });
        }
    }
    let mut test_code: Vec<PathBuf> = Vec::new();
    for source in &sources {
        let Ok(measured) = &source.parsed else {
            continue;
        };
        let dir = module_dir(&source.path);
        for module in &measured.test_modules {
            test_code.push(dir.join(module).with_extension("rs"));
            test_code.push(dir.join(module));
        }
    }
    sources.retain(|s| {
        s.path.file_name().is_none_or(|n| n != "tests.rs")
            && !test_code.iter().any(|t| s.path.starts_with(t))
    });
    sources
}

#[test]
fn shipped_sources_keep_their_shape() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut report = String::new();
    let mut measured = 0;
    for source in shipped_sources(root) {
        let shown = source
            .path
            .strip_prefix(root)
            .unwrap_or(&source.path)
            .display()
            .to_string();
        if source.lines > MAX_FILE_LINES {
            let lines = source.lines;
            writeln!(report, "{shown}: {lines} lines (limit {MAX_FILE_LINES})").unwrap();
        }
        let found = match source.parsed {
            Ok(m) => m.functions,
            Err(e) => {
                let at = e.span().start().line;
                writeln!(report, "{shown}:{at}: does not parse: {e}").unwrap();
                continue;
            }
        };
        measured += found.len();
        for Function { name, line, lines } in found.into_iter().filter(|f| f.lines > MAX_FN_LINES) {
            writeln!(
                report,
                "{shown}:{line}: fn {name} is {lines} lines (limit {MAX_FN_LINES})"
            )
            .unwrap();
        }
    }
    // The walk found the code it is meant to hold to the rule, not an empty tree.
    assert!(
        measured > 500,
        "only {measured} functions measured: is the walk broken?"
    );
    assert!(
        report.is_empty(),
        "shipped sources over the shape limits:\n{report}"
    );
}

/// A function of `body_lines` lines between its `fn` line and its closing brace.
fn long_fn(name: &str, body_lines: usize) -> String {
    format!(
        "fn {name}() {{\n{}}}\n",
        "    let _ = 0;\n".repeat(body_lines)
    )
}

#[test]
fn measures_every_kind_of_function_and_skips_tests() {
    let source = format!(
        "{free}\
         struct S;\n\
         impl S {{\n{method}}}\n\
         trait T {{\n{default}    fn required(&self);\n}}\n\
         fn outer() {{\n{nested}}}\n\
         #[cfg(test)]\nmod tests {{\n{in_tests}}}\n\
         #[cfg(all(test, unix))]\n{all_test}\
         #[cfg(not(test))]\n{not_test}\
         #[cfg(test)]\nmod difftest;\n\
         mod inline {{\n    #[cfg(any(test))]\n    mod helpers;\n}}\n",
        free = long_fn("free", 99),
        method = long_fn("method", 100),
        default = long_fn("default", 1),
        nested = long_fn("nested", 3),
        in_tests = long_fn("in_tests", 500),
        all_test = long_fn("all_test", 500),
        not_test = long_fn("not_test", 500),
    );
    let measured = measure(&source).expect("the sample parses");
    assert_eq!(
        measured.test_modules,
        [
            PathBuf::from("difftest"),
            ["inline", "helpers"].iter().collect::<PathBuf>()
        ]
    );
    let found = measured.functions;
    let shape: Vec<(&str, usize)> = found.iter().map(|f| (f.name.as_str(), f.lines)).collect();
    assert_eq!(
        shape,
        [
            ("free", 101),
            ("S::method", 102),
            ("T::default", 3),
            ("outer", 7),
            ("outer::nested", 5),
            ("not_test", 502),
        ]
    );
    assert_eq!(found[0].line, 1);
    assert_eq!(found[1].line, 104);
    assert_eq!(functions("fn broken( {}").map(|f| f.len()).ok(), None);
}

#[test]
fn test_module_files_resolve_beside_their_parent() {
    assert_eq!(module_dir(Path::new("a/src/lib.rs")), Path::new("a/src"));
    assert_eq!(
        module_dir(Path::new("a/src/machine/mod.rs")),
        Path::new("a/src/machine")
    );
    assert_eq!(
        module_dir(Path::new("a/src/client.rs")),
        Path::new("a/src/client")
    );
}
