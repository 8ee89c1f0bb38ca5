//! **Optional parameters that choose where a call acts.** A parameter
//! optional in the schema whose name says where the tool works (`directory`,
//! `cwd`, `repo`, `repo_path`, `path`, `database`, `vault`, `project`,
//! `workspace`, ...) is filled with the store — its root, its file, the
//! store's named object — rather than left out; when nothing real fits at
//! call time it is left out, as before, never invented.
//!
//! Answers the failure where a git server's optional `directory` was never
//! set, so git ran in the jail's working folder and every tool "worked" on
//! nothing, or a lister defaulted to `~/Documents` (`Directory does not
//! exist`) while the store sat elsewhere.
//!
//! Example: `list_files {"directory"?: string, "recursive"?: boolean}` is
//! called `list_files {"directory": "/jail/stores/vault/tree"}`, the
//! argument recorded with provenance `store`.

use serde_json::Value;

/// Names (flattened: lowercase, no `_` or `-`) of parameters that choose
/// where a call acts.
const SCOPE_NAMES: [&str; 28] = [
    "directory",
    "dir",
    "cwd",
    "workdir",
    "workingdir",
    "workingdirectory",
    "basedir",
    "rootdir",
    "root",
    "folder",
    "repo",
    "repopath",
    "repository",
    "repositorypath",
    "repodir",
    "path",
    "projectpath",
    "projectdir",
    "projectroot",
    "database",
    "db",
    "dbpath",
    "databasepath",
    "vault",
    "vaultpath",
    "project",
    "workspace",
    "workspacepath",
];

/// Whether parameter `name` chooses where a call acts.
pub fn chooses_scope(name: &str) -> bool {
    let flat: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    SCOPE_NAMES.contains(&flat.as_str())
}

/// The optional string parameters of `schema` that choose where a call
/// acts, each with the placeholder a real value replaces at call time.
pub fn optional_scope(schema: Option<&Value>) -> Vec<(String, Value)> {
    let Some(schema) = schema else {
        return Vec::new();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .filter(|(name, sub)| {
            !required.contains(&name.as_str()) && chooses_scope(name) && takes_string(sub)
        })
        .map(|(name, _)| (name.clone(), Value::String("witness".into())))
        .collect()
}

/// Whether a property takes a string (alone, or beside `null`).
fn takes_string(sub: &Value) -> bool {
    let ty = |v: &Value| match v.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
        _ => false,
    };
    ty(sub)
        || ["anyOf", "oneOf"].iter().any(|k| {
            sub.get(*k)
                .and_then(Value::as_array)
                .is_some_and(|alts| alts.iter().any(ty))
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn optional_strings_named_for_where_a_call_acts_are_chosen() {
        let schema = json!({
            "type": "object",
            "properties": {
                "directory": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
                "repo_path": {"type": "string"},
                "recursive": {"type": "boolean"},
                "pattern": {"type": "string"},
                "project": {"type": ["string", "null"]},
                "path": {"type": "string"},
                "depth": {"type": "integer"}
            },
            "required": ["path"]
        });
        let mut names: Vec<String> = optional_scope(Some(&schema))
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        names.sort();
        assert_eq!(names, ["directory", "project", "repo_path"]);
        assert!(chooses_scope("workingDirectory"));
        assert!(!chooses_scope("directory_name_filter"));
        assert!(optional_scope(None).is_empty());
    }
}
