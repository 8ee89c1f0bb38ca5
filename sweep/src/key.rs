//! Keys: what a target's results are filed under.
//!
//! A key is `<name>-<16 hex digits>`, the digits from blake3 over the
//! canonical JSON of the target's whole definition. The definition names
//! files by their path relative to the sweep file and pins them by content
//! (plans, fixtures, locks), so the same sweep gives the same keys on every
//! machine, and an edited plan or fixture gives a new key — a new audit —
//! instead of a stale result that looks current.

use std::path::Path;

use witness_model::sweep::{Pinned, TargetDefinition};

/// What the definition's bytes are prefixed with before hashing: a new
/// meaning of the definition gets a new tag, so old keys cannot collide.
const DOMAIN: &[u8] = b"mcp-witness sweep target v1\n";

/// The target's key.
pub fn target_key(definition: &TargetDefinition) -> String {
    // Field order is declaration order and maps are sorted, so the bytes
    // depend on the definition alone.
    let canonical = serde_json::to_vec(definition).unwrap_or_default();
    let mut hasher = blake3::Hasher::new();
    hasher.update(DOMAIN);
    hasher.update(&canonical);
    let hex = hasher.finalize().to_hex();
    format!("{}-{}", definition.name, &hex[..16])
}

/// `blake3:` over a sweep's sorted keys: what its shards have in common.
pub fn sweep_digest<'a>(keys: impl IntoIterator<Item = &'a str>) -> String {
    let mut keys: Vec<&str> = keys.into_iter().collect();
    keys.sort_unstable();
    let mut hasher = blake3::Hasher::new();
    for key in keys {
        hasher.update(key.as_bytes());
        hasher.update(b"\n");
    }
    format!("blake3:{}", hasher.finalize().to_hex())
}

/// Which shard of `count` a key belongs to: a function of the key alone, so
/// a target keeps its shard however the rest of the sweep changes.
pub fn shard_of(key: &str, count: u32) -> u32 {
    let hash = blake3::hash(key.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash.as_bytes()[..8]);
    (u64::from_le_bytes(first) % u64::from(count.max(1))) as u32
}

/// A file, pinned by its bytes.
pub fn pin_file(dir: &Path, path: &str) -> Result<Pinned, String> {
    let bytes = std::fs::read(dir.join(path)).map_err(|e| format!("{path}: {e}"))?;
    Ok(Pinned {
        path: path.to_owned(),
        digest: format!("blake3:{}", blake3::hash(&bytes).to_hex()),
    })
}

/// `path` and the sibling files `names` (which include its own name),
/// pinned together: an npm lock and the package.json it belongs to.
pub fn pin_files(dir: &Path, path: &str, names: &[&str]) -> Result<Pinned, String> {
    let file = dir.join(path);
    let mut hasher = blake3::Hasher::new();
    for name in names {
        let bytes = std::fs::read(file.with_file_name(name))
            .map_err(|e| format!("{path}: its {name}: {e}"))?;
        entry(&mut hasher, b'f', name, &bytes);
    }
    Ok(Pinned {
        path: path.to_owned(),
        digest: format!("blake3:{}", hasher.finalize().to_hex()),
    })
}

/// A directory, pinned by every entry's relative path and kind, and each
/// file's bytes and each link's target, in path order.
pub fn pin_tree(dir: &Path, path: &str) -> Result<Pinned, String> {
    let root = dir.join(path);
    let mut entries = Vec::new();
    walk(&root, &root, &mut entries).map_err(|e| format!("{path}: {e}"))?;
    entries.sort_by(|a, b| a.1.cmp(&b.1));
    let mut hasher = blake3::Hasher::new();
    for (kind, relative, bytes) in &entries {
        entry(&mut hasher, *kind, relative, bytes);
    }
    Ok(Pinned {
        path: path.to_owned(),
        digest: format!("blake3:{}", hasher.finalize().to_hex()),
    })
}

type Entry = (u8, String, Vec<u8>);

fn walk(root: &Path, dir: &Path, out: &mut Vec<Entry>) -> std::io::Result<()> {
    for item in std::fs::read_dir(dir)? {
        let item = item?;
        let path = item.path();
        let relative = path
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let kind = item.file_type()?;
        if kind.is_symlink() {
            let target = std::fs::read_link(&path)?;
            out.push((
                b'l',
                relative,
                target.to_string_lossy().into_owned().into_bytes(),
            ));
        } else if kind.is_dir() {
            out.push((b'd', relative, Vec::new()));
            walk(root, &path, out)?;
        } else {
            out.push((b'f', relative, std::fs::read(&path)?));
        }
    }
    Ok(())
}

/// One entry, length-prefixed so no two different trees hash alike.
fn entry(hasher: &mut blake3::Hasher, kind: u8, name: &str, bytes: &[u8]) {
    hasher.update(&[kind]);
    hasher.update(&(name.len() as u64).to_le_bytes());
    hasher.update(name.as_bytes());
    hasher.update(&(bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{tempdir, write};

    #[test]
    fn a_tree_is_pinned_by_content_not_by_where_it_is() {
        let a = tempdir();
        let b = tempdir();
        for root in [a.path(), b.path()] {
            write(&root.join("t/docs/readme.md"), "# hello\n");
            write(&root.join("t/notes/todo.txt"), "milk\n");
        }
        let pa = pin_tree(a.path(), "t").unwrap_or_else(|e| panic!("{e}"));
        let pb = pin_tree(b.path(), "t").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pa, pb);
        write(&b.path().join("t/notes/todo.txt"), "milk!\n");
        assert_ne!(
            pin_tree(b.path(), "t").map(|p| p.digest),
            Ok(pa.digest.clone())
        );
        // A moved file is another tree, though its bytes are the same.
        std::fs::create_dir_all(b.path().join("u/docs")).unwrap_or_else(|e| panic!("{e}"));
        write(&b.path().join("u/docs/readme.md"), "milk\n");
        write(&b.path().join("u/notes/todo.txt"), "# hello\n");
        assert_ne!(pin_tree(b.path(), "u").map(|p| p.digest), Ok(pa.digest));
    }

    #[test]
    fn shards_split_keys_by_the_key_alone() {
        let keys: Vec<String> = (0..300).map(|i| format!("t{i}-{i:016x}")).collect();
        let mut sizes = [0usize; 3];
        for key in &keys {
            let shard = shard_of(key, 3);
            assert!(shard < 3);
            assert_eq!(shard_of(key, 3), shard, "stable");
            sizes[shard as usize] += 1;
        }
        // Roughly even: every shard gets a fair part of 300 keys.
        assert!(sizes.iter().all(|&n| n > 60), "{sizes:?}");
        assert_eq!(shard_of("anything", 1), 0);
    }

    #[test]
    fn the_digest_does_not_depend_on_key_order() {
        assert_eq!(sweep_digest(["b", "a"]), sweep_digest(["a", "b"]));
        assert_ne!(sweep_digest(["a"]), sweep_digest(["a", "b"]));
    }
}
