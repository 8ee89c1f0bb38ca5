//! The small, realistic stores the coverage experiment gives each server.
//! Made fresh for every run, from fixed content and (for the repository)
//! fixed authors and dates, so every run starts from the same store.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::table::Seed;

/// Makes the store of kind `seed` under `dir`; gives the path the jail
/// copies it from.
pub fn make(seed: Seed, dir: &Path) -> Result<PathBuf, String> {
    match seed {
        Seed::Project => {
            let tree = dir.join("project");
            write_tree(&tree, &PROJECT)?;
            Ok(tree)
        }
        Seed::Graph => {
            let file = dir.join("memory.jsonl");
            std::fs::write(&file, GRAPH).map_err(|e| format!("cannot write the graph: {e}"))?;
            Ok(file)
        }
        Seed::Shop => {
            let file = dir.join("shop.db");
            shop(&file)?;
            Ok(file)
        }
        Seed::Repository => {
            let repo = dir.join("repository");
            repository(&repo)?;
            Ok(repo)
        }
    }
}

const PROJECT: [(&str, &str); 5] = [
    (
        "README.md",
        "# Field notes\n\nA small project the lab keeps its notes in.\n",
    ),
    (
        "docs/guide.md",
        "# Guide\n\nRun `app.py` to print the notes.\n",
    ),
    ("notes/todo.txt", "buy milk\nfix the gate\n"),
    (
        "src/app.py",
        "import json\n\nprint(json.load(open('data/config.json'))['title'])\n",
    ),
    ("data/config.json", "{\"title\": \"Field notes\"}\n"),
];

const GRAPH: &str = concat!(
    r#"{"type":"entity","name":"Ada Lovelace","entityType":"person","observations":["wrote the first published program"]}"#,
    "\n",
    r#"{"type":"entity","name":"Charles Babbage","entityType":"person","observations":["designed the Analytical Engine"]}"#,
    "\n",
    r#"{"type":"entity","name":"Analytical Engine","entityType":"machine","observations":["never completed"]}"#,
    "\n",
    r#"{"type":"relation","from":"Ada Lovelace","to":"Charles Babbage","relationType":"corresponded with"}"#,
    "\n",
    r#"{"type":"relation","from":"Charles Babbage","to":"Analytical Engine","relationType":"designed"}"#,
);

pub(crate) fn write_tree(root: &Path, files: &[(&str, &str)]) -> Result<(), String> {
    for (path, content) in files {
        let file = root.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot seed {path}: {e}"))?;
        }
        std::fs::write(&file, content).map_err(|e| format!("cannot seed {path}: {e}"))?;
    }
    Ok(())
}

pub(crate) fn shop(file: &Path) -> Result<(), String> {
    let fail = |e: rusqlite::Error| format!("cannot seed the shop database: {e}");
    let conn = rusqlite::Connection::open(file).map_err(fail)?;
    conn.execute_batch(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT);
         CREATE TABLE orders (
             id INTEGER PRIMARY KEY,
             customer_id INTEGER NOT NULL REFERENCES customers(id),
             total_cents INTEGER NOT NULL,
             status TEXT NOT NULL DEFAULT 'open');
         INSERT INTO customers VALUES
             (1, 'Ada Lovelace', 'ada@example.invalid'),
             (2, 'Charles Babbage', 'charles@example.invalid');
         INSERT INTO orders VALUES
             (1, 1, 1250, 'open'), (2, 2, 4000, 'shipped'), (3, 1, 990, 'open');",
    )
    .map_err(fail)
}

/// A repository made with the `git` command, under fixed authors and dates
/// and with no configuration but its own, so its history is the same on
/// every machine.
fn repository(repo: &Path) -> Result<(), String> {
    std::fs::create_dir_all(repo).map_err(|e| format!("cannot make the repository: {e}"))?;
    let git = |args: &[&str]| -> Result<(), String> {
        let output = Command::new("git")
            .args(args)
            .current_dir(repo)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", repo)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_DATE", "2026-01-01T12:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T12:00:00Z")
            .output()
            .map_err(|e| format!("cannot run git (it is needed to seed the repository): {e}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "git {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        }
    };
    git(&["init", "-q", "-b", "main"])?;
    git(&["config", "user.name", "Lab Notes"])?;
    git(&["config", "user.email", "lab@example.invalid"])?;
    write_tree(repo, &PROJECT[..3])?;
    git(&["add", "."])?;
    git(&["commit", "-q", "-m", "Start the field notes"])?;
    write_tree(
        repo,
        &[("notes/todo.txt", "buy milk\nfix the gate\ncall the vet\n")],
    )?;
    git(&["commit", "-q", "-a", "-m", "Add a note"])?;
    git(&["branch", "drafts"])?;
    // A staged change, an unstaged one and an untracked file.
    write_tree(repo, &PROJECT[3..4])?;
    git(&["add", "src/app.py"])?;
    write_tree(
        repo,
        &[
            (
                "README.md",
                "# Field notes\n\nA small project the lab keeps its notes in, and more.\n",
            ),
            ("data/config.json", "{\"title\": \"Field notes\"}\n"),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_graph_is_one_json_object_per_line() {
        for line in GRAPH.lines() {
            let value: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
            assert!(value["type"].is_string(), "{line}");
        }
        assert_eq!(GRAPH.lines().count(), 5);
    }

    #[test]
    fn stores_are_made_where_asked() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("no temporary directory");
        };
        for seed in [Seed::Project, Seed::Graph, Seed::Shop] {
            let made = make(seed, dir.path());
            assert!(
                made.as_ref().is_ok_and(|p| p.exists()),
                "{seed:?}: {made:?}"
            );
        }
    }
}
