//! The snapshot model shared by all observers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What an observer knows about one object at one moment.
///
/// Only digests are kept, never content: a snapshot of a table of API keys must
/// be safe to put in a report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectState {
    /// blake3 (hex) of the object's canonical encoding.
    pub digest: String,
    /// Length in bytes of that canonical encoding.
    pub size: u64,
    /// Per-field digests, when the observer can split an object into fields
    /// (a row's non-NULL columns, an entity's observations). They let [`crate::diff`]
    /// tell an *additive* update (fields only added) from an *overwrite* (a field
    /// that existed changed or vanished). Empty when the object has no fields.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
    /// For content that grew since the observer last saw it: the digest of
    /// its first bytes, as many as there were then. When that equals the
    /// earlier digest, the new content begins with the old: an append
    /// (see [`crate::delta::appended`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<Head>,
}

/// The digest of an object's first `len` bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    pub len: u64,
    pub digest: String,
}

impl ObjectState {
    /// A state with no field breakdown (a file, a schema entry).
    pub fn whole(bytes: &[u8]) -> Self {
        Self {
            digest: crate::digest_hex(bytes),
            size: bytes.len() as u64,
            fields: BTreeMap::new(),
            head: None,
        }
    }
}

/// Every object of one store at one moment, ordered by id.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub objects: BTreeMap<String, ObjectState>,
    /// Things the observer could read around but wants a reader to know
    /// (a malformed JSONL line, an unreadable file). Never fatal.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Snapshot {
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }
}
