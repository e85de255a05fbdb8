//! Writing a hierarchy's files: each replaced atomically, keys created private.

use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Secrecy {
    Public,
    /// Created with mode 0600 (never chmod-ed later, so never briefly readable).
    Private,
}

/// Replaces `out/name` atomically: writes a fresh temporary file (created with the final
/// mode), then renames it over the old one, so readers never see a half-written file and a
/// replaced key file never inherits the old file's permissions.
pub(super) fn write_file(out: &Path, name: &str, bytes: &[u8], secrecy: Secrecy) -> Result<()> {
    let path = out.join(name);
    let temp = out.join(format!(".{name}.tmp"));
    let failed = |what: &str, path: &PathBuf| {
        format!("--out {}: cannot {what} {}", out.display(), path.display())
    };
    remove_stale(out, &format!(".{name}.tmp"))?;
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    if secrecy == Secrecy::Private {
        options.mode(0o600);
    }
    let mut file = options
        .open(&temp)
        .with_context(|| failed("create", &temp))?;
    file.write_all(bytes)
        .with_context(|| failed("write", &temp))?;
    drop(file);
    fs::rename(&temp, &path).with_context(|| failed("replace", &path))
}

/// Removes a directory a previous run wrote (MTCs of a hierarchy now issued without them).
pub(super) fn remove_stale_dir(path: &Path) -> Result<()> {
    match fs::remove_dir_all(path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            Err(err).with_context(|| format!("cannot remove {}", path.display()))
        }
        _ => Ok(()),
    }
}

pub(super) fn remove_stale(out: &Path, name: &str) -> Result<()> {
    let path = out.join(name);
    match fs::remove_file(&path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(err)
            .with_context(|| format!("--out {}: cannot remove {}", out.display(), path.display())),
        _ => Ok(()),
    }
}
