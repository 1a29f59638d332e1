//! A file organiser: asks the client for its roots, looks at the files directly under
//! each `file://` root (read-only), and proposes moving them into folders by kind. It
//! never moves anything: the approved moves come back as a plan.

use std::path::{Path, PathBuf};

use mrtr::machine::{Elicited, Roots, ToolError};

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

fn root_path(uri: &str) -> Option<PathBuf> {
    uri.strip_prefix("file://").map(PathBuf::from)
}

/// Proposed moves `(from, to)` for the files directly under the roots, at most 25.
pub fn propose_moves(roots: &Roots, only_extension: Option<&str>) -> Vec<(String, String)> {
    let mut moves = Vec::new();
    for root in roots.iter() {
        let Some(dir) = root_path(&root.uri) else {
            continue;
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
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
            let target: PathBuf = Path::new(&dir).join(folder).join(name);
            moves.push((file.display().to_string(), target.display().to_string()));
        }
    }
    moves.truncate(25);
    moves
}

/// Tidy the client's workspace: propose moving loose files into folders by kind.
#[mrtr::tool]
pub async fn organise_files(
    /// Only consider files with this extension, e.g. "pdf".
    extension: Option<String>,
) -> Result<String, ToolError> {
    let roots = roots!();
    if roots.is_empty() {
        return Ok("The client shared no roots, so there is nothing to organise.".to_string());
    }
    let moves = propose_moves(&roots, extension.as_deref());
    if moves.is_empty() {
        return Ok(format!(
            "{} root(s) looked at: everything is already tidy.",
            roots.len()
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
        return Ok("No moves approved; nothing changes.".to_string());
    }
    Ok(format!(
        "Plan ({} of {} moves approved, nothing moved yet):\n{}",
        approved.len(),
        moves.len(),
        approved.join("\n")
    ))
}
