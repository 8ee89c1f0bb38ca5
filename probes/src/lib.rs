//! Probes: classify an observed object by *use*, not by appearance.
//!
//! An observer can say that a row appeared in `api_keys`; only a probe can say
//! whether that row is a working credential. A probe exercises the object
//! against the server's real authorization rule, out of band, and answers
//! [`ProbeStatus::Effective`], [`ProbeStatus::Ineffective`] or
//! [`ProbeStatus::Unknown`] with a one-line basis a reader can check.
//!
//! Secrets never leave a probe: a result names a credential only by digest.

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use witness_model::vocab::ProbeStatus;

/// The outcome of one exercise, with the evidence line behind it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeResult {
    pub status: ProbeStatus,
    /// Which column was exercised and which rule accepted or rejected it.
    pub basis: String,
    /// blake3 (hex, first 16 characters) of the secret that was exercised, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential_digest: Option<String>,
    /// Whose authority over the object was exercised, when the object can
    /// carry several holders' (a table's grants: `alice`); `None` when the
    /// object is one credential, or was exercised for every holder at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

impl ProbeResult {
    pub fn unknown(basis: impl Into<String>) -> Self {
        Self {
            status: ProbeStatus::Unknown,
            basis: basis.into(),
            credential_digest: None,
            subject: None,
        }
    }
}

/// An object an observer reported, as a probe is asked about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObservedObject<'a> {
    /// The store's name in the audit (`db` in `--store db=sqlite:PATH`).
    pub store: &'a str,
    /// The observer's object id, e.g. `api_keys/key_0001`.
    pub id: &'a str,
}

/// Read access to a store, for a probe that must look the object up.
pub trait StoreView {
    /// The store kind, as the observer names it (`"sqlite"`, `"fs"`, `"jsonl"`).
    fn kind(&self) -> &str;
    /// Where the store lives (inside the jail during an audit).
    fn path(&self) -> &Path;
}

/// A plain [`StoreView`] over a path.
#[derive(Clone, Debug)]
pub struct StorePath<'a> {
    pub kind: &'a str,
    pub path: &'a Path,
}

impl StoreView for StorePath<'_> {
    fn kind(&self) -> &str {
        self.kind
    }
    fn path(&self) -> &Path {
        self.path
    }
}

/// Exercises objects to tell whether they carry authority.
pub trait Probe {
    /// Short name for reports (`"null"`, `"testbed-credential"`).
    fn name(&self) -> &'static str;
    /// Whether this probe has anything to say about objects of `id`'s kind;
    /// objects it does not cover are not probed at all.
    fn covers(&self, object: &ObservedObject<'_>) -> bool;
    /// Whether it may cover any object at all: when not, nobody needs to
    /// list a store's objects for it (a million rows, for nothing).
    fn covers_any(&self) -> bool {
        true
    }
    /// Tries the object against the server's authorization rule.
    fn exercise(&self, object: &ObservedObject<'_>, store: &dyn StoreView) -> ProbeResult;
    /// What call `call` carried and returned (the text of its arguments and
    /// of its answer), told before its effects are exercised: a credential
    /// a call handed over (the password of a `CREATE ROLE`) can only be
    /// tried by a probe that heard it. Kept in memory only.
    fn hear(&self, _call: u32, _texts: &[&str]) {}
    /// The secrets heard that are credentials, for the report to replace by
    /// their digests wherever a transcript or an argument carries them.
    fn secrets(&self) -> Vec<String> {
        Vec::new()
    }
}

/// The probe for servers with no authorization rule we can replay: it covers
/// nothing and knows nothing, so checks that need a probe are skipped.
#[derive(Clone, Copy, Debug, Default)]
pub struct NullProbe;

impl Probe for NullProbe {
    fn name(&self) -> &'static str {
        "null"
    }
    fn covers(&self, _object: &ObservedObject<'_>) -> bool {
        false
    }
    fn covers_any(&self) -> bool {
        false
    }
    fn exercise(&self, _object: &ObservedObject<'_>, _store: &dyn StoreView) -> ProbeResult {
        ProbeResult::unknown("no probe for this server: authority cannot be established")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_probe_covers_nothing_and_answers_unknown() {
        let object = ObservedObject {
            store: "db",
            id: "api_keys/key_0001",
        };
        let store = StorePath {
            kind: "sqlite",
            path: Path::new("/nonexistent"),
        };
        assert!(!NullProbe.covers(&object));
        assert!(!NullProbe.covers_any());
        assert_eq!(
            NullProbe.exercise(&object, &store).status,
            ProbeStatus::Unknown
        );
    }
}
