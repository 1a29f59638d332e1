//! Where a round of `mrtr`'s served path goes, from a callgrind profile of `bench-serve
//! --impl mrtr` under load (`scripts/bench-vs-rmcp --profile`).
//!
//! How it is computed (approximate, and said so in the table): `callgrind_annotate
//! --inclusive=yes` lists every function with the instructions spent in it and in what it
//! called. Each part below is the inclusive cost of the functions whose names contain one of
//! its patterns, summed, divided by the requests served; a part's patterns name entry points
//! that do not call one another (where they could, the largest match is kept rather than
//! the sum). `transport` is what is left of the program total: accepting, reading and
//! writing sockets, hyper, axum, tower layers, the gate's checks that are not parsing,
//! rmcp's service machinery, tokio, and the allocator calls made there. Inlined functions
//! have no entry of their own, so their cost lands in their caller's part.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// The parts of a round, each with the function-name patterns whose inclusive cost it sums.
/// They name the entry points of today's served path (`HttpServing`: mrtr's gate, then
/// rmcp's `StreamableHttpService`); a new path needs its own.
pub const PARTS: &[(&str, &[&str])] = &[
    // The JSON-RPC body into values: the gate's `Value` parse (`from_slice` inlined into
    // `from_trait`), then rmcp's message types (`from_slice`).
    (
        "parse",
        &["serde_json::de::from_slice", "serde_json::de::from_trait"],
    ),
    // The sealed requestState opened (base64, AEAD, envelope, binding) and the pending
    // requests and answers restored from it.
    ("open", &["StateSealer::open", "Mrtr::resumed"]),
    // The tool's machine run for this round, and the engine's bookkeeping around it.
    ("step", &["server::round::step_round"]),
    // The next requestState: pending requests encoded, envelope, AEAD seal, base64.
    ("seal", &["Mrtr::seal"]),
    // The response: rmcp's JSON-RPC message serialized.
    ("write", &["JsonRpcMessage<Req,Resp,Noti>>::serialize"]),
];

/// One profiled scenario: instructions per request, by part.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProfileSplit {
    /// The scenario profiled.
    pub profile: String,
    /// Requests served while the counters ran.
    pub requests: u64,
    /// All instructions of the server process per request.
    pub total: f64,
    /// (part, instructions per request), in [`PARTS`] order, then `transport`.
    pub parts: Vec<(String, f64)>,
}

/// Reads `callgrind_annotate --inclusive=yes` output and splits its total by [`PARTS`].
///
/// ```
/// let annotate = "\
/// 2,000,000 (100.0%)  PROGRAM TOTALS\n\
///   300,000 (15.0%)  ???:serde_json::de::from_slice [bench-serve]\n\
///   100,000 ( 5.0%)  ???:mrtr_runtime::token::sealer::StateSealer::open [bench-serve]\n";
/// let split = mrtr_bench::profile::split(annotate, "survey:5", 1000).unwrap();
/// assert_eq!(split.total, 2000.0);
/// assert_eq!(split.parts[0], ("parse".to_string(), 300.0));
/// assert_eq!(split.parts.last().unwrap(), &("transport".to_string(), 1600.0));
/// ```
pub fn split(annotate: &str, scenario: &str, requests: u64) -> Result<ProfileSplit, String> {
    if requests == 0 {
        return Err("no requests were profiled".into());
    }
    let mut total = None;
    let mut functions: Vec<(u64, &str)> = Vec::new();
    for line in annotate.lines() {
        let line = line.trim_start();
        let Some((count, rest)) = line.split_once(' ') else {
            continue;
        };
        let Ok(count) = count.replace(',', "").parse::<u64>() else {
            continue;
        };
        if rest.contains("PROGRAM TOTALS") {
            total = Some(count);
        } else {
            functions.push((count, rest));
        }
    }
    let total = total.ok_or("no PROGRAM TOTALS line: is this callgrind_annotate output?")?;
    let per_request = |count: u64| count as f64 / requests as f64;
    let mut parts = Vec::new();
    let mut accounted = 0u64;
    for (part, patterns) in PARTS {
        // Sum over patterns, the largest match of each (a pattern can match a function and
        // its monomorphized or closure twins, which call one another).
        let cost: u64 = patterns
            .iter()
            .map(|pattern| {
                functions
                    .iter()
                    .filter(|(_, name)| name.contains(pattern))
                    .map(|(count, _)| *count)
                    .max()
                    .unwrap_or(0)
            })
            .sum();
        accounted += cost;
        parts.push((part.to_string(), per_request(cost)));
    }
    parts.push((
        "transport".to_string(),
        per_request(total.saturating_sub(accounted)),
    ));
    Ok(ProfileSplit {
        profile: scenario.to_string(),
        requests,
        total: per_request(total),
        parts,
    })
}

/// The table of profiled scenarios: instructions per request by part, and shares.
pub(crate) fn render(splits: &[ProfileSplit], out: &mut String) {
    let Some(first) = splits.first() else {
        return;
    };
    let _ = write!(
        out,
        "\nmrtr (`HttpServing`, defaults) per request, callgrind instructions (inclusive cost of \
         each part's entry functions; transport = the rest of the process total; approximate):\n\n\
         | scenario | requests | total |"
    );
    for (part, _) in &first.parts {
        let _ = write!(out, " {part} |");
    }
    let _ = write!(out, "\n|---|---:|---:|");
    for _ in &first.parts {
        out.push_str("---:|");
    }
    for split in splits {
        let _ = write!(
            out,
            "\n| {} | {} | {:.0} |",
            split.profile, split.requests, split.total
        );
        for (_, cost) in &split.parts {
            let share = if split.total > 0.0 {
                100.0 * cost / split.total
            } else {
                0.0
            };
            let _ = write!(out, " {cost:.0} ({share:.0} %) |");
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_match_of_a_pattern_counts_once_and_the_rest_is_transport() {
        let annotate = "\
--------\n\
Ir\n\
10,000 (100.0%)  PROGRAM TOTALS\n\
 3,000  ???:mrtr_runtime::server::round::step_round [x]\n\
 2,000  ???:mrtr_runtime::server::round::step_round::{{closure}} [x]\n\
   500  ???:mrtr_runtime::server::mrtr::Mrtr::seal [x]\n";
        let result = split(annotate, "wizard", 10).unwrap();
        let part = |name: &str| result.parts.iter().find(|(p, _)| p == name).unwrap().1;
        assert_eq!(part("step"), 300.0);
        assert_eq!(part("seal"), 50.0);
        assert_eq!(part("open"), 0.0);
        assert_eq!(part("transport"), 650.0);
        assert!(split("no totals here", "wizard", 1).is_err());
        assert!(split(annotate, "wizard", 0).is_err());
    }
}
