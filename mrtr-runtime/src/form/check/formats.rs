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

/// RFC 3986 `URI` (section 3): `scheme ":" hier-part [ "?" query ] [ "#" fragment ]`, ASCII
/// only (an IRI is the `iri` format), every `%` followed by two hex digits.
pub(super) fn is_absolute_uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    if !is_scheme(scheme) {
        return false;
    }
    // The fragment runs from the first `#`; the query from the first `?` before it.
    let (rest, fragment) = match rest.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (rest, None),
    };
    let (hier_part, query) = match rest.split_once('?') {
        Some((hier_part, query)) => (hier_part, Some(query)),
        None => (rest, None),
    };
    let query_chars = |part: &str| is_run_of(part, |b| is_pchar(b) || b == b'/' || b == b'?');
    is_hier_part(hier_part) && query.is_none_or(query_chars) && fragment.is_none_or(query_chars)
}

/// `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
fn is_scheme(scheme: &str) -> bool {
    let mut bytes = scheme.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// `"//" authority path-abempty / path-absolute / path-rootless / path-empty`. Without an
/// authority the path cannot start with `//` (that would be one), which the split below
/// guarantees; every form is then `*( pchar / "/" )`.
fn is_hier_part(hier_part: &str) -> bool {
    let path = match hier_part.strip_prefix("//") {
        Some(after) => {
            let end = after.find('/').unwrap_or(after.len());
            if !is_authority(&after[..end]) {
                return false;
            }
            &after[end..]
        }
        None => hier_part,
    };
    is_run_of(path, |b| is_pchar(b) || b == b'/')
}

/// `[ userinfo "@" ] host [ ":" port ]`.
fn is_authority(authority: &str) -> bool {
    let (userinfo, host_port) = match authority.rsplit_once('@') {
        Some((userinfo, host_port)) => (Some(userinfo), host_port),
        None => (None, authority),
    };
    let userinfo_ok = userinfo.is_none_or(|userinfo| {
        is_run_of(userinfo, |b| {
            is_unreserved(b) || is_sub_delim(b) || b == b':'
        })
    });
    // An IP-literal is bracketed and may hold colons: the port follows its `]`.
    let (host, port) = if host_port.starts_with('[') {
        let Some(close) = host_port.find(']') else {
            return false;
        };
        let (host, after) = host_port.split_at(close + 1);
        match after {
            "" => (host, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return false,
            },
        }
    } else {
        match host_port.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        }
    };
    userinfo_ok && is_host(host) && port.is_none_or(|port| port.bytes().all(|b| b.is_ascii_digit()))
}

/// `IP-literal / IPv4address / reg-name`; an IPv4 address is also a valid `reg-name`.
fn is_host(host: &str) -> bool {
    match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(literal) => is_ip_literal(literal),
        None => is_run_of(host, |b| is_unreserved(b) || is_sub_delim(b)),
    }
}

/// `IPv6address / IPvFuture` (`"v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )`).
fn is_ip_literal(literal: &str) -> bool {
    if let Some(future) = literal.strip_prefix(['v', 'V']) {
        let Some((version, rest)) = future.split_once('.') else {
            return false;
        };
        return !version.is_empty()
            && version.bytes().all(|b| b.is_ascii_hexdigit())
            && !rest.is_empty()
            && rest
                .bytes()
                .all(|b| is_unreserved(b) || is_sub_delim(b) || b == b':');
    }
    // std's parser takes exactly RFC 4291's text forms (RFC 3986's `IPv6address`), no zone.
    literal.parse::<std::net::Ipv6Addr>().is_ok()
}

/// Whether `part` is made of bytes `allowed` and `pct-encoded` triplets only.
fn is_run_of(part: &str, allowed: impl Fn(u8) -> bool) -> bool {
    let bytes = part.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = |j: usize| bytes.get(j).is_some_and(u8::is_ascii_hexdigit);
            if !(hex(i + 1) && hex(i + 2)) {
                return false;
            }
            i += 3;
        } else if allowed(bytes[i]) {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

/// `unreserved / sub-delims / ":" / "@"` (`pct-encoded` is handled by [`is_run_of`]).
fn is_pchar(b: u8) -> bool {
    is_unreserved(b) || is_sub_delim(b) || b == b':' || b == b'@'
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn is_sub_delim(b: u8) -> bool {
    matches!(
        b,
        b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
    )
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
