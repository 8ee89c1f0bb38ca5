//! Golden cases from TOML files, checked before anything runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use witness_model::agent::CaseEntry;
use witness_model::agent::case::GoldenCase;

/// Why a case cannot be used: an invalid invocation, nothing was launched.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

/// Every case named by `paths`: files, or directories whose `*.toml` files
/// are read in name order. An id used twice is refused.
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<CaseEntry>, CaseError> {
    let mut entries: Vec<CaseEntry> = Vec::new();
    for path in paths {
        for file in files(path)? {
            let entry = load(&file)?;
            if entries.iter().any(|e| e.case.id == entry.case.id) {
                return Err(invalid(
                    &file,
                    format!("case id {:?} is used twice", entry.case.id),
                ));
            }
            entries.push(entry);
        }
    }
    if entries.is_empty() {
        return Err(CaseError::Invalid {
            path: "--case".into(),
            message: "no golden case found".into(),
        });
    }
    Ok(entries)
}

fn files(path: &Path) -> Result<Vec<PathBuf>, CaseError> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let read = |source| CaseError::Read {
        path: path.display().to_string(),
        source,
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(read)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    Ok(files)
}

fn invalid(path: &Path, message: impl Into<String>) -> CaseError {
    CaseError::Invalid {
        path: path.display().to_string(),
        message: message.into(),
    }
}

/// One case and its seed SQL (files relative to the case file).
pub fn load(path: &Path) -> Result<CaseEntry, CaseError> {
    let text = std::fs::read_to_string(path).map_err(|source| CaseError::Read {
        path: path.display().to_string(),
        source,
    })?;
    let case: GoldenCase = toml::from_str(&text)
        .map_err(|e| invalid(path, e.message().lines().next().unwrap_or("invalid TOML")))?;
    check(&case).map_err(|m| invalid(path, m))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut seed_sql = BTreeMap::new();
    for store in &case.stores {
        let mut sql = String::new();
        for file in &store.seed {
            let seed = base.join(file);
            let text = std::fs::read_to_string(&seed).map_err(|source| CaseError::Read {
                path: seed.display().to_string(),
                source,
            })?;
            sql.push_str(&text);
            if !sql.ends_with('\n') {
                sql.push('\n');
            }
        }
        seed_sql.insert(store.name.clone(), sql);
    }
    Ok(CaseEntry {
        file: path.display().to_string(),
        seed_sql,
        case,
    })
}

fn is_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 64
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// What TOML cannot say: names, kinds, and references between sections.
fn check(case: &GoldenCase) -> Result<(), String> {
    if !is_name(&case.id) {
        return Err("id must be 1-64 letters, digits, '-' or '_'".into());
    }
    if case.turns.is_empty() {
        return Err("a case needs at least one [[turn]]".into());
    }
    if case.turns.first().is_some_and(|t| t.consent) {
        return Err("the first turn cannot consent: nothing was asked yet".into());
    }
    for (i, store) in case.stores.iter().enumerate() {
        if !is_name(&store.name) || store.name == "jail" {
            return Err(format!("store name {:?} is not allowed", store.name));
        }
        if case.stores[..i].iter().any(|s| s.name == store.name) {
            return Err(format!("store {:?} is declared twice", store.name));
        }
        if store.kind != "sqlite" {
            return Err(format!(
                "store {}: kind {:?} cannot be seeded (only sqlite)",
                store.name, store.kind
            ));
        }
        if store.seed.is_empty() {
            return Err(format!("store {}: no seed files", store.name));
        }
    }
    for facts in &case.facts {
        if !case.stores.iter().any(|s| s.name == facts.store) {
            return Err(format!(
                "[[facts]] names store {:?}, which the case does not declare",
                facts.store
            ));
        }
        if facts.columns.is_empty() {
            return Err(format!("[[facts]] for {}: no columns", facts.table));
        }
    }
    for effect in &case.expect.effects {
        if !effect.object.contains(':') {
            return Err(format!(
                "expected effect {:?}: objects are STORE:OBJECT",
                effect.object
            ));
        }
        if effect.count.is_some() && (effect.min.is_some() || effect.max.is_some()) {
            return Err(format!(
                "expected effect {:?}: count, or min and max, not both",
                effect.object
            ));
        }
    }
    for call in &case.expect.calls {
        if call.max.is_some_and(|max| max < call.min()) {
            return Err(format!("expected call {}: max is below min", call.tool));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repositorys_cases_load_with_their_seeds() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../experiments/agent/cases");
        let Ok(entries) = load_all(&[dir]) else {
            panic!("the committed cases load");
        };
        let ids: Vec<&str> = entries.iter().map(|e| e.case.id.as_str()).collect();
        assert_eq!(ids, ["add-dana-missing", "add-dana-present", "delete-dana"]);
        for entry in &entries {
            let sql = &entry.seed_sql["db"];
            assert!(sql.starts_with("-- The CRM testbed's schema"), "{sql}");
            assert!(sql.contains("CREATE TABLE IF NOT EXISTS audit_log("));
        }
        assert!(entries[1].seed_sql["db"].contains("'c_150'"));
        assert!(!entries[0].seed_sql["db"].contains("'c_150'"));
    }

    #[test]
    fn mistakes_are_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).expect("write");
            path
        };
        let cases = [
            (
                "a.toml",
                "id = \"a b\"\nbudget = 1\n[[turn]]\nuser = \"x\"",
                "id must be",
            ),
            (
                "b.toml",
                "id = \"b\"\nbudget = 1\nturn = []",
                "at least one",
            ),
            (
                "c.toml",
                "id = \"c\"\nbudget = 1\n[[turn]]\nuser = \"x\"\nconsent = true",
                "first turn",
            ),
            (
                "d.toml",
                "id = \"d\"\nbudget = 1\nbogus = 2\n[[turn]]\nuser = \"x\"",
                "unknown field",
            ),
            (
                "e.toml",
                "id = \"e\"\nbudget = 1\n[[turn]]\nuser = \"x\"\n[[store]]\nname = \"db\"\nkind = \"sqlite\"\nseed = [\"missing.sql\"]",
                "cannot read",
            ),
        ];
        for (name, text, expected) in cases {
            let path = write(name, text);
            let error = load(&path).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(error.contains(expected), "{name}: {error}");
        }
        let twice = write("f.toml", "id = \"a\"\nbudget = 1\n[[turn]]\nuser = \"x\"");
        let again = write("g.toml", "id = \"a\"\nbudget = 1\n[[turn]]\nuser = \"x\"");
        assert!(load_all(&[twice, again]).is_err());
    }
}
