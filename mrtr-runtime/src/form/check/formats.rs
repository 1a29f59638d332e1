//! The four string formats the 2026-07-28 elicitation schema allows (`email`, `uri`,
//! `date`, `date-time`), checked as the module table in [`check`](super) describes;
//! other formats are annotations and pass.

pub(super) fn check_format(format: &str, text: &str) -> Result<(), String> {
    let (valid, expected) = match format {
        "email" => (is_email(text), "an email address (local@domain)"),
        "uri" => (is_absolute_uri(text), "an absolute URI (scheme:...)"),
        "date" => (is_full_date(text), "a calendar date (YYYY-MM-DD)"),
        "date-time" => (
            is_date_time(text),
            "a date-time (YYYY-MM-DDThh:mm:ss with Z or an offset)",
        ),
        _ => (true, ""),
    };
    if valid {
        Ok(())
    } else {
        Err(format!("must be {expected}"))
    }
}

/// RFC 5321 `Mailbox` (section 4.1.2), ASCII: `Local-part "@" ( Domain / address-literal )`.
pub(super) fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.rsplit_once('@') else {
        return false;
    };
    is_local_part(local) && (is_domain(domain) || is_address_literal(domain))
}

fn is_local_part(local: &str) -> bool {
    if local.is_empty() || local.len() > 64 {
        return false;
    }
    if let Some(quoted) = local
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
    {
        // Quoted-string: printable ASCII, with `\` escaping one printable character.
        let mut chars = quoted.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    if !chars.next().is_some_and(|e| (' '..='~').contains(&e)) {
                        return false;
                    }
                }
                '"' => return false,
                ' '..='~' => {}
                _ => return false,
            }
        }
        return true;
    }
    // Dot-string: atext runs separated by single dots.
    let atext = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c);
    local
        .split('.')
        .all(|atom| !atom.is_empty() && atom.chars().all(atext))
}

fn is_domain(domain: &str) -> bool {
    !domain.is_empty()
        && domain.len() <= 253
        && domain.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

fn is_address_literal(domain: &str) -> bool {
    let Some(inner) = domain
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
    else {
        return false;
    };
    match inner.strip_prefix("IPv6:") {
        Some(v6) => v6.parse::<std::net::Ipv6Addr>().is_ok(),
        None => inner.parse::<std::net::Ipv4Addr>().is_ok(),
    }
}

pub(super) fn is_absolute_uri(text: &str) -> bool {
    // The url crate follows WHATWG and would percent-encode spaces; RFC 3986 has none.
    !text.chars().any(|c| c.is_whitespace() || c.is_control()) && url::Url::parse(text).is_ok()
}

/// RFC 3339 `full-date`: exactly four, two and two digits, and a real calendar day.
pub(super) fn is_full_date(text: &str) -> bool {
    // Byte by byte: slicing the text could cut a multi-byte character (a panic).
    let bytes = text.as_bytes();
    bytes.len() == 10
        && bytes.iter().enumerate().all(|(i, byte)| match i {
            4 | 7 => *byte == b'-',
            _ => byte.is_ascii_digit(),
        })
        && chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok()
}

/// RFC 3339 `date-time`: a `full-date`, `T` (or `t`), and a time with an offset.
pub(super) fn is_date_time(text: &str) -> bool {
    // chrono also takes a space between date and time; RFC 3339's grammar does not.
    text.get(..10).is_some_and(is_full_date)
        && matches!(text.get(10..11), Some("T" | "t"))
        && chrono::DateTime::parse_from_rfc3339(text).is_ok()
}
