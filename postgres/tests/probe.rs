//! The PostgreSQL probe in a real throwaway cluster: roles exercised by a
//! SCRAM login with the password a call carried, grants by `SET ROLE` and
//! the action, and nothing of it left in the cluster.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use witness_observers::Snapshot;
use witness_postgres::cluster::{DATABASE, PORT, SERVER_ROLE};
use witness_postgres::protocol::Client;
use witness_postgres::{Cluster, PostgresObserver, PostgresProbe, Source};
use witness_probes::{ObservedObject, Probe, ProbeResult, ProbeStatus, StorePath};

/// The server may create roles (PostgreSQL 15 gives no non-superuser that
/// by default); `reader` is a group that can read `orders`.
const SEED: &str = "
ALTER ROLE server CREATEROLE;
CREATE TABLE orders (id serial PRIMARY KEY, item text);
INSERT INTO orders (item) VALUES ('pen');
CREATE ROLE reader NOLOGIN;
GRANT SELECT ON orders TO reader;
";

const PASSWORDS: [&str; 4] = [
    "alice-pw-0001",
    "ghost-pw-0002",
    "old-pw-0003",
    "bob-pw-0004",
];

fn reachable_dir() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("witness-pgprobe-")
        .tempdir()
        .expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).expect("chmod");
    dir
}

fn cluster_in(dir: &Path) -> (Cluster, std::path::PathBuf) {
    let seed = dir.join("seed.sql");
    std::fs::write(&seed, SEED).expect("seed");
    let store = dir.join("store");
    std::fs::create_dir(&store).expect("store dir");
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o711)).expect("chmod");
    match Cluster::create(&store, &Source::of_path(&seed)) {
        Ok(cluster) => (cluster, store),
        Err(e) => panic!("cluster: {e}"),
    }
}

/// What the server's tool would do: a statement as the server's role.
fn as_server(cluster: &Cluster, sql: &str) {
    let mut client = Client::connect(cluster.socket_dir(), PORT, SERVER_ROLE, DATABASE, None)
        .expect("server connects");
    client.query(sql).expect(sql);
}

/// The call `call` ran `sql` through the server, and the probe heard it.
fn call(cluster: &Cluster, probe: &PostgresProbe, call: u32, sql: &str) {
    as_server(cluster, sql);
    probe.hear(call, &[sql]);
}

fn exercise(probe: &PostgresProbe, store: &Path, id: &str) -> ProbeResult {
    let view = StorePath {
        kind: "postgres",
        path: store,
    };
    let result = probe.exercise(&ObservedObject { store: "db", id }, &view);
    let shown = format!("{result:?} {}", result.basis);
    for password in PASSWORDS {
        assert!(!shown.contains(password), "a password leaked: {shown}");
    }
    result
}

/// Every role with its attributes and memberships, every relation's ACL
/// and the transaction counter: what a write by the probe would move.
fn catalog_state(cluster: &Cluster) -> Vec<Vec<Option<String>>> {
    let mut admin = cluster.connect(DATABASE).expect("admin");
    let mut state = admin
        .query(
            "SELECT rolname || '|' || rolcanlogin || '|' || coalesce(rolvaliduntil::text, '') \
             || '|' || coalesce(rolpassword, '') FROM pg_authid ORDER BY 1",
        )
        .expect("roles");
    state.extend(
        admin
            .query("SELECT member::regrole::text || ' in ' || roleid::regrole::text FROM pg_auth_members ORDER BY 1")
            .expect("members"),
    );
    state.extend(
        admin
            .query("SELECT relname || coalesce(relacl::text, '') FROM pg_class WHERE relnamespace = 'public'::regnamespace ORDER BY 1")
            .expect("acls"),
    );
    state.extend(
        admin
            .query("SELECT count(*)::text FROM orders")
            .expect("rows"),
    );
    // The next transaction id: a probe that wrote anything would have had one.
    state.extend(
        admin
            .query("SELECT pg_snapshot_xmax(pg_current_snapshot())::text")
            .expect("xmax"),
    );
    state
}

#[test]
fn logins_and_grants_are_classified_by_use_and_nothing_persists() {
    let dir = reachable_dir();
    let (cluster, store) = cluster_in(dir.path());
    let probe = PostgresProbe::new();

    call(
        &cluster,
        &probe,
        1,
        "CREATE ROLE alice LOGIN PASSWORD 'alice-pw-0001'",
    );
    call(
        &cluster,
        &probe,
        2,
        "CREATE ROLE ghost PASSWORD 'ghost-pw-0002'",
    );
    call(
        &cluster,
        &probe,
        3,
        "CREATE ROLE old LOGIN PASSWORD 'old-pw-0003' VALID UNTIL '2000-01-01'",
    );
    call(
        &cluster,
        &probe,
        4,
        "CREATE ROLE bob LOGIN PASSWORD 'bob-pw-0004'; GRANT SELECT ON orders TO bob",
    );
    call(&cluster, &probe, 5, "GRANT reader TO alice");
    call(&cluster, &probe, 6, "GRANT SELECT ON orders TO alice");

    let before = catalog_state(&cluster);
    let mut observer = PostgresObserver::new(cluster.socket_dir());
    let mut last = Snapshot::default();
    observer.advance(&mut last).expect("observe");

    let alice = exercise(&probe, &store, "catalog/role:alice");
    assert_eq!(alice.status, ProbeStatus::Effective, "{alice:?}");
    assert_eq!(
        alice.basis,
        "connected as alice with the password of call 1"
    );
    assert_eq!(
        alice.credential_digest.as_deref(),
        Some(&blake3::hash(b"alice-pw-0001").to_hex().as_str()[..16])
    );
    let ghost = exercise(&probe, &store, "catalog/role:ghost");
    assert_eq!(ghost.status, ProbeStatus::Ineffective, "{ghost:?}");
    assert_eq!(
        ghost.basis,
        "the password of call 2 is ghost's, but the cluster refuses a session: role \"ghost\" is not permitted to log in"
    );
    let old = exercise(&probe, &store, "catalog/role:old");
    assert_eq!(old.status, ProbeStatus::Ineffective, "{old:?}");
    assert!(
        old.basis.contains("password authentication failed"),
        "{}",
        old.basis
    );
    let nobody = exercise(&probe, &store, "catalog/role:nobody");
    assert_eq!(nobody.status, ProbeStatus::Ineffective);
    assert_eq!(nobody.basis, "no role nobody: nothing to log in as");

    // The grant alice was given directly and the one through reader.
    let granted = exercise(&probe, &store, "catalog/table:public.orders");
    assert_eq!(granted.status, ProbeStatus::Effective, "{granted:?}");
    assert_eq!(granted.subject.as_deref(), Some("alice"));
    assert_eq!(granted.basis, "SET ROLE alice; SELECT on orders: permitted");

    // Residual authority: the direct grant revoked, the membership kept.
    call(&cluster, &probe, 7, "REVOKE SELECT ON orders FROM alice");
    let residual = exercise(&probe, &store, "catalog/table:public.orders");
    assert_eq!(residual.status, ProbeStatus::Effective, "{residual:?}");
    assert_eq!(residual.subject.as_deref(), Some("alice"));
    // No other path: bob's only grant revoked.
    call(&cluster, &probe, 8, "REVOKE SELECT ON orders FROM bob");
    let dead = exercise(&probe, &store, "catalog/table:public.orders");
    assert_eq!(dead.status, ProbeStatus::Ineffective, "{dead:?}");
    assert_eq!(
        dead.basis,
        "SET ROLE bob; SELECT, INSERT, UPDATE, DELETE on orders: permission denied"
    );
    // bob's login is untouched by the revoke: the two are different authority.
    assert_eq!(
        exercise(&probe, &store, "catalog/role:bob").status,
        ProbeStatus::Effective
    );

    // The probing itself: nothing written, nothing for the observer to see.
    let probed = catalog_state(&cluster);
    let mut last_after = last.clone();
    let before_revokes = before.clone();
    assert_ne!(before_revokes, probed, "the revokes are calls, not probes");
    for _ in 0..2 {
        exercise(&probe, &store, "catalog/role:alice");
        exercise(&probe, &store, "catalog/role:old");
        exercise(&probe, &store, "catalog/table:public.orders");
    }
    assert_eq!(
        probed,
        catalog_state(&cluster),
        "the probe wrote to the cluster"
    );
    observer.advance(&mut last_after).expect("observe");
    assert!(
        observer
            .advance(&mut last_after)
            .expect("observe")
            .is_empty(),
        "the observer saw the probe"
    );

    let secrets = probe.secrets();
    for password in PASSWORDS {
        assert!(
            secrets.iter().any(|s| s == password),
            "{password} not redacted"
        );
    }
}

#[test]
fn the_probe_refuses_what_it_does_not_own() {
    let probe = PostgresProbe::new();
    let dir = reachable_dir();
    let sqlite = StorePath {
        kind: "sqlite",
        path: dir.path(),
    };
    let role = ObservedObject {
        store: "db",
        id: "catalog/role:alice",
    };
    assert!(probe.covers(&role));
    // A row may hold a credential (a login's password an application
    // recorded): covered. A sequence's value never is.
    assert!(probe.covers(&ObservedObject {
        store: "db",
        id: "public.orders/1"
    }));
    assert!(!probe.covers(&ObservedObject {
        store: "db",
        id: "catalog/sequence-value:public.orders_id_seq"
    }));
    assert_eq!(probe.exercise(&role, &sqlite).status, ProbeStatus::Unknown);
    // A postgres store no cluster of this process serves.
    let stranger = StorePath {
        kind: "postgres",
        path: dir.path(),
    };
    let r = probe.exercise(&role, &stranger);
    assert_eq!(r.status, ProbeStatus::Unknown);
    assert!(
        r.basis.contains("not a cluster this audit made"),
        "{}",
        r.basis
    );
}

#[test]
fn a_row_is_authority_only_when_it_holds_a_credential_of_the_cluster() {
    let dir = reachable_dir();
    let (cluster, store) = cluster_in(dir.path());
    let probe = PostgresProbe::new();
    call(
        &cluster,
        &probe,
        1,
        "CREATE ROLE bob LOGIN PASSWORD 'bob-pw-0004'",
    );
    as_server(
        &cluster,
        "CREATE TABLE issued (id int PRIMARY KEY, rolname text, secret text); \
         CREATE TABLE api_keys (id int PRIMARY KEY, name text, key text); \
         INSERT INTO issued VALUES (1, 'bob', 'bob-pw-0004'), (2, 'bob', 'not-his'); \
         INSERT INTO api_keys VALUES (1, 'deploy', 'sk-decoy-0001'); \
         GRANT SELECT ON orders TO bob",
    );
    let before = catalog_state(&cluster);

    let issued = exercise(&probe, &store, "public.issued/1");
    assert_eq!(issued.status, ProbeStatus::Effective, "{}", issued.basis);
    assert_eq!(
        issued.basis,
        "public.issued/1 holds a credential: connected as bob with its secret"
    );
    assert_eq!(issued.subject.as_deref(), Some("bob"));
    let wrong = exercise(&probe, &store, "public.issued/2");
    assert_eq!(wrong.status, ProbeStatus::Ineffective, "{}", wrong.basis);
    let decoy = exercise(&probe, &store, "public.api_keys/1");
    assert_eq!(decoy.status, ProbeStatus::Ineffective, "{}", decoy.basis);
    assert!(decoy.basis.contains("names no role"), "{}", decoy.basis);
    let gone = exercise(&probe, &store, "public.api_keys/9");
    assert_eq!(gone.status, ProbeStatus::Ineffective, "{}", gone.basis);

    // The holder asked for, not the roles the last call named.
    probe.hear(2, &["SELECT 1"]);
    let view = StorePath {
        kind: "postgres",
        path: &store,
    };
    let orders = ObservedObject {
        store: "db",
        id: "catalog/table:public.orders",
    };
    let bob = probe.exercise_for(&orders, &view, "bob");
    assert_eq!(bob.basis, "SET ROLE bob; SELECT on orders: permitted");
    assert_eq!(bob.subject.as_deref(), Some("bob"));
    assert!(probe.secrets().iter().any(|s| s == "bob-pw-0004"));

    assert_eq!(catalog_state(&cluster), before, "the probe wrote something");
}
