//! Per-object differences between two snapshots.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{ObjectState, Snapshot};
pub use witness_model::vocab::Op;

/// One observed change to one object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub object: String,
    pub op: Op,
    /// For updates: `true` when content that existed before was changed or
    /// removed (a destructive overwrite), `false` when fields were only added.
    /// An object without a field breakdown is always an overwrite when it changes.
    /// For deletes: `Some(false)` only when the observer knows the content
    /// is still kept elsewhere in the store (a git worktree file whose
    /// content the repository's object database holds); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overwrite: Option<bool>,
    /// Digest before the change (absent for a create).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// Digest after the change (absent for a delete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

impl Change {
    /// Deletes and overwrites are what `destructiveHint` is about; a delete
    /// whose content the store still keeps is neither.
    pub fn is_destructive(&self) -> bool {
        match self.op {
            Op::Delete => self.overwrite != Some(false),
            Op::Update => self.overwrite.unwrap_or(true),
            Op::Create => false,
        }
    }
}

/// Every change between two snapshots, ordered by object id.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delta {
    pub changes: Vec<Change>,
}

impl Delta {
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    pub fn count(&self, op: Op) -> usize {
        self.changes.iter().filter(|c| c.op == op).count()
    }
}

/// Compares two snapshots object by object. Content (the digest) decides
/// whether an object changed; nothing else is consulted.
pub fn diff(before: &Snapshot, after: &Snapshot) -> Delta {
    diff_objects(&before.objects, &after.objects)
}

/// [`diff`] of two sets of objects by id, without a snapshot around them
/// (the objects inside a file are compared where they are kept).
pub(crate) fn diff_objects(
    before: &BTreeMap<String, ObjectState>,
    after: &BTreeMap<String, ObjectState>,
) -> Delta {
    let mut changes = Vec::new();
    let mut old = before.iter().peekable();
    let mut new = after.iter().peekable();
    loop {
        match (old.peek(), new.peek()) {
            (None, None) => break,
            (Some((id, state)), None) => {
                changes.push(deleted(id, &state.digest));
                old.next();
            }
            (None, Some((id, state))) => {
                changes.push(created(id, &state.digest));
                new.next();
            }
            (Some((old_id, old_state)), Some((new_id, new_state))) => match old_id.cmp(new_id) {
                std::cmp::Ordering::Less => {
                    changes.push(deleted(old_id, &old_state.digest));
                    old.next();
                }
                std::cmp::Ordering::Greater => {
                    changes.push(created(new_id, &new_state.digest));
                    new.next();
                }
                std::cmp::Ordering::Equal => {
                    if old_state.digest != new_state.digest {
                        let overwrite = !appended(old_state, new_state)
                            && (old_state.fields.is_empty()
                                || old_state
                                    .fields
                                    .iter()
                                    .any(|(k, v)| new_state.fields.get(k) != Some(v)));
                        changes.push(Change {
                            object: (*old_id).clone(),
                            op: Op::Update,
                            overwrite: Some(overwrite),
                            before: Some(old_state.digest.clone()),
                            after: Some(new_state.digest.clone()),
                        });
                    }
                    old.next();
                    new.next();
                }
            },
        }
    }
    Delta { changes }
}

/// Whether `after` is `before` with bytes appended: it is longer, and its
/// first `before.size` bytes digest to what `before` digested to. An append
/// only adds (a log line, a journal entry), so it is an additive update,
/// never an overwrite. An observer that cannot tell (no [`crate::Head`])
/// never claims one.
pub fn appended(before: &ObjectState, after: &ObjectState) -> bool {
    after.size > before.size
        && after
            .head
            .as_ref()
            .is_some_and(|h| h.len == before.size && h.digest == before.digest)
}

fn created(id: &str, digest: &str) -> Change {
    Change {
        object: id.to_owned(),
        op: Op::Create,
        overwrite: None,
        before: None,
        after: Some(digest.to_owned()),
    }
}

fn deleted(id: &str, digest: &str) -> Change {
    Change {
        object: id.to_owned(),
        op: Op::Delete,
        overwrite: None,
        before: Some(digest.to_owned()),
        after: None,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::ObjectState;

    fn state(digest: &str, fields: &[(&str, &str)]) -> ObjectState {
        ObjectState {
            digest: digest.into(),
            size: 1,
            fields: fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
            head: None,
        }
    }

    fn snap(objects: &[(&str, ObjectState)]) -> Snapshot {
        Snapshot {
            objects: objects
                .iter()
                .map(|(id, s)| (id.to_string(), s.clone()))
                .collect(),
            warnings: vec![],
        }
    }

    #[test]
    fn create_update_delete_are_told_apart_in_id_order() {
        let before = snap(&[("a/1", state("x", &[])), ("b/1", state("y", &[]))]);
        let after = snap(&[("b/1", state("z", &[])), ("c/1", state("w", &[]))]);
        let ops: Vec<_> = diff(&before, &after)
            .changes
            .into_iter()
            .map(|c| (c.object, c.op))
            .collect();
        assert_eq!(
            ops,
            vec![
                ("a/1".to_string(), Op::Delete),
                ("b/1".to_string(), Op::Update),
                ("c/1".to_string(), Op::Create)
            ]
        );
    }

    #[test]
    fn same_digest_is_no_change() {
        let s = snap(&[("a/1", state("x", &[("f", "1")]))]);
        assert!(diff(&s, &s.clone()).is_empty());
    }

    /// A whole object of `size` bytes, with the digest of its first `head`
    /// bytes when it has one.
    fn grown(digest: &str, size: u64, head: Option<(u64, &str)>) -> ObjectState {
        ObjectState {
            digest: digest.into(),
            size,
            fields: BTreeMap::new(),
            head: head.map(|(len, digest)| crate::Head {
                len,
                digest: digest.into(),
            }),
        }
    }

    #[test]
    fn an_append_is_an_additive_update_and_anything_else_an_overwrite() {
        let before = snap(&[("file/log", grown("old", 10, None))]);
        let appended = snap(&[("file/log", grown("new", 15, Some((10, "old"))))]);
        let d = diff(&before, &appended);
        assert_eq!(d.changes[0].op, Op::Update);
        assert_eq!(d.changes[0].overwrite, Some(false), "{d:?}");
        // The beginning changed: an overwrite, however long it grew.
        let rewritten = snap(&[("file/log", grown("new", 15, Some((10, "other"))))]);
        assert_eq!(diff(&before, &rewritten).changes[0].overwrite, Some(true));
        // A head taken against some other earlier size proves nothing.
        let stale = snap(&[("file/log", grown("new", 15, Some((8, "old"))))]);
        assert_eq!(diff(&before, &stale).changes[0].overwrite, Some(true));
        // No head: no claim.
        let unknown = snap(&[("file/log", grown("new", 15, None))]);
        assert_eq!(diff(&before, &unknown).changes[0].overwrite, Some(true));
    }

    #[test]
    fn added_field_is_additive_changed_field_is_overwrite() {
        let before = snap(&[("n/1", state("x", &[("body", "1")]))]);
        let grown = snap(&[("n/1", state("y", &[("body", "1"), ("tag", "2")]))]);
        let changed = snap(&[("n/1", state("z", &[("body", "3")]))]);
        let d = diff(&before, &grown);
        assert_eq!(d.changes[0].overwrite, Some(false));
        assert!(!d.changes[0].is_destructive());
        let d = diff(&before, &changed);
        assert_eq!(d.changes[0].overwrite, Some(true));
        assert!(d.changes[0].is_destructive());
    }
}
