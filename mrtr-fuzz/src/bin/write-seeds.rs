//! Writes every runtime target's seed corpus into `DIR/<target>/seed-NNN` (default
//! `fuzz/corpus`): `cargo run -p mrtr-fuzz --bin write-seeds [DIR]`.

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let root = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from("fuzz/corpus"), PathBuf::from);
    for target in mrtr_fuzz::TARGETS {
        let dir = root.join(target.name);
        std::fs::create_dir_all(&dir)?;
        let seeds = (target.seeds)();
        for (index, seed) in seeds.iter().enumerate() {
            std::fs::write(dir.join(format!("seed-{index:03}")), seed)?;
        }
        println!(
            "{}: {} seeds in {}",
            target.name,
            seeds.len(),
            dir.display()
        );
    }
    Ok(())
}
