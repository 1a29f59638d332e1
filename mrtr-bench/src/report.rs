//! Turns the JSON lines of `flowload` runs (and callgrind counts) into Markdown tables with
//! every server side by side, the transport floor, and `mrtr`'s ratios to the fastest other
//! server and to rmcp — ready to paste into `docs/performance.md`.

use std::fmt::Write as _;

use serde::Deserialize;
use serde_json::Value;

/// One `flowload` line (labelled with the implementation).
#[derive(Debug, Deserialize)]
struct LoadLine {
    label: String,
    scenario: String,
    concurrency: usize,
    requests_per_flow: f64,
    server_cpu_us_per_flow: Option<f64>,
    state_bytes_median: Option<usize>,
    server_peak_rss_kib: Option<u64>,
}

/// One callgrind count, written by `scripts/bench-vs-rmcp --callgrind`.
#[derive(Debug, Deserialize)]
struct CallgrindLine {
    implementation: String,
    scenario: String,
    /// `None`: a whole flow; `Some(k)`: the k-th request of a flow.
    request: Option<usize>,
    instructions: f64,
}

/// One `flowload --replay-request` line (labelled with the implementation).
#[derive(Debug, Deserialize)]
struct ReplayLine {
    label: String,
    scenario: String,
    request: usize,
    state_bytes_in: usize,
    server_cpu_us_per_request: Option<f64>,
}

/// Renders every table the lines allow: HTTP runs, replayed requests, callgrind counts, then
/// profile splits.
///
/// ```
/// let lines = [
///     r#"{"label":"mrtr","scenario":"wizard","concurrency":8,"requests_per_flow":4.0,"server_cpu_us_per_flow":300.0,"state_bytes_median":390,"server_peak_rss_kib":9000}"#,
///     r#"{"label":"rmcp","scenario":"wizard","concurrency":8,"requests_per_flow":4.0,"server_cpu_us_per_flow":200.0,"state_bytes_median":90,"server_peak_rss_kib":8000}"#,
/// ];
/// let table = mrtr_bench::report::render(lines.iter().map(|l| serde_json::from_str(l).unwrap())).unwrap();
/// assert!(table.contains("| wizard | 8 | 4 | 300 | 200 | 1.50× | 1.50× | 390 | 90 | 8.8 | 7.8 |"));
/// ```
pub fn render(lines: impl IntoIterator<Item = Value>) -> Result<String, String> {
    let mut loads = Vec::new();
    let mut counts = Vec::new();
    let mut replays = Vec::new();
    let mut splits = Vec::new();
    for line in lines {
        if line.get("profile").is_some() {
            splits.push(
                crate::profile::ProfileSplit::deserialize(&line)
                    .map_err(|e| format!("{e}: {line}"))?,
            );
        } else if line.get("server_cpu_us_per_request").is_some() {
            replays.push(ReplayLine::deserialize(&line).map_err(|e| format!("{e}: {line}"))?);
        } else if line.get("instructions").is_some() {
            counts.push(CallgrindLine::deserialize(&line).map_err(|e| format!("{e}: {line}"))?);
        } else {
            loads.push(LoadLine::deserialize(&line).map_err(|e| format!("{e}: {line}"))?);
        }
    }
    let mut out = String::new();
    if !loads.is_empty() {
        render_loads(&loads, &mut out);
    }
    if !replays.is_empty() {
        render_replays(&replays, &mut out);
    }
    if !counts.is_empty() {
        render_counts(&counts, &mut out);
    }
    crate::profile::render(&splits, &mut out);
    Ok(out)
}

/// The servers a main table compares, in this order when present; any other label that is
/// not secondary joins them after, in order of appearance.
const MAIN_ORDER: &[&str] = &["mrtr", "rmcp", "fly", "python"];

/// The transport floor's label.
const FLOOR: &str = "floor";

fn is_secondary(label: &str) -> bool {
    EXTRA_IMPLEMENTATIONS
        .iter()
        .any(|(extra, _)| *extra == label)
}

/// The servers of the main table: `MAIN_ORDER` first, then the others seen.
fn main_labels(lines: &[LoadLine]) -> Vec<&str> {
    let mut labels: Vec<&str> = MAIN_ORDER
        .iter()
        .copied()
        .filter(|label| lines.iter().any(|line| line.label == *label))
        .collect();
    for line in lines {
        let label = line.label.as_str();
        if label != FLOOR && !is_secondary(label) && !labels.contains(&label) {
            labels.push(label);
        }
    }
    labels
}

/// One (scenario, concurrency) group's runs of one server.
struct Runs<'a> {
    lines: Vec<&'a LoadLine>,
}

impl Runs<'_> {
    fn values(&self, read: impl Fn(&LoadLine) -> Option<f64>) -> Vec<f64> {
        self.lines.iter().filter_map(|line| read(line)).collect()
    }

    fn cpu(&self) -> Vec<f64> {
        self.values(|l| l.server_cpu_us_per_flow)
    }

    fn median(&self, read: impl Fn(&LoadLine) -> Option<f64>) -> Option<f64> {
        median_f64(self.values(read))
    }
}

fn runs<'a>(lines: &'a [LoadLine], label: &str, scenario: &str, concurrency: usize) -> Runs<'a> {
    Runs {
        lines: lines
            .iter()
            .filter(|l| l.label == label && l.scenario == scenario && l.concurrency == concurrency)
            .collect(),
    }
}

/// The main table: server CPU-µs per completed flow for the floor and every server, mrtr's
/// ratio to the fastest other server and to rmcp, then state bytes and peak RSS.
fn render_loads(lines: &[LoadLine], out: &mut String) {
    let labels = main_labels(lines);
    let with_floor = lines.iter().any(|line| line.label == FLOOR);
    let others: Vec<&str> = labels.iter().copied().filter(|l| *l != "mrtr").collect();
    let _ = writeln!(
        out,
        "Server CPU-µs per completed flow (median of the repetitions, range in brackets), \
         `requestState` bytes per round (median) and peak RSS (MiB):\n"
    );
    let mut header = String::from("| scenario | c | requests/flow |");
    let mut rule = String::from("|---|---:|---:|");
    if with_floor {
        header.push_str(" floor |");
        rule.push_str("---:|");
    }
    for label in &labels {
        let _ = write!(header, " {label} |");
        rule.push_str("---:|");
    }
    header.push_str(" mrtr ÷ fastest other | mrtr ÷ rmcp |");
    rule.push_str("---:|---:|");
    for label in &labels {
        let _ = write!(header, " {label} state B |");
        rule.push_str("---:|");
    }
    for label in &labels {
        let _ = write!(header, " {label} RSS |");
        rule.push_str("---:|");
    }
    let _ = writeln!(out, "{header}\n{rule}");
    for (scenario, concurrency) in groups(lines) {
        let group = |label: &str| runs(lines, label, &scenario, concurrency);
        let requests = lines
            .iter()
            .find(|l| l.scenario == scenario && l.concurrency == concurrency)
            .map_or(0.0, |l| l.requests_per_flow);
        let mut row = format!("| {scenario} | {concurrency} | {requests} |");
        if with_floor {
            let floor = group(FLOOR).cpu();
            let _ = write!(row, " {} |", with_range(median_f64(floor.clone()), &floor));
        }
        for label in &labels {
            let cpu = group(label).cpu();
            let _ = write!(row, " {} |", with_range(median_f64(cpu.clone()), &cpu));
        }
        let mrtr = median_f64(group("mrtr").cpu());
        let fastest = others
            .iter()
            .filter_map(|label| median_f64(group(label).cpu()))
            .min_by(f64::total_cmp);
        let rmcp = median_f64(group("rmcp").cpu());
        let _ = write!(row, " {} | {} |", ratio(mrtr, fastest), ratio(mrtr, rmcp));
        for label in &labels {
            let state = group(label).median(|l| l.state_bytes_median.map(|b| b as f64));
            let _ = write!(row, " {} |", number(state));
        }
        for label in &labels {
            let rss = group(label).median(|l| l.server_peak_rss_kib.map(|k| k as f64 / 1024.0));
            let _ = write!(
                row,
                " {} |",
                rss.map_or("–".into(), |mib| format!("{mib:.1}"))
            );
        }
        let _ = writeln!(out, "{row}");
    }
    render_secondary(lines, out);
}

/// A table of its own for each secondary server, compared with rmcp and with mrtr.
fn render_secondary(lines: &[LoadLine], out: &mut String) {
    for (label, what) in EXTRA_IMPLEMENTATIONS {
        if !lines.iter().any(|line| line.label == *label) {
            continue;
        }
        let _ = writeln!(
            out,
            "\nFor information, `{label}` ({what}):\n\n| scenario | c | {label} CPU-µs/flow | {label} ÷ rmcp | mrtr ÷ {label} | {label} peak RSS KiB |\n|---|---:|---:|---:|---:|---:|"
        );
        for (scenario, concurrency) in groups(lines) {
            let group = |label: &str| runs(lines, label, &scenario, concurrency);
            let extra = group(label).cpu();
            let _ = writeln!(
                out,
                "| {scenario} | {concurrency} | {} | {} | {} | {} |",
                with_range(median_f64(extra.clone()), &extra),
                ratio(median_f64(extra.clone()), median_f64(group("rmcp").cpu())),
                ratio(median_f64(group("mrtr").cpu()), median_f64(extra)),
                number(group(label).median(|l| l.server_peak_rss_kib.map(|k| k as f64))),
            );
        }
    }
}

/// Servers run besides the compared ones, each reported in a table of its own.
const EXTRA_IMPLEMENTATIONS: &[(&str, &str)] = &[
    (
        "mrtr-service",
        "the `mrtr` tools served through rmcp's `StreamableHttpService` exactly as `rmcp` is: the engine with the HTTP layer held equal",
    ),
    (
        "rmcp-meta",
        "the hand-written tool also sending `_meta.serverInfo` in every result, as `mrtr` does",
    ),
];

/// The cost of request k of a flow, by implementation: the median over repetitions, and
/// its ratio to the flow's first resumed round (request 2).
fn render_replays(lines: &[ReplayLine], out: &mut String) {
    let mut labels: Vec<&str> = Vec::new();
    let mut keys: Vec<(&str, usize)> = Vec::new();
    for line in lines {
        if !labels.contains(&line.label.as_str()) {
            labels.push(&line.label);
        }
        if !keys.contains(&(line.scenario.as_str(), line.request)) {
            keys.push((&line.scenario, line.request));
        }
    }
    let cpu = |label: &str, scenario: &str, request: usize| {
        let runs: Vec<f64> = lines
            .iter()
            .filter(|l| l.label == label && l.scenario == scenario && l.request == request)
            .filter_map(|l| l.server_cpu_us_per_request)
            .collect();
        (median_f64(runs.clone()), runs)
    };
    let _ = write!(out, "\n| replayed: scenario | request (round) |");
    for label in &labels {
        let _ = write!(
            out,
            " {label} state B | {label} CPU-µs/request | {label} vs request 2 |"
        );
    }
    let _ = write!(out, "\n|---|---|");
    for _ in &labels {
        let _ = write!(out, "---:|---:|---:|");
    }
    for (scenario, request) in keys {
        let _ = write!(out, "\n| {scenario} | {request} ({}) |", request - 1);
        for label in &labels {
            let state = lines
                .iter()
                .find(|l| l.label == *label && l.scenario == scenario && l.request == request)
                .map_or("–".into(), |l| l.state_bytes_in.to_string());
            let (median, runs) = cpu(label, scenario, request);
            let (second, _) = cpu(label, scenario, 2);
            let _ = write!(
                out,
                " {state} | {} | {} |",
                with_range(median, &runs),
                ratio(median, second)
            );
        }
    }
    out.push('\n');
}

fn render_counts(lines: &[CallgrindLine], out: &mut String) {
    let mut keys: Vec<(String, Option<usize>)> = Vec::new();
    for line in lines {
        let key = (line.scenario.clone(), line.request);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let _ = writeln!(
        out,
        "\n| callgrind: scenario | what | mrtr instructions | rmcp instructions | ratio |\n|---|---|---:|---:|---:|"
    );
    for (scenario, request) in keys {
        let count = |implementation: &str| {
            lines
                .iter()
                .find(|l| {
                    l.implementation == implementation
                        && l.scenario == scenario
                        && l.request == request
                })
                .map(|l| l.instructions)
        };
        let what = request.map_or("per flow".to_string(), |k| format!("request {k} of a flow"));
        let (mrtr, rmcp) = (count("mrtr"), count("rmcp"));
        let _ = writeln!(
            out,
            "| {scenario} | {what} | {} | {} | {} |",
            thousands(mrtr),
            thousands(rmcp),
            ratio(mrtr, rmcp)
        );
    }
}

/// (scenario, concurrency) pairs in the order they first appear.
fn groups(lines: &[LoadLine]) -> Vec<(String, usize)> {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for line in lines {
        let key = (line.scenario.clone(), line.concurrency);
        if !seen.contains(&key) {
            seen.push(key);
        }
    }
    seen
}

fn median_f64(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

fn number(value: Option<f64>) -> String {
    value.map_or("–".into(), |v| format!("{v:.0}"))
}

fn thousands(value: Option<f64>) -> String {
    let Some(value) = value else {
        return "–".into();
    };
    let digits = format!("{value:.0}");
    let mut grouped = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

fn with_range(median: Option<f64>, runs: &[f64]) -> String {
    let Some(median) = median else {
        return "–".into();
    };
    if runs.len() < 2 {
        return format!("{median:.0}");
    }
    let low = runs.iter().copied().fold(f64::INFINITY, f64::min);
    let high = runs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{median:.0} ({low:.0}–{high:.0})")
}

fn ratio(mrtr: Option<f64>, rmcp: Option<f64>) -> String {
    match (mrtr, rmcp) {
        (Some(m), Some(r)) if r > 0.0 => format!("{:.2}×", m / r),
        _ => "–".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn load(label: &str, cpu: f64) -> Value {
        json!({"label": label, "scenario": "survey:1", "concurrency": 64, "requests_per_flow": 2.0,
               "server_cpu_us_per_flow": cpu, "state_bytes_median": 100, "server_peak_rss_kib": 5000})
    }

    #[test]
    fn repetitions_give_the_median_and_range() {
        let lines = [
            load("mrtr", 120.0),
            load("rmcp", 80.0),
            load("mrtr", 150.0),
            load("rmcp", 100.0),
            load("mrtr", 130.0),
            load("rmcp", 90.0),
        ];
        let table = render(lines).unwrap();
        assert!(
            table.contains(
                "| survey:1 | 64 | 2 | 130 (120–150) | 90 (80–100) | 1.44× | 1.44× | 100 | 100 | 4.9 | 4.9 |"
            ),
            "{table}"
        );
    }

    #[test]
    fn the_floor_comes_first_and_the_fastest_other_server_is_found() {
        let lines = [
            load("fly", 60.0),
            load("mrtr", 120.0),
            load("floor", 30.0),
            load("rmcp", 80.0),
        ];
        let table = render(lines).unwrap();
        assert!(
            table.contains("| scenario | c | requests/flow | floor | mrtr | rmcp | fly | mrtr ÷ fastest other | mrtr ÷ rmcp |"),
            "{table}"
        );
        assert!(
            table.contains("| survey:1 | 64 | 2 | 30 | 120 | 80 | 60 | 2.00× | 1.50× |"),
            "{table}"
        );
    }

    #[test]
    fn an_extra_implementation_gets_a_table_comparing_it_with_both() {
        let lines = [
            load("mrtr", 120.0),
            load("rmcp", 80.0),
            load("rmcp-meta", 100.0),
        ];
        let table = render(lines).unwrap();
        assert!(
            table.contains("| survey:1 | 64 | 100 | 1.25× | 1.20× | 5000 |"),
            "{table}"
        );
        assert!(!table.contains("`mrtr-service`"), "{table}");
        // A secondary server is not "the fastest other": mrtr ÷ rmcp only.
        assert!(table.contains("| 120 | 80 | 1.50× | 1.50× |"), "{table}");
    }

    #[test]
    fn callgrind_counts_get_their_own_table() {
        let lines = [
            json!({"implementation": "mrtr", "scenario": "wizard", "request": null, "instructions": 1_234_567.0}),
            json!({"implementation": "rmcp", "scenario": "wizard", "request": null, "instructions": 617_283.5}),
        ];
        let table = render(lines).unwrap();
        assert!(
            table.contains("| wizard | per flow | 1,234,567 | 617,284 | 2.00× |"),
            "{table}"
        );
    }

    #[test]
    fn replayed_requests_are_compared_with_the_first_resumed_round() {
        let replay = |label: &str, request: usize, cpu: f64| {
            json!({"label": label, "scenario": "survey:20", "request": request, "concurrency": 8,
                   "state_bytes_in": request * 10, "server_cpu_us_per_request": cpu,
                   "verified_replays": 100, "failed_replays": 0})
        };
        let lines = [
            replay("mrtr", 2, 60.0),
            replay("mrtr", 2, 50.0),
            replay("mrtr", 2, 70.0),
            replay("mrtr", 20, 75.0),
            replay("rmcp", 2, 40.0),
            replay("rmcp", 20, 60.0),
        ];
        let table = render(lines).unwrap();
        assert!(
            table.contains("| survey:20 | 2 (1) | 20 | 60 (50–70) | 1.00× | 20 | 40 | 1.00× |"),
            "{table}"
        );
        assert!(
            table.contains("| survey:20 | 20 (19) | 200 | 75 | 1.25× | 200 | 60 | 1.50× |"),
            "{table}"
        );
    }

    #[test]
    fn a_line_of_neither_kind_is_an_error() {
        assert!(render([json!({"label": "mrtr"})]).is_err());
    }
}
