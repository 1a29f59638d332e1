//! The example binaries the tests spawn, always rebuilt once per test process so a test
//! never drives a stale binary (cargo makes the rebuild a no-op when nothing changed).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

/// `target/<profile>/examples/<name>`, built by `cargo build -p mrtr --example <name>` the first
/// time it is asked for in this process.
pub fn example(name: &str) -> PathBuf {
    static BUILT: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(path) = built.get(name) {
        return path.clone();
    }
    let exe = std::env::current_exe().expect("test binary path");
    let path = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target dir")
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    let status = std::process::Command::new(env!("CARGO"))
        .args(["build", "-p", "mrtr", "--example", name])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("run cargo build");
    assert!(status.success(), "building the {name} example failed");
    built.insert(name.to_string(), path.clone());
    path
}

/// The `test_server` example (`tests/support/server.rs` on stdio).
pub fn test_server() -> PathBuf {
    example("test_server")
}
