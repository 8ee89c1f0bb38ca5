//! The small, realistic stores the wild experiment gives each server, made
//! fresh for every audit from fixed content.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::table::Seed;
use crate::coverage::seed::{shop, write_tree};

/// Makes the store of kind `seed` under `dir`; gives the path the jail
/// copies it from. `python` is the experiment venv's interpreter (the
/// DuckDB file is written with the venv's own duckdb, so its format is
/// the one the server reads).
pub fn make(seed: Seed, dir: &Path, python: &Path) -> Result<PathBuf, String> {
    match seed {
        Seed::MemoryBank => {
            let root = dir.join("memory-bank");
            write_tree(&root, &BANK)?;
            Ok(root)
        }
        Seed::Vault => {
            let root = dir.join("vault");
            write_tree(&root, &VAULT)?;
            Ok(root)
        }
        Seed::Shop => {
            let file = dir.join("shop.db");
            shop(&file)?;
            Ok(file)
        }
        Seed::DuckShop => {
            let root = dir.join("duck");
            std::fs::create_dir_all(&root).map_err(|e| format!("cannot make {e}"))?;
            duck_shop(python, &root.join("shop.duckdb"))?;
            Ok(root)
        }
    }
}

const BANK: [(&str, &str); 4] = [
    (
        "field-notes/projectbrief.md",
        "# Field notes\n\nA notebook for the garden and the workshop.\n",
    ),
    (
        "field-notes/activeContext.md",
        "# Active context\n\nFixing the gate; ordering seeds.\n",
    ),
    (
        "field-notes/progress.md",
        "# Progress\n\n- gate: hinge bought\n",
    ),
    (
        "garden/plan.md",
        "# Garden plan\n\nBeans by the fence, herbs by the door.\n",
    ),
];

const VAULT: [(&str, &str); 5] = [
    (
        "Daily/2026-01-05.md",
        "# 2026-01-05\n\nCalled the vet. See [[Gate]].\n",
    ),
    (
        "Projects/Gate.md",
        "# Gate\n\nThe hinge is rusted; a new one is ordered.\n",
    ),
    ("Projects/Garden.md", "# Garden\n\nBeans by the fence.\n"),
    ("Ideas.md", "# Ideas\n\n- a rain barrel\n"),
    (".obsidian/app.json", "{\"alwaysUpdateLinks\": true}\n"),
];

const DUCK_SHOP: &str = "\
import duckdb, sys
c = duckdb.connect(sys.argv[1])
c.execute('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT)')
c.execute('CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, total_cents INTEGER NOT NULL, status TEXT NOT NULL)')
c.execute(\"INSERT INTO customers VALUES (1, 'Ada Lovelace', 'ada@example.invalid'), (2, 'Charles Babbage', 'charles@example.invalid')\")
c.execute(\"INSERT INTO orders VALUES (1, 1, 1250, 'open'), (2, 2, 4000, 'shipped'), (3, 1, 990, 'open')\")
c.execute('CHECKPOINT')
c.close()
";

fn duck_shop(python: &Path, file: &Path) -> Result<(), String> {
    let output = Command::new(python)
        .arg("-c")
        .arg(DUCK_SHOP)
        .arg(file)
        .env_clear()
        .output()
        .map_err(|e| format!("cannot run {} to seed DuckDB: {e}", python.display()))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "seeding the DuckDB shop failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_stores_are_written_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = make(Seed::Vault, dir.path(), Path::new("python3")).expect("vault");
        assert!(root.join("Projects/Gate.md").is_file());
        assert!(root.join(".obsidian/app.json").is_file());
        let bank = make(Seed::MemoryBank, dir.path(), Path::new("python3")).expect("bank");
        assert!(bank.join("garden/plan.md").is_file());
    }
}
