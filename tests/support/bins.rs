//! The example binaries the tests spawn, always rebuilt once per test process so a test
//! never drives a stale binary (cargo makes the rebuild a no-op when nothing changed).
//!
//! The builds pass `--workspace` so cargo resolves features exactly as `cargo test
//! --workspace` (the README's test command) does and reuses its artifacts; `-p mrtr` would
//! unify features differently and build a second copy of every dependency.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

/// `target/<profile>/examples/<name>`, built by `cargo build --workspace --example <name>` the
/// first time it is asked for in this process.
pub fn example(name: &str) -> PathBuf {
    built(&["--workspace", "--example", name], &["examples", name])
}

/// `target/<profile>/mrtr`, the terminal client, built by `cargo build --workspace --bin mrtr`
/// the first time it is asked for in this process.
pub fn terminal_client() -> PathBuf {
    built(&["--workspace", "--bin", "mrtr"], &["mrtr"])
}

/// Runs `cargo build <args>` once per process and returns `target/<profile>/<relative>`.
fn built(args: &[&str], relative: &[&str]) -> PathBuf {
    static BUILT: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let key = args.join(" ");
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(path) = built.get(&key) {
        return path.clone();
    }
    let exe = std::env::current_exe().expect("test binary path");
    let mut path = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target dir")
        .to_path_buf();
    for part in relative {
        path.push(part);
    }
    path.set_file_name(format!(
        "{}{}",
        relative.last().expect("a file name"),
        std::env::consts::EXE_SUFFIX
    ));
    let status = std::process::Command::new(env!("CARGO"))
        .arg("build")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("run cargo build");
    assert!(status.success(), "`cargo build {key}` failed");
    built.insert(key, path.clone());
    path
}

/// The `test_server` example (`tests/support/server.rs` on stdio).
pub fn test_server() -> PathBuf {
    example("test_server")
}
