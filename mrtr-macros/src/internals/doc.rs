//! Doc-comment text: what `///` lines become in listings and schemas.
//!
//! Two readings, because the two places differ: a machine's description is listed as the
//! author wrote it (line breaks kept, so Markdown lists survive), while a form field's
//! description is one paragraph per blank-line-separated block (a client shows it next to an
//! input box, where hard line breaks would be noise). A form field's doc comment is read
//! the way rustdoc reads an item's: its first paragraph is the summary, which becomes the
//! field's `title` (the label hosts put on the input), and the rest its `description`.

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The text of every `#[doc = "..."]` in `attrs`, one entry per attribute.
fn doc_strings(attrs: &[Attribute]) -> impl Iterator<Item = String> + '_ {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(pair) => match &pair.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(text),
                    ..
                }) => Some(text.value()),
                _ => None,
            },
            _ => None,
        })
}

/// The doc comment as written: lines joined by `\n`, each without the space after `///`
/// and without trailing blanks, the whole trimmed. Empty when there is none.
///
/// Used for a tool's, prompt's or resource's description and for argument descriptions.
pub(crate) fn doc_lines(attrs: &[Attribute]) -> String {
    let lines: Vec<String> = doc_strings(attrs)
        .map(|line| {
            line.strip_prefix(' ')
                .unwrap_or(&line)
                .trim_end()
                .to_string()
        })
        .collect();
    lines.join("\n").trim().to_string()
}

/// The doc comment reflowed: the lines of a paragraph joined by spaces, paragraphs by a blank
/// line. `None` when there is no text.
///
/// Used for form field descriptions and choice titles.
pub(crate) fn doc_paragraphs(attrs: &[Attribute]) -> Option<String> {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for text in doc_strings(attrs) {
        for line in text.split('\n').map(str::trim) {
            if line.is_empty() {
                if !current.is_empty() {
                    paragraphs.push(std::mem::take(&mut current));
                }
            } else {
                if !current.is_empty() {
                    current.push(' ');
                }
                current.push_str(line);
            }
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    (!paragraphs.is_empty()).then(|| paragraphs.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn attrs() -> Vec<Attribute> {
        vec![
            parse_quote!(#[doc = " Apply the plan"]),
            parse_quote!(#[doc = "   now?  "]),
            parse_quote!(#[doc = ""]),
            parse_quote!(#[doc = " Second."]),
            parse_quote!(#[serde(rename = "x")]),
        ]
    }

    #[test]
    fn doc_paragraphs_joins_lines_and_keeps_paragraphs() {
        assert_eq!(
            doc_paragraphs(&attrs()).unwrap(),
            "Apply the plan now?\n\nSecond."
        );
        assert_eq!(doc_paragraphs(&[]), None);
    }

    #[test]
    fn doc_lines_keeps_lines_as_written() {
        assert_eq!(doc_lines(&attrs()), "Apply the plan\n  now?\n\nSecond.");
        assert_eq!(doc_lines(&[]), "");
    }
}
