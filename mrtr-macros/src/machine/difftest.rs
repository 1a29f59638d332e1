//! Generator for the differential test (`tests/differential.rs`): random tool bodies over
//! the supported constructs, each written twice — as an `#[mrtr::tool]` and as a plain
//! function whose `ask!` reads a scripted oracle directly.
//!
//! `MRTR_BLESS=1 cargo test -p mrtr-macros differential` rewrites
//! `tests/differential/generated.rs`; `MRTR_DIFF_SEED` picks another seed.

const DEFAULT_SEED: u64 = 0x6d72_7472;
const TOOLS: usize = 40;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct Gen {
    rng: Rng,
    locals: usize,
}

/// `ask` renders one suspension: `ask!(text(msg))` or `oracle.ask(msg)`.
fn ask(plain: bool, msg: &str) -> String {
    if plain {
        format!("oracle.ask({msg})")
    } else {
        format!("ask!(text({msg}))")
    }
}

impl Gen {
    fn block(&mut self, depth: usize, out: &mut Vec<Piece>) {
        let count = if depth >= 3 {
            self.rng.below(2)
        } else {
            1 + self.rng.below(3)
        };
        for _ in 0..count {
            self.statement(depth, out);
        }
    }

    fn statement(&mut self, depth: usize, out: &mut Vec<Piece>) {
        let choice = if depth >= 3 {
            self.rng.below(3)
        } else {
            self.rng.below(10)
        };
        let k = self.locals;
        self.locals += 1;
        let msg = format!("format!(\"q{k} {{}}\", acc.len())");
        match choice {
            0 => {
                out.push(Piece::Ask(
                    format!("let v{k} = "),
                    msg,
                    ".ok().unwrap_or_default().len() as u32;".into(),
                ));
                out.push(Piece::Text(format!("acc.push(v{k});")));
            }
            1 => {
                out.push(Piece::Ask(
                    format!("let v{k} = "),
                    msg,
                    ".ok()?.len() as u32;".into(),
                ));
                out.push(Piece::Text(format!("acc.push(v{k} + 10);")));
            }
            2 => out.push(Piece::Text(format!(
                "acc.push(acc.len() as u32 * 3 + {k});"
            ))),
            3 => {
                out.push(Piece::Text("if acc.len() % 2 == 0 {".into()));
                self.block(depth + 1, out);
                out.push(Piece::Text("} else {".into()));
                self.block(depth + 1, out);
                out.push(Piece::Text("}".into()));
            }
            4 => {
                out.push(Piece::Text(format!(
                    "for i{k} in 0..(acc.len() as u32 % 3) {{ acc.push(i{k});"
                )));
                self.block(depth + 1, out);
                out.push(Piece::Text("}".into()));
            }
            5 => {
                out.push(Piece::Text(format!(
                    "let mut c{k} = 0u32; loop {{ c{k} += 1; if c{k} > 2 {{ break; }}"
                )));
                self.block(depth + 1, out);
                out.push(Piece::Text(format!("}} acc.push(c{k});")));
            }
            6 => {
                out.push(Piece::Ask(
                    "match ".into(),
                    msg,
                    ".ok().map(|s| s.len()).unwrap_or(9) { 0 => {".into(),
                ));
                self.block(depth + 1, out);
                out.push(Piece::Text("} 1 => {".into()));
                self.block(depth + 1, out);
                out.push(Piece::Text(format!("}} _ => {{ acc.push(99 + {k}); }} }}")));
            }
            7 => out.push(Piece::Text(
                "if acc.iter().sum::<u32>() > 60 { return Some(format!(\"early {:?}\", acc)); }"
                    .into(),
            )),
            8 => {
                out.push(Piece::Text(format!(
                    "let target{k} = acc.len() + 2; while acc.len() < target{k} {{ acc.push(1);"
                )));
                self.block(depth + 1, out);
                out.push(Piece::Text("}".into()));
            }
            _ => {
                out.push(Piece::Ask(
                    format!("let w{k} = "),
                    msg,
                    ".ok().unwrap_or_default();".into(),
                ));
                out.push(Piece::Text(format!(
                    "if w{k}.len() > 1 {{ acc.push(w{k}.len() as u32 * 100); }} else {{ let w{k} = 5u32; acc.push(w{k}); }}"
                )));
            }
        }
    }
}

enum Piece {
    Text(String),
    /// before, message expression, after
    Ask(String, String, String),
}

fn render(pieces: &[Piece], plain: bool) -> String {
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Ask(before, msg, after) => {
                out.push_str(before);
                out.push_str(&ask(plain, msg));
                out.push_str(after);
            }
        }
        out.push('\n');
    }
    out
}

/// The generated test source for `seed`.
pub fn generate(seed: u64) -> String {
    let mut generator = Gen {
        rng: Rng(seed | 1),
        locals: 0,
    };
    let mut out = String::from(
        "// Generated by mrtr-macros/src/machine/difftest.rs; do not edit.\n\
         // Regenerate: MRTR_BLESS=1 cargo test -p mrtr-macros differential\n\n",
    );
    for index in 0..TOOLS {
        let mut pieces = Vec::new();
        generator.block(0, &mut pieces);
        let body = |plain| render(&pieces, plain);
        out.push_str(&format!(
            "#[mrtr::tool]\nasync fn tool_{index}(seed: u32) -> Option<String> {{\nlet mut acc: Vec<u32> = vec![seed];\n{}Some(format!(\"{{:?}}\", acc))\n}}\n\n",
            body(false)
        ));
        out.push_str(&format!(
            "#[allow(unused_mut, unused_variables, clippy::all)]\nfn plain_{index}(seed: u32, oracle: &mut Oracle) -> Option<String> {{\nlet mut acc: Vec<u32> = vec![seed];\n{}Some(format!(\"{{:?}}\", acc))\n}}\n\n",
            body(true)
        ));
    }
    out.push_str("differential_cases! {\n");
    for index in 0..TOOLS {
        out.push_str(&format!("    case_{index}: tool_{index}, plain_{index};\n"));
    }
    out.push_str("}\n");
    out
}

#[test]
fn differential_source_is_current() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/differential/generated.rs");
    let seed = std::env::var("MRTR_DIFF_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    let source = generate(seed);
    if blessing() || seed != DEFAULT_SEED {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, source).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == source,
        "tests/differential/generated.rs is stale; run with MRTR_BLESS=1"
    );
}

/// Whether tracked snapshots may be rewritten: only with `MRTR_BLESS=1` exactly (not `0`,
/// not empty), so a stray variable cannot turn a check into a rewrite.
pub(crate) fn blessing() -> bool {
    std::env::var("MRTR_BLESS").is_ok_and(|value| value == "1")
}
