//! Prints the side-by-side Markdown tables from `flowload` JSON lines (and callgrind
//! counts) read from the files given, or from stdin.
//!
//! ```sh
//! bench-report results.jsonl
//! ```

use std::io::Read;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(about = "Render mrtr-vs-rmcp benchmark results as Markdown tables")]
struct Args {
    /// Files of JSON lines; none: stdin.
    files: Vec<std::path::PathBuf>,
    /// Instead: read `callgrind_annotate --inclusive=yes` output on stdin for SCENARIO, of
    /// which REQUESTS requests were served, and print its split as one JSON line.
    #[arg(long, num_args = 2, value_names = ["SCENARIO", "REQUESTS"])]
    profile_split: Option<Vec<String>>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(split) = &args.profile_split {
        return profile_split(&split[0], &split[1]);
    }
    let mut text = String::new();
    let read = if args.files.is_empty() {
        std::io::stdin().read_to_string(&mut text).map(drop)
    } else {
        args.files.iter().try_for_each(|file| {
            text.push_str(&std::fs::read_to_string(file)?);
            text.push('\n');
            Ok(())
        })
    };
    if let Err(error) = read {
        eprintln!("bench-report: {error}");
        return ExitCode::FAILURE;
    }
    let mut lines = Vec::new();
    for (number, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        match serde_json::from_str(line) {
            Ok(value) => lines.push(value),
            Err(error) => {
                eprintln!("bench-report: line {}: not JSON ({error})", number + 1);
                return ExitCode::FAILURE;
            }
        }
    }
    match mrtr_bench::report::render(lines) {
        Ok(table) => {
            print!("{table}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("bench-report: {error}");
            ExitCode::FAILURE
        }
    }
}

fn profile_split(scenario: &str, requests: &str) -> ExitCode {
    let mut annotate = String::new();
    if let Err(error) = std::io::stdin().read_to_string(&mut annotate) {
        eprintln!("bench-report: {error}");
        return ExitCode::FAILURE;
    }
    let Ok(requests) = requests.parse() else {
        eprintln!("bench-report: REQUESTS must be a whole number, not {requests:?}");
        return ExitCode::FAILURE;
    };
    match mrtr_bench::profile::split(&annotate, scenario, requests) {
        Ok(split) => {
            println!(
                "{}",
                serde_json::to_string(&split).expect("a split serializes")
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("bench-report: {error}");
            ExitCode::FAILURE
        }
    }
}
