//! A file organiser: asks the client for its roots, looks at the files directly under
//! each `file://` root (read-only), and proposes moving them into folders by kind. It
//! never moves anything: the approved moves come back as a plan.
//!
//! The roots are the *client's* word, but the files are the *server's*: it only looks inside
//! the directories the operator allowed ([`AllowedRoots`]; `showcase --root-allow DIR`, by
//! default a demo directory with a few sample files). A root outside them, through `..` or a
//! symbolic link leading out, or not a `file://` URI is skipped, and the reply says so.

use std::path::{Component, Path, PathBuf};

use mrtr::State;
use mrtr::machine::{Elicited, Roots, ToolError};
use std::sync::Arc;

/// How many of the client's roots are looked at in one call; the rest are skipped.
pub const MAX_ROOTS: usize = 20;

/// The sample files of the demo directory.
pub const DEMO_FILES: [&str; 4] = ["invoice.pdf", "holiday.jpg", "notes.md", "backup.tar"];

/// One directory the operator allowed: as given (made absolute) and canonical.
#[derive(Debug, Clone)]
struct Allowed {
    given: PathBuf,
    canonical: PathBuf,
}

/// The directories `organise_files` may look into (application state, set by the operator).
#[derive(Debug, Clone)]
pub struct AllowedRoots {
    dirs: Vec<Allowed>,
}

impl AllowedRoots {
    /// Allows each of `dirs` (and what is under it); each must be an existing directory.
    pub fn new(dirs: impl IntoIterator<Item = PathBuf>) -> std::io::Result<Self> {
        let mut allowed = Vec::new();
        for dir in dirs {
            let given = normalized(&std::path::absolute(&dir)?);
            let canonical = std::fs::canonicalize(&dir)?;
            if !canonical.is_dir() {
                return Err(std::io::Error::other(format!(
                    "{} is not a directory",
                    dir.display()
                )));
            }
            allowed.push(Allowed { given, canonical });
        }
        Ok(AllowedRoots { dirs: allowed })
    }

    /// The default: `mrtr-showcase-demo` under the system temp directory, created with a few
    /// sample files. Refused if that path is a symbolic link or (on Unix) someone else's.
    pub fn demo() -> std::io::Result<Self> {
        let dir = std::env::temp_dir().join("mrtr-showcase-demo");
        match std::fs::create_dir(&dir) {
            Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists => return Err(error),
            _ => {}
        }
        let kind = std::fs::symlink_metadata(&dir)?;
        if !kind.is_dir() {
            return Err(std::io::Error::other(format!(
                "{} is not a plain directory; remove it or pass --root-allow DIR",
                dir.display()
            )));
        }
        for name in DEMO_FILES {
            // `create_new` never follows a link planted in the directory.
            let created = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(dir.join(name));
            match created {
                Ok(mut file) => std::io::Write::write_all(&mut file, b"demo")?,
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(error) => return Err(error),
            }
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            let ours = std::fs::symlink_metadata(dir.join(DEMO_FILES[0]))?;
            if ours.uid() != kind.uid() || !ours.is_file() {
                return Err(std::io::Error::other(format!(
                    "{} belongs to another user; remove it or pass --root-allow DIR",
                    dir.display()
                )));
            }
        }
        Self::new([dir])
    }

    /// The allowed directories, canonical.
    pub fn dirs(&self) -> impl Iterator<Item = &Path> {
        self.dirs.iter().map(|allowed| allowed.canonical.as_path())
    }

    /// The directory a root URI names, canonical, when it is inside an allowed directory;
    /// otherwise why it is skipped. Nothing outside the allowed directories is touched: the
    /// path is checked by its text first, and only then resolved on disk.
    pub fn check(&self, uri: &str) -> Result<PathBuf, &'static str> {
        let path = file_path(uri).ok_or("not a file:// URI with an absolute path")?;
        if path.components().any(|part| part == Component::ParentDir) {
            return Err("contains `..`");
        }
        let path = normalized(&path);
        let inside = |dir: &Path| path.starts_with(dir);
        if !self
            .dirs
            .iter()
            .any(|allowed| inside(&allowed.given) || inside(&allowed.canonical))
        {
            return Err("outside the directories this server may organise");
        }
        let Ok(real) = std::fs::canonicalize(&path) else {
            return Err("does not exist");
        };
        if !self
            .dirs
            .iter()
            .any(|allowed| real.starts_with(&allowed.canonical))
        {
            return Err("leads outside the directories this server may organise (a symbolic link)");
        }
        if !real.is_dir() {
            return Err("not a directory");
        }
        Ok(real)
    }

    /// The directories to look at among `roots` (at most [`MAX_ROOTS`], each once), and a
    /// note for the user on the roots skipped (empty when none was).
    pub fn sort_roots(&self, roots: &Roots) -> (Vec<PathBuf>, String) {
        let mut dirs: Vec<PathBuf> = Vec::new();
        let mut skipped = Vec::new();
        let mut count = 0;
        for (index, root) in roots.iter().enumerate() {
            if index == MAX_ROOTS {
                count += roots.len() - MAX_ROOTS;
                skipped.push(format!(
                    "- {} more root(s): only {MAX_ROOTS} are looked at",
                    roots.len() - MAX_ROOTS
                ));
                break;
            }
            match self.check(&root.uri) {
                Ok(dir) if !dirs.contains(&dir) => dirs.push(dir),
                Ok(_) => {}
                Err(why) => {
                    count += 1;
                    skipped.push(format!("- {}: {why}", shortened(&root.uri)));
                }
            }
        }
        if skipped.is_empty() {
            return (dirs, String::new());
        }
        let allowed: Vec<String> = self.dirs().map(|dir| dir.display().to_string()).collect();
        let note = format!(
            "Skipped {} root(s) (this server only organises inside {}):\n{}",
            count,
            allowed.join(", "),
            skipped.join("\n")
        );
        (dirs, note)
    }
}

/// `path` without `.` components (`..` is refused before this is used).
fn normalized(path: &Path) -> PathBuf {
    path.components()
        .filter(|part| *part != Component::CurDir)
        .collect()
}

/// The local path of a `file://` URI (`file:///p` or `file://localhost/p`), percent-decoded.
fn file_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let mut bytes = Vec::with_capacity(rest.len());
    let mut raw = rest.bytes();
    while let Some(byte) = raw.next() {
        if byte == b'%' {
            let hex = [raw.next()?, raw.next()?];
            bytes.push(u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?);
        } else {
            bytes.push(byte);
        }
    }
    let path = String::from_utf8(bytes).ok()?;
    (!path.contains('\0')).then(|| PathBuf::from(path))
}

/// A client's URI as quoted back to it: at most 120 characters.
fn shortened(uri: &str) -> String {
    match uri.char_indices().nth(120) {
        Some((end, _)) => format!("{}…", &uri[..end]),
        None => uri.to_string(),
    }
}

/// The folder a file of this extension belongs in, if any.
pub fn folder_for(extension: &str) -> Option<&'static str> {
    Some(match extension.to_ascii_lowercase().as_str() {
        "pdf" | "doc" | "docx" | "odt" | "txt" | "md" => "documents",
        "png" | "jpg" | "jpeg" | "gif" | "svg" | "webp" => "images",
        "zip" | "tar" | "gz" | "tgz" | "xz" | "7z" => "archives",
        "mp3" | "wav" | "flac" | "ogg" => "audio",
        "csv" | "xlsx" | "ods" | "json" => "data",
        _ => return None,
    })
}

/// Proposed moves `(from, to)` for the regular files directly under `dirs` (already
/// checked by [`AllowedRoots::check`]; links are not followed), at most 25.
pub fn propose_moves(dirs: &[PathBuf], only_extension: Option<&str>) -> Vec<(String, String)> {
    let mut moves = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
            .map(|entry| entry.path())
            .collect();
        files.sort();
        for file in files {
            let Some(extension) = file.extension().and_then(|e| e.to_str()) else {
                continue;
            };
            if only_extension.is_some_and(|only| !only.eq_ignore_ascii_case(extension)) {
                continue;
            }
            let (Some(folder), Some(name)) = (folder_for(extension), file.file_name()) else {
                continue;
            };
            let target: PathBuf = dir.join(folder).join(name);
            moves.push((file.display().to_string(), target.display().to_string()));
        }
    }
    moves.truncate(25);
    moves
}

/// Appends the note on skipped roots, if any, to a reply.
fn with_note(reply: String, note: &str) -> String {
    if note.is_empty() {
        reply
    } else {
        format!("{reply}\n\n{note}")
    }
}

/// Tidy the client's workspace: propose moving loose files into folders by kind (only
/// inside the directories this server allows).
#[mrtr::tool]
pub async fn organise_files(
    State(allowed): State<Arc<AllowedRoots>>,
    /// Only consider files with this extension, e.g. "pdf".
    extension: Option<String>,
) -> Result<String, ToolError> {
    let roots = roots!();
    if roots.is_empty() {
        return Ok("The client shared no roots, so there is nothing to organise.".to_string());
    }
    let (dirs, note) = allowed.sort_roots(&roots);
    if dirs.is_empty() {
        return Ok(with_note(
            "None of the client's roots is one this server may organise; nothing was looked at."
                .to_string(),
            &note,
        ));
    }
    let moves = propose_moves(&dirs, extension.as_deref());
    if moves.is_empty() {
        return Ok(with_note(
            format!(
                "{} root(s) looked at: everything is already tidy.",
                dirs.len()
            ),
            &note,
        ));
    }
    let labels: Vec<String> = moves
        .iter()
        .map(|(from, to)| format!("{from} → {to}"))
        .collect();
    let approved = match ask!(
        key = "moves",
        multi_choice(
            format!(
                "{} file(s) could be tidied. Which moves do you approve?",
                moves.len()
            ),
            labels
        )
    ) {
        Elicited::Accept(approved) => approved,
        Elicited::Decline | Elicited::Cancel => Vec::new(),
    };
    if approved.is_empty() {
        return Ok(with_note(
            "No moves approved; nothing changes.".to_string(),
            &note,
        ));
    }
    Ok(with_note(
        format!(
            "Plan ({} of {} moves approved, nothing moved yet):\n{}",
            approved.len(),
            moves.len(),
            approved.join("\n")
        ),
        &note,
    ))
}
