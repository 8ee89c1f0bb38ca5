//! Manifest pins at work: reading and writing pin files, fetching live
//! catalogs ([`source`]), classifying drift ([`diff`]), applying reviewed
//! changes ([`allow`]) and naming the commands that measure a change
//! ([`measure`]). The documents themselves, and the normalization that
//! makes a pin canonical, live in `witness_model::manifest`.

pub mod allow;
pub mod diff;
pub mod measure;
pub mod source;

use std::path::{Path, PathBuf};

use witness_model::manifest::{Pin, PinError};

/// Why a manifest command could not do its job. [`ManifestError::is_invalid`]
/// separates a bad invocation (exit 2, nothing launched) from a fetch that
/// could not conclude (exit 3).
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// A bad argument or input file, found before anything was launched.
    #[error("{0}")]
    Invalid(String),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A pin file that does not parse or whose fingerprint does not match.
    #[error("{path}: {error}")]
    BadPin { path: PathBuf, error: PinError },
    /// The server could not be started or spoken to.
    #[error("could not fetch the catalog: {0}")]
    Fetch(String),
    /// The catalog came back incomplete: half a manifest is never a baseline.
    #[error("the catalog is incomplete ({0}); refusing to use half a manifest")]
    Incomplete(String),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ManifestError {
    /// Whether this is an invalid invocation (exit 2) rather than a failure
    /// to fetch or write (exit 3).
    pub fn is_invalid(&self) -> bool {
        matches!(
            self,
            ManifestError::Invalid(_) | ManifestError::Read { .. } | ManifestError::BadPin { .. }
        )
    }
}

impl ManifestError {
    fn pin(path: &Path, error: PinError) -> Self {
        ManifestError::BadPin {
            path: path.to_path_buf(),
            error,
        }
    }
}

/// Reads and verifies a pin file.
pub fn load_pin(path: &Path) -> Result<Pin, ManifestError> {
    let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Pin::parse(&text).map_err(|error| ManifestError::pin(path, error))
}

/// Writes a pin through a temporary file in the same directory, so a
/// failed write never leaves half a pin where the old one was.
pub fn write_pin(pin: &Pin, path: &Path) -> Result<(), ManifestError> {
    let write_err = |source| ManifestError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(write_err)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".mcp-witness-pin-")
        .tempfile_in(&dir)
        .map_err(write_err)?;
    std::io::Write::write_all(&mut tmp, pin.to_file_text().as_bytes()).map_err(write_err)?;
    tmp.persist(path).map_err(|e| write_err(e.error))?;
    Ok(())
}
