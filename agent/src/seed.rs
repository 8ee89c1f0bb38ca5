//! The stores a case starts from: fresh SQLite files built from its seed
//! SQL, in a temporary directory the jail copies from (the jail never
//! writes them back, so every run starts from the same bytes).

use witness_jail::{StoreKind, StoreSpec};
use witness_model::agent::CaseEntry;

/// Seeded stores and the directory that holds them.
pub struct Seeded {
    _dir: witness_process::scratch::ScratchDir,
    pub stores: Vec<StoreSpec>,
}

/// Builds every store of `entry`. Errors are one line.
pub fn seed(entry: &CaseEntry) -> Result<Seeded, String> {
    let dir = witness_process::scratch::tempdir("mcp-witness-seed-")
        .map_err(|e| format!("cannot create a seed directory: {e}"))?;
    let mut stores = Vec::new();
    for store in &entry.case.stores {
        let path = dir.path().join(format!("{}.db", store.name));
        let sql = entry.seed_sql.get(&store.name).map_or("", String::as_str);
        let conn = rusqlite::Connection::open(&path)
            .map_err(|e| format!("cannot create store {}: {e}", store.name))?;
        conn.execute_batch(sql)
            .map_err(|e| format!("the seed of store {} does not run: {e}", store.name))?;
        drop(conn);
        stores.push(StoreSpec {
            name: store.name.clone(),
            kind: StoreKind::Sqlite,
            source: path,
            shown: Some(format!(
                "{}.db, seeded by case {}",
                store.name, entry.case.id
            )),
            clock_columns: Vec::new(),
        });
    }
    Ok(Seeded { _dir: dir, stores })
}
