//! Paths of the binaries the tests spawn.
#![allow(dead_code)]

use std::path::PathBuf;

/// The `test_server` example binary (`tests/support/server.rs` on stdio), built on demand.
pub fn test_server() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let path = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join("test_server");
    if !path.exists() {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "--example", "test_server"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build");
        assert!(status.success(), "building the test_server example failed");
    }
    path
}

/// An example binary, (re)built first: `cargo test --test X` builds no examples, and a
/// binary left from an older build would test old code.
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let path = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "--example", name])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build");
        assert!(status.success(), "building the {name} example failed");
    }
    path
}
