//! The fuzz targets on stable: each runs over its seeds, its committed corpus
//! (`fuzz/corpus/<target>`), every crash input kept in `fuzz/regressions/<target>`, and
//! `MRTR_FUZZ_CASES` (default 5000) inputs derived from them by a seeded mutator — the same
//! inputs on every run, so a failure here reproduces.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::Path;

use mrtr_fuzz::{TARGETS, Target};
use proptest::prelude::Rng as _;
use proptest::test_runner::{RngAlgorithm, TestRng};

/// Inputs from the repository: the committed corpus and the kept crashes.
fn committed(target: &Target) -> Vec<(String, Vec<u8>)> {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut inputs = Vec::new();
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(dir).join(target.name)) else {
            continue;
        };
        for entry in entries.flatten() {
            let bytes = std::fs::read(entry.path()).expect("readable corpus file");
            inputs.push((entry.path().display().to_string(), bytes));
        }
    }
    inputs.sort();
    inputs
}

fn below(rng: &mut TestRng, bound: usize) -> usize {
    (rng.next_u64() % bound.max(1) as u64) as usize
}

/// One to four byte-level edits of `base`, some splicing in part of `other`.
fn mutate(rng: &mut TestRng, base: &[u8], other: &[u8]) -> Vec<u8> {
    let mut input = base.to_vec();
    for _ in 0..=below(rng, 4) {
        let at = below(rng, input.len() + 1);
        let last = input.len().saturating_sub(1);
        match below(rng, 6) {
            0 if !input.is_empty() => input[at.min(last)] ^= 1 << below(rng, 8),
            1 if !input.is_empty() => input[at.min(last)] = rng.next_u32() as u8,
            2 => {
                let mut extra = vec![0u8; 1 + below(rng, 8)];
                rng.fill_bytes(&mut extra);
                input.splice(at..at, extra);
            }
            3 => {
                let end = (at + 1 + below(rng, 16)).min(input.len());
                input.drain(at.min(end)..end);
            }
            4 if !other.is_empty() => {
                let from = below(rng, other.len());
                let to = (from + 1 + below(rng, 32)).min(other.len());
                input.splice(at..at, other[from..to].iter().copied());
            }
            _ => input.truncate(at),
        }
    }
    input
}

fn run_one(target: &Target, label: &str, input: &[u8]) {
    // A hang reports nothing by itself: MRTR_FUZZ_TRACE=1 names each input before it runs.
    if std::env::var_os("MRTR_FUZZ_TRACE").is_some() {
        eprintln!(
            "{} {label}: {:?}",
            target.name,
            String::from_utf8_lossy(input)
        );
    }
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| (target.run)(input))) {
        eprintln!(
            "{} failed on {label}: {:?}",
            target.name,
            String::from_utf8_lossy(input)
        );
        resume_unwind(panic);
    }
}

fn drive(name: &str) {
    let target = TARGETS
        .iter()
        .find(|target| target.name == name)
        .expect("a target of that name");
    let cases: usize = std::env::var("MRTR_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5000);
    let mut bases: Vec<(String, Vec<u8>)> = (target.seeds)()
        .into_iter()
        .enumerate()
        .map(|(index, seed)| (format!("seed {index}"), seed))
        .collect();
    bases.extend(committed(target));
    for (label, input) in &bases {
        run_one(target, label, input);
    }
    let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    for case in 0..cases {
        let base = &bases[below(&mut rng, bases.len())].1;
        let other = &bases[below(&mut rng, bases.len())].1;
        let input = if case % 10 == 0 {
            let mut random = vec![0u8; below(&mut rng, 64)];
            rng.fill_bytes(&mut random);
            random
        } else {
            mutate(&mut rng, base, other)
        };
        run_one(target, &format!("case {case}"), &input);
    }
}

#[test]
fn token_open() {
    drive("token_open");
}

#[test]
fn hostile_state() {
    drive("hostile_state");
}

#[test]
fn wire() {
    drive("wire");
}

#[test]
fn answers() {
    drive("answers");
}

#[test]
fn terminal() {
    drive("terminal");
}

#[test]
fn every_target_has_a_driver_here() {
    let driven = ["token_open", "hostile_state", "wire", "answers", "terminal"];
    for target in TARGETS {
        assert!(
            driven.contains(&target.name),
            "{} has no #[test]",
            target.name
        );
    }
}
