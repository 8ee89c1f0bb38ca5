//! A real throwaway cluster: restored from SQL, changed by the server's
//! role, observed by the slot and the catalogs, stopped without a trace.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use witness_observers::{Op, Snapshot};
use witness_postgres::cluster::{DATABASE, PORT, SERVER_ROLE};
use witness_postgres::protocol::Client;
use witness_postgres::{Cluster, PostgresObserver, Source};

const SEED: &str = "
CREATE TABLE contacts (id integer PRIMARY KEY, name text NOT NULL, email text);
CREATE TABLE log (line text);
INSERT INTO contacts VALUES (1, 'Ada', NULL), (2, 'Bob', 'bob@example.org');
CREATE FUNCTION touch(who integer) RETURNS text LANGUAGE plpgsql AS $$
BEGIN INSERT INTO log VALUES ('looked up ' || who); RETURN 'ok'; END $$;
";

/// A directory the cluster's account (not root) can reach.
fn reachable_dir() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("witness-pg-test-")
        .tempdir()
        .expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).expect("chmod");
    dir
}

fn cluster_in(dir: &Path) -> Cluster {
    let seed = dir.join("seed.sql");
    std::fs::write(&seed, SEED).expect("seed");
    let store = dir.join("store");
    std::fs::create_dir(&store).expect("store dir");
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o711)).expect("chmod");
    match Cluster::create(&store, &Source::of_path(&seed)) {
        Ok(cluster) => cluster,
        Err(e) => panic!("cluster: {e}"),
    }
}

fn as_server(cluster: &Cluster, sql: &str) -> Result<(), String> {
    let mut client = Client::connect(cluster.socket_dir(), PORT, SERVER_ROLE, DATABASE, None)
        .map_err(|e| e.to_string())?;
    client.query(sql).map(|_| ()).map_err(|e| e.to_string())
}

fn ops(changes: &[witness_observers::Change]) -> Vec<(String, Op, Option<bool>)> {
    changes
        .iter()
        .map(|c| (c.object.clone(), c.op, c.overwrite))
        .collect()
}

#[test]
fn row_changes_are_charged_to_their_window_with_old_values() {
    let dir = reachable_dir();
    let cluster = cluster_in(dir.path());
    let mut observer = PostgresObserver::new(cluster.socket_dir());
    let mut last = Snapshot::default();
    let pristine = observer.advance(&mut last).expect("pristine");
    assert!(
        pristine
            .iter()
            .any(|c| c.object == "catalog/table:public.contacts"),
        "{pristine:?}"
    );
    assert!(
        pristine.iter().all(|c| c.object.starts_with("catalog/")),
        "rows are never scanned: {pristine:?}"
    );
    assert!(observer.advance(&mut last).expect("again").is_empty());

    // A read that writes through a function, an additive and an
    // overwriting update, a delete and an insert.
    as_server(&cluster, "SELECT touch(1)").expect("touch");
    as_server(
        &cluster,
        "UPDATE contacts SET email = 'ada@example.org' WHERE id = 1; \
         UPDATE contacts SET name = 'Robert' WHERE id = 2; \
         DELETE FROM contacts WHERE id = 2; INSERT INTO contacts VALUES (3, 'Cy', NULL);",
    )
    .expect("writes");
    let changes = observer.advance(&mut last).expect("changes");
    let seen = ops(&changes);
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert_eq!(
        seen[0],
        ("public.contacts/1".into(), Op::Update, Some(false))
    );
    assert_eq!(seen[1], ("public.contacts/2".into(), Op::Delete, None));
    assert_eq!(seen[2], ("public.contacts/3".into(), Op::Create, None));
    assert_eq!(seen[3].1, Op::Create);
    assert!(seen[3].0.starts_with("public.log/#"), "{seen:?}");

    as_server(&cluster, "UPDATE contacts SET name = 'Ada L.' WHERE id = 1").expect("overwrite");
    let changes = observer.advance(&mut last).expect("overwrite seen");
    assert_eq!(
        ops(&changes),
        [("public.contacts/1".into(), Op::Update, Some(true))]
    );

    // A transaction that rolled back changed nothing; DDL and a role are
    // catalog effects.
    as_server(&cluster, "BEGIN; DELETE FROM contacts; ROLLBACK;").expect("rollback");
    as_server(&cluster, "CREATE TABLE extra (k text PRIMARY KEY)").expect("ddl");
    let changes = observer.advance(&mut last).expect("ddl seen");
    let objects: Vec<&str> = changes.iter().map(|c| c.object.as_str()).collect();
    assert!(
        objects.contains(&"catalog/table:public.extra"),
        "{objects:?}"
    );
    assert!(
        objects.iter().all(|o| o.starts_with("catalog/")),
        "{objects:?}"
    );

    // Quiet looks skip the catalogs, yet a nextval() that needed no
    // transaction (only every 32nd is logged) is seen each time, as an
    // additive change; nothing is seen when nothing happens.
    as_server(&cluster, "CREATE SEQUENCE tickets").expect("sequence");
    observer.advance(&mut last).expect("sequence seen");
    assert!(observer.advance(&mut last).expect("quiet").is_empty());
    for _ in 0..2 {
        as_server(&cluster, "SELECT nextval('tickets')").expect("nextval");
        let changes = observer.advance(&mut last).expect("nextval seen");
        assert_eq!(
            ops(&changes),
            [(
                "catalog/sequence-value:public.tickets".into(),
                Op::Update,
                Some(false)
            )]
        );
    }
    // A role made from another database is in the shared catalogs.
    let mut admin = cluster.connect("postgres").expect("admin");
    admin.query("CREATE ROLE intruder LOGIN").expect("role");
    let changes = observer.advance(&mut last).expect("role seen");
    assert_eq!(
        ops(&changes),
        [("catalog/role:intruder".into(), Op::Create, None)]
    );
}

#[test]
fn the_server_role_is_no_superuser_and_the_cluster_leaves_nothing_running() {
    let dir = reachable_dir();
    let cluster = cluster_in(dir.path());
    let error = as_server(&cluster, "COPY (SELECT 1) TO PROGRAM 'true'").unwrap_err();
    assert!(error.contains("42501"), "{error}");
    // Nor can it come in as the superuser, or guess its password.
    let as_owner = |password| {
        Client::connect(cluster.socket_dir(), PORT, "witness", DATABASE, password).map(|_| ())
    };
    assert!(matches!(
        as_owner(None),
        Err(witness_postgres::protocol::ProtocolError::NoPassword)
    ));
    assert!(as_owner(Some("guess")).is_err());
    let pid =
        rustix::process::Pid::from_raw(cluster.pid().expect("running") as i32).expect("a pid");
    let socket = witness_postgres::protocol::socket_path(cluster.socket_dir(), PORT);
    assert!(socket.exists());
    drop(cluster);
    // Signal 0 only asks whether the process group exists.
    let alive = rustix::process::test_kill_process_group(pid).is_ok();
    assert!(!alive, "the postmaster's group outlived the cluster");
    assert!(!socket.exists(), "the socket outlived the cluster");
}

#[test]
fn a_tables_declared_columns_say_which_an_insert_must_name() {
    use witness_observers::Observer;
    let dir = reachable_dir();
    let cluster = cluster_in(dir.path());
    let mut observer = PostgresObserver::new(cluster.socket_dir());
    let shapes = observer.tables().expect("tables");
    let contacts = shapes
        .iter()
        .find(|t| t.table == "contacts")
        .unwrap_or_else(|| panic!("{shapes:?}"));
    let required: Vec<&str> = contacts
        .columns
        .iter()
        .filter(|c| c.required)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(required, ["id", "name"], "{contacts:?}");
    assert_eq!(contacts.columns[2].declared_type, "text");
    assert!(contacts.columns[0].key && !contacts.columns[1].key);
    assert!(shapes.iter().any(|t| t.table == "public.contacts"));
    assert!(
        shapes
            .iter()
            .any(|t| t.table == "log" && t.columns.iter().all(|c| !c.required))
    );
}

#[test]
fn the_cluster_says_when_something_committed_and_when_nothing_did() {
    use witness_observers::{Activity, Observer};
    let dir = reachable_dir();
    let cluster = cluster_in(dir.path());
    let mut observer = PostgresObserver::new(cluster.socket_dir());
    observer.observe(false).expect("baseline");
    // Nothing since the observation, and the observer's own reads (the
    // slot's, the catalogs') are no activity.
    assert_eq!(observer.activity(), Activity::Quiet);
    observer.observe(true).expect("again");
    assert_eq!(observer.activity(), Activity::Quiet);
    assert_eq!(observer.activity(), Activity::Quiet);
    // A commit, then nothing: busy once, quiet after.
    as_server(&cluster, "INSERT INTO log VALUES ('x')").expect("insert");
    assert_eq!(observer.activity(), Activity::Busy);
    assert_eq!(observer.activity(), Activity::Quiet);
    // A commit before an observation is the observation's to see (with
    // the one before, which the signal never consumes); the next ask is
    // quiet.
    as_server(&cluster, "SELECT touch(2)").expect("touch");
    let seen = observer.observe(true).expect("the writes");
    assert_eq!(seen.delta.changes.len(), 2, "{:?}", seen.delta);
    assert_eq!(observer.activity(), Activity::Quiet);
    // A sequence moved with no transaction to commit.
    as_server(&cluster, "CREATE SEQUENCE s").expect("sequence");
    observer.observe(true).expect("the sequence");
    assert_eq!(observer.activity(), Activity::Quiet);
    as_server(&cluster, "SELECT nextval('s')").expect("nextval");
    assert_eq!(observer.activity(), Activity::Busy);
    // A transaction left open is busy for as long as it is open.
    let mut open =
        Client::connect(cluster.socket_dir(), PORT, SERVER_ROLE, DATABASE, None).expect("connect");
    open.query("BEGIN; INSERT INTO log VALUES ('pending')")
        .expect("open");
    assert_eq!(observer.activity(), Activity::Busy);
    assert_eq!(observer.activity(), Activity::Busy);
    open.query("COMMIT").expect("commit");
    assert_eq!(observer.activity(), Activity::Busy);
    assert_eq!(observer.activity(), Activity::Quiet);
}
