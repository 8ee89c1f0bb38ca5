//! What the study reads from `experiments/field`: the split, each server's
//! registry entry (`server.json`) and the witness's side of it
//! (`witness.toml`), and the ground truth (`truth/<id>.toml`) where one has
//! been written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use witness_sweep::server_json::ServerJson;

/// `split.json`: the seeded, stratified halves.
#[derive(Clone, Debug, Deserialize)]
pub struct Split {
    pub development: Vec<String>,
    pub evaluation: Vec<String>,
    /// Per kind, per half: the ids.
    pub kinds: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

impl Split {
    pub fn parse(text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| format!("split.json: {e}"))
    }

    /// The kind a server was classed as, if the split names it.
    pub fn kind_of(&self, id: &str) -> Option<&str> {
        self.kinds
            .iter()
            .find(|(_, halves)| halves.values().any(|ids| ids.iter().any(|i| i == id)))
            .map(|(kind, _)| kind.as_str())
    }
}

/// Which servers a run takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    Development,
    Evaluation,
    All,
}

impl Half {
    pub fn as_str(self) -> &'static str {
        match self {
            Half::Development => "development",
            Half::Evaluation => "evaluation",
            Half::All => "all",
        }
    }

    /// The ids of this half, in the order they run (sorted, so that a
    /// rerun and its document follow the same order).
    pub fn ids(self, split: &Split) -> Vec<String> {
        let mut ids: Vec<String> = match self {
            Half::Development => split.development.clone(),
            Half::Evaluation => split.evaluation.clone(),
            Half::All => split
                .development
                .iter()
                .chain(&split.evaluation)
                .cloned()
                .collect(),
        };
        ids.sort();
        ids.dedup();
        ids
    }
}

/// `witness.toml`: what the registry format has no field for.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Witness {
    pub id: String,
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub stores: Vec<StoreDecl>,
    #[serde(default)]
    pub run: Run,
    #[serde(default)]
    pub install: Install,
    #[serde(default)]
    pub seed: SeedDecl,
}

/// One `[[stores]]`.
#[derive(Clone, Debug, Deserialize)]
pub struct StoreDecl {
    pub name: String,
    /// As `--store NAME=KIND:PATH` takes it.
    pub kind: String,
    /// For a file store: the file's name.
    #[serde(default)]
    pub file: Option<String>,
}

/// `[run]`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Run {
    /// The package's executable, where it is not named after the package.
    #[serde(default)]
    pub command: Option<String>,
}

/// `[install]`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Install {
    /// Requirements installed with a PyPI package (`mcp<2`, an extra).
    #[serde(default)]
    pub constraints: Vec<String>,
}

/// `[seed]`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct SeedDecl {
    #[serde(default)]
    pub description: String,
    /// The package's own command that makes an empty store, run before the
    /// server with its environment (`{NAME}` resolved).
    #[serde(default)]
    pub init: Vec<String>,
    #[serde(default)]
    pub calls: Vec<SeedCall>,
}

/// One `[[seed.calls]]`: a tool call that writes the store through the
/// server itself; `{NAME}` in its string values is a store's jailed path.
#[derive(Clone, Debug, Deserialize)]
pub struct SeedCall {
    pub tool: String,
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

impl Witness {
    pub fn parse(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| format!("witness.toml: {}", one_line(&e.to_string())))
    }
}

/// `truth/<id>.toml`: per tool, what its code does.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Truth {
    #[serde(default, rename = "tool")]
    pub tools: Vec<ToolTruth>,
}

/// What one tool's code does, read from the package's source.
#[derive(Clone, Debug, Deserialize)]
pub struct ToolTruth {
    pub name: String,
    pub writes: bool,
    pub deletes_or_overwrites: bool,
    pub idempotent: bool,
    pub network: bool,
    /// `file:line` the answers rest on.
    #[serde(default)]
    pub evidence: Vec<String>,
}

impl Truth {
    pub fn parse(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| format!("truth: {}", one_line(&e.to_string())))
    }

    pub fn tool(&self, name: &str) -> Option<&ToolTruth> {
        self.tools.iter().find(|t| t.name == name)
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One server of the study, as read from its directory.
#[derive(Clone, Debug)]
pub struct FieldEntry {
    pub id: String,
    /// From the split (else witness.toml's `kind`).
    pub kind: String,
    pub entry: ServerJson,
    pub witness: Witness,
    pub truth: Option<Truth>,
}

impl FieldEntry {
    /// Reads `servers/<id>/` and `truth/<id>.toml` (absent: no truth yet)
    /// under `field`; the truth from `truth_dir` when given.
    pub fn read(
        field: &Path,
        truth_dir: &Path,
        id: &str,
        split: &Split,
    ) -> Result<FieldEntry, String> {
        let dir = field.join("servers").join(id);
        let read = |name: &str| -> Result<String, String> {
            std::fs::read_to_string(dir.join(name))
                .map_err(|e| format!("cannot read {}: {e}", dir.join(name).display()))
        };
        let entry = ServerJson::parse(&read("server.json")?)
            .map_err(|e| format!("{id}/server.json: {e}"))?;
        let witness = Witness::parse(&read("witness.toml")?).map_err(|e| format!("{id}/{e}"))?;
        if witness.id != id {
            return Err(format!(
                "{id}/witness.toml says id = {:?}: it belongs to another server",
                witness.id
            ));
        }
        let truth_path = truth_path(truth_dir, id);
        let truth = match std::fs::read_to_string(&truth_path) {
            Ok(text) => Some(Truth::parse(&text).map_err(|e| format!("{id} {e}"))?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("cannot read {}: {e}", truth_path.display())),
        };
        let kind = split
            .kind_of(id)
            .map(str::to_owned)
            .or_else(|| witness.kind.clone())
            .unwrap_or_default();
        Ok(FieldEntry {
            id: id.to_owned(),
            kind,
            entry,
            witness,
            truth,
        })
    }

    /// The entry's first package: every field entry has exactly one.
    pub fn package(&self) -> Result<&witness_sweep::server_json::RegistryPackage, String> {
        self.entry
            .packages
            .first()
            .ok_or_else(|| format!("{}: server.json lists no package", self.id))
    }
}

/// Where a server's ground truth is.
pub fn truth_path(truth_dir: &Path, id: &str) -> PathBuf {
    truth_dir.join(format!("{id}.toml"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const WITNESS: &str = r#"
id = "tasks-x"
kind = "tasks"

[run]
command = "tasker"

[install]
constraints = ["mcp<2"]

[[stores]]
name = "data"
kind = "fs"

[[stores]]
name = "db"
kind = "sqlite"
file = "tasks.db"

[seed]
description = "a task list of 2 tasks"
init = ["tasker", "init", "--user"]

[[seed.calls]]
tool = "create_task"
arguments = { "title" = "Water the plants", "file" = "{data}/x.md" }

[[seed.calls]]
tool = "list_tasks"
"#;

    #[test]
    fn witness_toml_gives_stores_command_constraints_and_seed() {
        let w = Witness::parse(WITNESS).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(w.id, "tasks-x");
        assert_eq!(w.run.command.as_deref(), Some("tasker"));
        assert_eq!(w.install.constraints, ["mcp<2"]);
        let stores: Vec<(&str, &str, Option<&str>)> = w
            .stores
            .iter()
            .map(|s| (s.name.as_str(), s.kind.as_str(), s.file.as_deref()))
            .collect();
        assert_eq!(
            stores,
            [("data", "fs", None), ("db", "sqlite", Some("tasks.db"))]
        );
        assert_eq!(w.seed.init, ["tasker", "init", "--user"]);
        assert_eq!(w.seed.calls.len(), 2);
        assert_eq!(w.seed.calls[0].arguments["file"], "{data}/x.md");
        assert_eq!(
            w.seed.calls[1].arguments,
            serde_json::json!({}),
            "a call without arguments sends an empty object"
        );
    }

    #[test]
    fn a_broken_witness_toml_is_one_line() {
        let Err(e) = Witness::parse("id = \n[[stores]]\nname = 1") else {
            panic!("not TOML");
        };
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn every_committed_server_reads_and_its_half_is_known() {
        let field = Path::new(env!("CARGO_MANIFEST_DIR")).join("../experiments/field");
        let split = std::fs::read_to_string(field.join("split.json"))
            .map_err(|e| e.to_string())
            .and_then(|t| Split::parse(&t))
            .unwrap_or_else(|e| panic!("{e}"));
        let all = Half::All.ids(&split);
        assert!(all.len() >= 60, "{} servers", all.len());
        assert_eq!(
            all.len(),
            split.development.len() + split.evaluation.len(),
            "no server is in both halves"
        );
        for id in &all {
            let entry = FieldEntry::read(&field, &field.join("truth"), id, &split)
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(!entry.kind.is_empty(), "{id} has a kind");
            let package = entry.package().unwrap_or_else(|e| panic!("{e}"));
            assert!(matches!(package.registry_type.as_str(), "npm" | "pypi"));
            assert!(!entry.witness.stores.is_empty(), "{id} declares a store");
        }
    }

    #[test]
    fn truth_reads_per_tool_answers_with_their_lines() {
        let t = Truth::parse(
            r#"
id = "x"
package = "npm:x@1.0.0"

[[tool]]
name = "add"
writes = true
deletes_or_overwrites = false
idempotent = false
network = false
evidence = ["dist/index.js:10-12"]
notes = "appends"
"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let add = t.tool("add").unwrap_or_else(|| panic!("add"));
        assert!(add.writes && !add.idempotent);
        assert_eq!(add.evidence, ["dist/index.js:10-12"]);
        assert!(t.tool("other").is_none());
    }
}
