//! The fingerprint that ties a sealed state to the exact function that produced it.

use proc_macro2::{Delimiter, TokenStream, TokenTree};

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a over `bytes`, continuing from `hash`.
fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

/// Prints tokens one per space, so formatting-only edits (spacing, line breaks, comments)
/// print the same.
pub fn canonical_tokens(tokens: TokenStream) -> String {
    fn walk(tokens: TokenStream, out: &mut String) {
        for token in tokens {
            match token {
                TokenTree::Group(group) => {
                    let (open, close) = match group.delimiter() {
                        Delimiter::Parenthesis => ("(", ")"),
                        Delimiter::Brace => ("{", "}"),
                        Delimiter::Bracket => ("[", "]"),
                        Delimiter::None => ("", ""),
                    };
                    out.push_str(open);
                    out.push(' ');
                    walk(group.stream(), out);
                    out.push_str(close);
                    out.push(' ');
                }
                TokenTree::Ident(ident) => {
                    out.push_str(&ident.to_string());
                    out.push(' ');
                }
                TokenTree::Punct(punct) => {
                    out.push(punct.as_char());
                    out.push(' ');
                }
                TokenTree::Literal(literal) => {
                    out.push_str(&literal.to_string());
                    out.push(' ');
                }
            }
        }
    }
    let mut out = String::new();
    walk(tokens, &mut out);
    out
}

/// The fingerprint of one machine: macro version, kind, name, signature, and either the
/// body or the author's `compat` tag.
pub fn fingerprint(
    kind: &str,
    name: &str,
    signature: TokenStream,
    body: TokenStream,
    compat: Option<&str>,
) -> u64 {
    let mut hash = FNV_OFFSET;
    for part in [
        concat!("mrtr-macros ", env!("CARGO_PKG_VERSION")),
        kind,
        name,
        &canonical_tokens(signature),
    ] {
        hash = fnv1a(hash, part.as_bytes());
        hash = fnv1a(hash, &[0]);
    }
    match compat {
        Some(tag) => fnv1a(fnv1a(hash, b"compat "), tag.as_bytes()),
        None => fnv1a(fnv1a(hash, b"body "), canonical_tokens(body).as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn formatting_does_not_change_the_fingerprint() {
        let a: TokenStream = "{ let x = ask!(text(\"a\")); x }".parse().unwrap();
        let b: TokenStream =
            "{\n    let x =\n        ask!( text( \"a\" ) );\n    // comment\n    x\n}"
                .parse()
                .unwrap();
        let sig = quote!(fn f());
        assert_eq!(
            fingerprint("tool", "f", sig.clone(), a.clone(), None),
            fingerprint("tool", "f", sig.clone(), b, None)
        );
        let c: TokenStream = "{ let y = ask!(text(\"a\")); y }".parse().unwrap();
        assert_ne!(
            fingerprint("tool", "f", sig.clone(), a.clone(), None),
            fingerprint("tool", "f", sig.clone(), c.clone(), None)
        );
        assert_eq!(
            fingerprint("tool", "f", sig.clone(), a, Some("v1")),
            fingerprint("tool", "f", sig.clone(), c, Some("v1"))
        );
    }
}
