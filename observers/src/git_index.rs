//! A git index seen through its stat cache.
//!
//! Git's index (`.git/index`) holds, for every tracked path, what is staged
//! (mode, object id, stage and flags) and beside it a cache of the file's
//! last-seen `stat` data (times, device, inode, owner, size). Git refreshes
//! that cache whenever it finds it stale and rewrites the whole file. A copy
//! of a repository — the jail's — gives every file a new inode and ctime,
//! so the first `git status` or `git diff` in the copy rewrites the index
//! although nothing staged changed: an artifact of the copy, not an effect
//! of the tool.
//!
//! [`content_digest`] digests what the index *says* — its version and each
//! entry's mode, object id, flags and path, in order — and leaves out the
//! stat cache and the extensions (caches of trees and of untracked files,
//! split-index and offset tables, all derivable) and the trailing checksum.
//! Staging, unstaging or resolving anything changes the digest; a refresh
//! alone does not.
//!
//! Versions 2 and 3 are read; version 4 (path prefix compression, opt-in)
//! and anything that does not parse give `None`, and the caller digests the
//! bytes as they are, so nothing is ever hidden by a misread.

/// The largest index read whole into memory to be seen through; a larger
/// one is digested as bytes.
pub const MAX_INDEX_BYTES: usize = 64 * 1024 * 1024;

/// Stat data at the start of every entry: ctime, mtime (seconds and
/// nanoseconds each), dev, ino, mode, uid, gid, size — ten 32-bit words,
/// of which only `mode` (the seventh) is part of what the index says.
const STAT_WORDS: usize = 10;
const MODE_WORD: usize = 6;

/// Whether a file at this relative path is a git index: named `index`,
/// directly inside a `.git` directory (or one of its worktrees' directories).
pub fn is_index_path(relative: &str) -> bool {
    let mut components = relative.rsplit('/');
    components.next() == Some("index") && components.any(|c| c == ".git")
}

/// The digest of what the index says, or `None` when these bytes are not
/// an index of a version this reads.
pub fn content_digest(bytes: &[u8]) -> Option<String> {
    if bytes.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(bytes, 4)?;
    if version != 2 && version != 3 {
        return None;
    }
    let count = be32(bytes, 8)?;
    // SHA-1 repositories first; SHA-256 ones have 32-byte object ids.
    [20usize, 32]
        .into_iter()
        .find_map(|id_len| entries_digest(bytes, version, count, id_len))
}

/// Walks `count` entries with `id_len`-byte object ids; `None` when they do
/// not fit these bytes exactly as an index lays them out.
fn entries_digest(bytes: &[u8], version: u32, count: u32, id_len: usize) -> Option<String> {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"git-index-content\0");
    hasher.update(&version.to_be_bytes());
    hasher.update(&count.to_be_bytes());
    let mut at = 12usize;
    for _ in 0..count {
        let start = at;
        let mode = be32(bytes, at + 4 * MODE_WORD)?;
        at += 4 * STAT_WORDS;
        let id = bytes.get(at..at + id_len)?;
        at += id_len;
        let flags = u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?);
        at += 2;
        let mut extended = [0u8; 2];
        if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            extended.copy_from_slice(bytes.get(at..at + 2)?);
            at += 2;
        }
        // The path ends at its first NUL (the 12-bit length saturates).
        let path_end = at + bytes.get(at..)?.iter().position(|&b| b == 0)?;
        let path = &bytes[at..path_end];
        let named = usize::from(flags & 0x0fff);
        if named != 0x0fff && named != path.len() {
            return None;
        }
        // 1 to 8 NULs pad the entry to a multiple of eight bytes.
        let padded = start + (path_end - start + 8) / 8 * 8;
        if bytes.get(path_end..padded)?.iter().any(|&b| b != 0) {
            return None;
        }
        at = padded;
        hasher.update(&mode.to_be_bytes());
        hasher.update(id);
        hasher.update(&flags.to_be_bytes());
        hasher.update(&extended);
        hasher.update(&(path.len() as u64).to_be_bytes());
        hasher.update(path);
    }
    // What follows must be extensions and the checksum, no more.
    if bytes.len() < at + id_len {
        return None;
    }
    Some(hasher.finalize().to_hex().to_string())
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::git;

    /// One version-2 entry for `path` with object id `id` (20 bytes) and the
    /// given stat words.
    fn entry(path: &str, id: u8, stat: [u32; 10]) -> Vec<u8> {
        let mut out = Vec::new();
        for word in stat {
            out.extend(word.to_be_bytes());
        }
        out.extend([id; 20]);
        out.extend((path.len() as u16).to_be_bytes());
        out.extend(path.as_bytes());
        let padded = (out.len() + 8) / 8 * 8;
        out.resize(padded, 0);
        out
    }

    fn index(entries: &[Vec<u8>], extension: &[u8]) -> Vec<u8> {
        let mut out = b"DIRC".to_vec();
        out.extend(2u32.to_be_bytes());
        out.extend((entries.len() as u32).to_be_bytes());
        for e in entries {
            out.extend(e);
        }
        out.extend(extension);
        out.extend([0xab; 20]);
        out
    }

    const MODE: u32 = 0o100644;

    #[test]
    fn a_stat_refresh_is_no_change_and_a_staged_change_is_one() {
        let stale = index(
            &[entry("README.md", 1, [1, 2, 3, 4, 5, 6, MODE, 0, 0, 9])],
            b"TREE\0\0\0\x02ab",
        );
        // New times, device, inode and size, another tree cache, another checksum.
        let mut refreshed = index(
            &[entry("README.md", 1, [7, 7, 7, 7, 8, 99, MODE, 0, 0, 0])],
            b"TREE\0\0\0\x03abc",
        );
        let stale_digest = content_digest(&stale);
        assert!(stale_digest.is_some());
        assert_eq!(content_digest(&refreshed), stale_digest);
        // Staging another version of the file: another object id.
        let staged = index(
            &[entry("README.md", 2, [7, 7, 7, 7, 8, 99, MODE, 0, 0, 0])],
            b"",
        );
        assert_ne!(content_digest(&staged), stale_digest);
        // A mode change (chmod +x) is staged content too.
        let executable = index(
            &[entry("README.md", 1, [1, 2, 3, 4, 5, 6, 0o100755, 0, 0, 9])],
            b"",
        );
        assert_ne!(content_digest(&executable), stale_digest);
        // Bytes that do not lay out as an index are not seen through.
        refreshed.truncate(30);
        assert_eq!(content_digest(&refreshed), None);
        assert_eq!(content_digest(b"not an index at all"), None);
    }

    #[test]
    fn only_a_file_named_index_inside_dot_git_is_an_index() {
        assert!(is_index_path(".git/index"));
        assert!(is_index_path("repo/.git/index"));
        assert!(is_index_path(".git/worktrees/w/index"));
        assert!(!is_index_path("docs/index"));
        assert!(!is_index_path(".git/index.lock"));
        assert!(!is_index_path("index"));
    }

    /// A real repository, copied the way the jail copies it: the first
    /// `git status` in the copy rewrites the index, and the content digest
    /// does not move; `git add` of a changed file does move it.
    #[test]
    fn a_real_refresh_by_git_is_seen_through() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("no temporary directory");
        };
        let Some(copy) = crate::testing::copied_repository(dir.path()) else {
            return;
        };
        let index = copy.join(".git/index");
        let before = std::fs::read(&index).unwrap_or_default();
        // Past git's racy window, so the refresh is a real rewrite.
        std::thread::sleep(std::time::Duration::from_millis(1_100));
        assert!(git(&copy, &["status", "--porcelain"]));
        let after = std::fs::read(&index).unwrap_or_default();
        assert_ne!(before, after, "git rewrote its index in the copy");
        assert!(content_digest(&before).is_some());
        assert_eq!(content_digest(&before), content_digest(&after));
        std::fs::write(copy.join("a.txt"), "two\n").unwrap_or_default();
        assert!(git(&copy, &["add", "a.txt"]));
        let staged = std::fs::read(&index).unwrap_or_default();
        assert_ne!(content_digest(&staged), content_digest(&after));
    }
}
