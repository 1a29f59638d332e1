//! What a local holds, read from syntax: a borrow (`&x`, `s.as_str()`, `Cow::Borrowed`), a
//! shared-ownership handle (`Rc`/`Arc`), or a type naming a lifetime. Analysis refuses to
//! keep such locals across a suspension.

use syn::visit::Visit;
use syn::{Expr, Ident};

/// Methods of the standard library that return a borrow of their receiver.
pub(super) const BORROW_RETURNING_METHODS: &[&str] = &[
    "as_str",
    "as_slice",
    "as_ref",
    "as_deref",
    "as_bytes",
    "as_path",
    "as_os_str",
    "trim",
    "trim_start",
    "trim_end",
    "trim_matches",
    "strip_prefix",
    "strip_suffix",
    "first",
    "last",
    "iter",
    "keys",
    "values",
    "lines",
    "chars",
    "split",
    "split_whitespace",
    "split_once",
];

/// Whether a `match`/`if let` scrutinee hands out references to its bindings: a borrow,
/// or a lookup (`map.get(..)`, `items.iter().find(..)`) that returns one.
pub(super) fn scrutinee_borrows(scrutinee: &Expr) -> bool {
    borrows(scrutinee)
        || matches!(scrutinee, Expr::MethodCall(call)
            if ["get", "find"].contains(&call.method.to_string().as_str()))
}

/// Methods whose result borrows from wherever their receiver borrows from.
pub(super) const BORROW_PRESERVING_METHODS: &[&str] = &[
    "unwrap",
    "expect",
    "unwrap_or",
    "unwrap_or_default",
    "unwrap_or_else",
    "ok",
    "ok_or",
    "ok_or_else",
    "rev",
    "skip",
    "take",
    "peekable",
];

/// Whether an initializer syntactically evaluates to a borrow (`&x`, `s.as_str()`,
/// `Cow::Borrowed(..)`): such a local cannot be kept across a suspension.
pub(super) fn borrows(init: &Expr) -> bool {
    match init {
        Expr::Reference(_) => true,
        Expr::Paren(inner) => borrows(&inner.expr),
        Expr::Group(inner) => borrows(&inner.expr),
        Expr::MethodCall(call) => {
            let method = call.method.to_string();
            BORROW_RETURNING_METHODS.contains(&method.as_str())
                // `x.as_deref().unwrap_or("none")` still borrows from `x`.
                || (BORROW_PRESERVING_METHODS.contains(&method.as_str()) && borrows(&call.receiver))
        }
        Expr::Try(inner) => borrows(&inner.expr),
        Expr::Call(call) => matches!(&*call.func, Expr::Path(path)
            if path.path.segments.len() >= 2
                && path.path.segments.last().is_some_and(|s| s.ident == "Borrowed")
                && path.path.segments.iter().rev().nth(1).is_some_and(|s| s.ident == "Cow")),
        _ => false,
    }
}

/// `Rc` or `Arc`: the path segment of a shared-ownership constructor or type.
pub(super) fn is_shared_name(ident: &Ident) -> bool {
    ident == "Rc" || ident == "Arc"
}

/// Whether a declared type is a shared-ownership handle (`Rc<..>`, `Arc<..>`).
pub(super) fn is_shared_type(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(path)
        if path.path.segments.last().is_some_and(|s| is_shared_name(&s.ident)))
}

/// Whether a declared type names a non-`'static` lifetime (`Cow<'_, str>`, `&'a T`).
/// Elided references (`&str`) are not flagged: they may hold string literals.
pub(super) fn type_borrows(ty: &syn::Type) -> bool {
    struct Find(bool);
    impl<'ast> Visit<'ast> for Find {
        fn visit_lifetime(&mut self, lifetime: &'ast syn::Lifetime) {
            if lifetime.ident != "static" {
                self.0 = true;
            }
        }
    }
    let mut find = Find(false);
    find.visit_type(ty);
    find.0
}

/// Methods that return a `&mut` into their receiver.
const MUT_RETURNING_METHODS: &[&str] = &[
    "get_or_insert_with",
    "get_or_insert",
    "get_or_insert_default",
    "get_mut",
    "as_mut",
    "as_deref_mut",
    "first_mut",
    "last_mut",
    "or_insert",
    "or_insert_with",
    "or_default",
    "entry_ref",
];

/// Methods that return a lock or `RefCell` guard.
const GUARD_METHODS: &[&str] = &["lock", "read", "write", "borrow", "borrow_mut", "try_lock"];

/// What a local initialized with `init` is, when it can never be sealed, and a rewrite
/// that compiles: a closure, a `&mut` returned by a method, a lock guard.
pub(super) fn unstorable(name: &Ident, init: &Expr) -> Option<(String, String)> {
    let text = super::compact::compact(quote::ToTokens::to_token_stream(init));
    match init {
        Expr::Paren(inner) => unstorable(name, &inner.expr),
        Expr::Group(inner) => unstorable(name, &inner.expr),
        Expr::Closure(_) => Some((
            "a closure".to_string(),
            format!(
                "the sealed state holds data, not code. Define it after the suspension, or make it a function \
                 outside the body (`fn {name}(..) -> .. {{ .. }}`) and pass it what it captured"
            ),
        )),
        Expr::MethodCall(call) => {
            let method = call.method.to_string();
            let mut root = call;
            // `m.lock().unwrap()`: the guard comes from the innermost call.
            while BORROW_PRESERVING_METHODS.contains(&root.method.to_string().as_str())
                && let Expr::MethodCall(inner) = &*root.receiver
            {
                root = inner;
            }
            let root_method = root.method.to_string();
            if GUARD_METHODS.contains(&root_method.as_str()) && root.args.is_empty() {
                let what = if root_method.starts_with("borrow") {
                    "a `RefCell` borrow guard"
                } else {
                    "a lock guard"
                };
                return Some((
                    format!("{what} (`.{root_method}()`)"),
                    format!(
                        "drop it before the suspension (`drop({name});` or a `{{ .. }}` block around its uses) and \
                         take it again after: `let {name} = {text};`"
                    ),
                ));
            }
            if MUT_RETURNING_METHODS.contains(&method.as_str()) {
                return Some((
                    format!("a `&mut` reference returned by `{method}`"),
                    format!(
                        "take it again where it is used after the suspension (`let {name} = {text};`), \
                         or finish with it before"
                    ),
                ));
            }
            None
        }
        Expr::Reference(reference) if reference.mutability.is_some() => Some((
            "a `&mut` reference".to_string(),
            format!(
                "take it again where it is used after the suspension (`let {name} = {text};`), or finish with it before"
            ),
        )),
        _ => None,
    }
}
