//! Source text for descriptions: tokens printed with the spacing a person writes.

use proc_macro2::TokenStream;

/// Source text of `tokens` with the spacing a person writes: `Vec<(String, u32)>`, not
/// `Vec < (String , u32) >`. For descriptions, never for code.
///
/// ```ignore
/// assert_eq!(compact(quote!(&'static [Option<u8>])), "&'static [Option<u8>]");
/// ```
pub fn compact(tokens: TokenStream) -> String {
    use proc_macro2::{Delimiter, Spacing, TokenTree};
    fn walk(tokens: TokenStream, out: &mut String) {
        let mut previous_word = false;
        for tree in tokens {
            match tree {
                TokenTree::Ident(ident) => {
                    if previous_word {
                        out.push(' ');
                    }
                    out.push_str(&ident.to_string());
                    previous_word = true;
                }
                TokenTree::Literal(literal) => {
                    if previous_word {
                        out.push(' ');
                    }
                    out.push_str(&literal.to_string());
                    previous_word = true;
                }
                TokenTree::Punct(punct) => {
                    let c = punct.as_char();
                    if matches!(c, '=' | '+' | '-' | '*' | '/' | '%' | '|' | '^')
                        && punct.spacing() == Spacing::Alone
                        && !out.ends_with(' ')
                        && !out.ends_with(['=', '!', '<', '>', '-', '+', '*', '/', '|', '&'])
                    {
                        out.push(' ');
                        out.push(c);
                        out.push(' ');
                    } else {
                        out.push(c);
                        if matches!(c, ',' | ';') {
                            out.push(' ');
                        }
                    }
                    // A word right after punctuation is not spaced: `&mut`, `'static`, `::new`.
                    previous_word = false;
                }
                TokenTree::Group(group) => {
                    let (open, close) = match group.delimiter() {
                        Delimiter::Parenthesis => ("(", ")"),
                        Delimiter::Bracket => ("[", "]"),
                        Delimiter::Brace => ("{ ", " }"),
                        Delimiter::None => ("", ""),
                    };
                    let last_word = out
                        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .next()
                        .unwrap_or_default();
                    let after_keyword = ["mut", "dyn", "impl", "in"].contains(&last_word);
                    if previous_word && (group.delimiter() == Delimiter::Brace || after_keyword) {
                        out.push(' ');
                    }
                    out.push_str(open);
                    walk(group.stream(), out);
                    out.push_str(close);
                    previous_word = false;
                }
            }
        }
    }
    let mut out = String::new();
    walk(tokens, &mut out);
    out.trim_end().to_string()
}

#[cfg(test)]
mod compact_tests {
    use super::compact;
    use quote::quote;

    #[test]
    fn compact_spaces_like_a_person() {
        assert_eq!(compact(quote!(Vec<(String, u32)>)), "Vec<(String, u32)>");
        assert_eq!(compact(quote!(&'static str)), "&'static str");
        assert_eq!(compact(quote!(&mut [u8; 4])), "&mut [u8; 4]");
        assert_eq!(
            compact(quote!(names.iter().enumerate())),
            "names.iter().enumerate()"
        );
        assert_eq!(compact(quote!(0..n - 1)), "0..n - 1");
        assert_eq!(compact(quote!(domain(x))), "domain(x)");
    }
}
