//! Reviewed changes: `--allow FILE`.
//!
//! Updating a pin is a reviewed change, and so is accepting drift you cannot
//! pin yet (a scheduled diff against a server someone else deploys). An allow
//! entry names a tool and a change class and says why it is acceptable; a
//! change it matches is still reported (marked allowed) but does not fail
//! the build. Entries that match nothing are reported too, so stale reviews
//! get cleaned up instead of silently accepting the next change of that kind.
//!
//! ```toml
//! [[allow]]
//! tool = "lookup_order"
//! class = "description-edited"
//! reason = "search_orders hint reviewed in #412; trajectory suite re-run"
//! ```

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;

use witness_model::manifest::diff::{AllowEntry, Change};

use super::ManifestError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AllowFile {
    #[serde(default)]
    allow: Vec<AllowEntry>,
}

/// The parsed `--allow` file (empty when none was given).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowList {
    pub entries: Vec<AllowEntry>,
}

impl AllowList {
    /// Parses an allow file. Every problem is an invalid invocation.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ManifestError> {
        let bad = |reason: String| {
            ManifestError::Invalid(format!("--allow {}: {reason}", path.display()))
        };
        let file: AllowFile = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        for (i, entry) in file.allow.iter().enumerate() {
            if entry.tool.is_empty() {
                return Err(bad(format!("entry {} has an empty tool", i + 1)));
            }
            if entry.reason.trim().is_empty() {
                return Err(bad(format!(
                    "entry {} ({} {}) has no reason; say why the change is acceptable",
                    i + 1,
                    entry.tool,
                    entry.class.id()
                )));
            }
        }
        Ok(Self {
            entries: file.allow,
        })
    }

    pub fn load(path: &Path) -> Result<Self, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Marks the changes an entry accepts; returns the indexes of the entries
    /// that accepted at least one.
    pub fn apply(&self, changes: &mut [Change]) -> BTreeSet<usize> {
        let mut used = BTreeSet::new();
        for change in changes.iter_mut() {
            if let Some((i, entry)) = self
                .entries
                .iter()
                .enumerate()
                .find(|(_, e)| e.tool == change.tool && e.class == change.class)
            {
                change.allowed = true;
                change.allow_reason = Some(entry.reason.clone());
                used.insert(i);
            }
        }
        used
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::build;
    use serde_json::json;
    use witness_model::manifest::Pin;
    use witness_model::manifest::diff::Side;

    fn path() -> &'static Path {
        Path::new("allow.toml")
    }

    #[test]
    fn an_allowed_change_is_reported_but_does_not_fail() {
        let allow = AllowList::parse(
            r#"
[[allow]]
tool = "lookup_order"
class = "description-edited"
reason = "reviewed in #412"

[[allow]]
tool = "gone"
class = "tool-removed"
reason = "stale"
"#,
            path(),
        )
        .unwrap();
        let old = Pin::from_catalog(
            &[json!({"name": "lookup_order", "description": "Look up an order by ID"})],
            "default",
            None,
        );
        let new = Pin::from_catalog(
            &[
                json!({"name": "lookup_order", "description": "Look up an order by ID. Prefer search_orders when the ID is unknown."}),
            ],
            "default",
            None,
        );
        let doc = build(
            Side::of("a".into(), &old),
            Side::of("b".into(), &new),
            &old,
            &new,
            &allow,
            false,
        );
        assert_eq!(doc.changes.len(), 1);
        assert!(doc.changes[0].allowed);
        assert_eq!(
            doc.changes[0].allow_reason.as_deref(),
            Some("reviewed in #412")
        );
        assert_eq!(doc.summary.allowed, 1);
        assert_eq!(doc.summary.undeclared, 0);
        assert_eq!(doc.exit_code, 0);
        assert_eq!(doc.unused_allow.len(), 1);
        assert_eq!(doc.unused_allow[0].tool, "gone");
    }

    #[test]
    fn bad_allow_files_are_invalid_invocations() {
        for text in [
            "[[allow]]\ntool = \"x\"\nclass = \"no-such-class\"\nreason = \"r\"\n",
            "[[allow]]\ntool = \"x\"\nclass = \"tool-added\"\n",
            "[[allow]]\ntool = \"x\"\nclass = \"tool-added\"\nreason = \"  \"\n",
            "[[allow]]\ntool = \"x\"\nclass = \"tool-added\"\nreason = \"r\"\nextra = 1\n",
            "not toml [",
        ] {
            let error = AllowList::parse(text, path()).unwrap_err();
            assert!(error.is_invalid(), "{text}: {error}");
        }
        assert!(AllowList::parse("", path()).unwrap().entries.is_empty());
    }
}
