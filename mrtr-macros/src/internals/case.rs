//! serde's `rename_all` rules, so schema property names and option values match what serde
//! deserializes.

/// One of serde's `rename_all` conventions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    /// The rule serde accepts under this name; `None` for a name serde itself rejects.
    pub(crate) fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "lowercase" => Self::Lower,
            "UPPERCASE" => Self::Upper,
            "PascalCase" => Self::Pascal,
            "camelCase" => Self::Camel,
            "snake_case" => Self::Snake,
            "SCREAMING_SNAKE_CASE" => Self::ScreamingSnake,
            "kebab-case" => Self::Kebab,
            "SCREAMING-KEBAB-CASE" => Self::ScreamingKebab,
            _ => return None,
        })
    }

    /// Renames a struct field, written in `snake_case`.
    pub(crate) fn field(self, name: &str) -> String {
        match self {
            Self::Lower | Self::Snake => name.to_owned(),
            Self::Upper | Self::ScreamingSnake => name.to_ascii_uppercase(),
            Self::Pascal => pascal_from_snake(name),
            Self::Camel => lower_first(&pascal_from_snake(name)),
            Self::Kebab => name.replace('_', "-"),
            Self::ScreamingKebab => name.to_ascii_uppercase().replace('_', "-"),
        }
    }

    /// Renames an enum variant, written in `PascalCase`.
    pub(crate) fn variant(self, name: &str) -> String {
        match self {
            Self::Pascal => name.to_owned(),
            Self::Lower => name.to_ascii_lowercase(),
            Self::Upper => name.to_ascii_uppercase(),
            Self::Camel => lower_first(name),
            Self::Snake => snake_from_pascal(name),
            Self::ScreamingSnake => snake_from_pascal(name).to_ascii_uppercase(),
            Self::Kebab => snake_from_pascal(name).replace('_', "-"),
            Self::ScreamingKebab => snake_from_pascal(name)
                .to_ascii_uppercase()
                .replace('_', "-"),
        }
    }
}

fn lower_first(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

fn pascal_from_snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper_next = true;
    for c in name.chars() {
        if c == '_' {
            upper_next = true;
        } else if upper_next {
            out.push(c.to_ascii_uppercase());
            upper_next = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn snake_from_pascal(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.char_indices() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::RenameRule::{self, *};

    #[test]
    fn renames_fields_like_serde() {
        let cases: [(RenameRule, &str); 8] = [
            (Lower, "dry_run"),
            (Upper, "DRY_RUN"),
            (Pascal, "DryRun"),
            (Camel, "dryRun"),
            (Snake, "dry_run"),
            (ScreamingSnake, "DRY_RUN"),
            (Kebab, "dry-run"),
            (ScreamingKebab, "DRY-RUN"),
        ];
        for (rule, expected) in cases {
            assert_eq!(rule.field("dry_run"), expected, "{rule:?}");
        }
    }

    #[test]
    fn renames_variants_like_serde() {
        let cases: [(RenameRule, &str); 8] = [
            (Lower, "bluegreen"),
            (Upper, "BLUEGREEN"),
            (Pascal, "BlueGreen"),
            (Camel, "blueGreen"),
            (Snake, "blue_green"),
            (ScreamingSnake, "BLUE_GREEN"),
            (Kebab, "blue-green"),
            (ScreamingKebab, "BLUE-GREEN"),
        ];
        for (rule, expected) in cases {
            assert_eq!(rule.variant("BlueGreen"), expected, "{rule:?}");
        }
    }

    #[test]
    fn parses_only_serde_names() {
        assert_eq!(RenameRule::parse("kebab-case"), Some(Kebab));
        assert_eq!(RenameRule::parse("Kebab"), None);
    }
}
