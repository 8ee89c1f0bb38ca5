use super::*;
use crate::testing::{tempdir, write};

/// A sweep directory holding `sweep` as SWEEP.toml, a plan and a fixture.
fn sweep_dir(sweep: &str) -> tempfile::TempDir {
    let dir = tempdir();
    write(&dir.path().join("SWEEP.toml"), sweep);
    write(
        &dir.path().join("plans/one.toml"),
        "[[call]]\ntool = \"read_graph\"\n",
    );
    write(
        &dir.path().join("fixtures/tree/docs/readme.md"),
        "# notes\n",
    );
    write(
        &dir.path().join("lock/package.json"),
        r#"{"dependencies": {"@modelcontextprotocol/server-memory": "2026.8.31"}}"#,
    );
    write(&dir.path().join("lock/package-lock.json"), "{}");
    write(
        &dir.path().join("reqs.txt"),
        "mcp-server-time==2026.10.19\nmcp==2.3.0\n",
    );
    dir
}

const GOOD: &str = r#"
name = "demo"
max_attempts = 2
[defaults]
timeout_ms = 20000
include_destructive = true

[[target]]
name = "memory"
package = "npm:@modelcontextprotocol/server-memory@2026.8.31"
lock = "lock/package-lock.json"
bin = "mcp-server-memory"
env = { MEMORY_FILE_PATH = "{mem}" }
plan = "plans/one.toml"
[[target.store]]
name = "mem"
kind = "jsonl"
file = "memory.jsonl"

[[target]]
name = "time"
package = "pypi:mcp-server-time==2026.10.19"
lock = "reqs.txt"
module = "mcp_server_time"
settle_ms = 0

[[target]]
name = "tree"
command = ["my-server", "--root", "{fs}"]
clock_text = ["js-date"]
[[target.store]]
name = "fs"
kind = "fs"
fixture = "fixtures/tree"
"#;

fn load(dir: &tempfile::TempDir) -> Result<Sweep, String> {
    Sweep::load(&dir.path().join("SWEEP.toml")).map_err(|e| e.to_string())
}

#[test]
fn a_sweep_resolves_packages_commands_stores_and_options() {
    let dir = sweep_dir(GOOD);
    let sweep = load(&dir).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sweep.name, "demo");
    assert_eq!(sweep.max_attempts, 2);
    let [memory, time, tree] = &sweep.targets[..] else {
        panic!("three targets");
    };
    assert_eq!(
        memory.definition.command,
        ["node", "{install}/node_modules/.bin/mcp-server-memory"]
    );
    assert!(memory.key.starts_with("memory-"), "{}", memory.key);
    assert_eq!(memory.key.len(), "memory-".len() + 16);
    assert!(memory.plan.is_some());
    assert!(memory.definition.audit.include_destructive);
    assert_eq!(memory.definition.audit.timeout_ms, 20_000);
    assert_eq!(
        memory.definition.stores[0].file.as_deref(),
        Some("memory.jsonl")
    );
    assert_eq!(
        time.definition.command,
        ["{install}/venv/bin/python", "-m", "mcp_server_time"]
    );
    assert_eq!(time.definition.audit.settle_ms, 0);
    assert!(time.definition.lock.is_some());
    assert_eq!(tree.definition.command, ["my-server", "--root", "{fs}"]);
    assert!(tree.definition.package.is_none());
    assert!(tree.fixtures[0].as_ref().is_some_and(|f| f.is_dir()));
    assert!(
        tree.definition.stores[0]
            .fixture
            .as_ref()
            .is_some_and(|f| f.digest.starts_with("blake3:"))
    );
}

#[test]
fn keys_follow_the_definition_and_not_the_machine() {
    let a = sweep_dir(GOOD);
    let b = sweep_dir(GOOD);
    let keys = |dir: &tempfile::TempDir| -> Vec<String> {
        load(dir)
            .unwrap_or_else(|e| panic!("{e}"))
            .targets
            .into_iter()
            .map(|t| t.key)
            .collect()
    };
    let first = keys(&a);
    assert_eq!(first, keys(&b), "another directory, the same keys");
    // A plan's content is part of the definition.
    write(
        &b.path().join("plans/one.toml"),
        "[[call]]\ntool = \"search_nodes\"\n",
    );
    let second = keys(&b);
    assert_ne!(first[0], second[0]);
    assert_eq!(first[1..], second[1..]);
    // So is a fixture's.
    write(&b.path().join("fixtures/tree/docs/readme.md"), "# other\n");
    assert_ne!(second[2], keys(&b)[2]);
}

/// The error a sweep file gives, which must be one line.
fn error(sweep: &str) -> String {
    let dir = sweep_dir(sweep);
    let message = load(&dir).err().unwrap_or_default();
    assert!(!message.is_empty(), "refused: {sweep}");
    assert!(!message.contains('\n'), "one line: {message}");
    message
}

#[test]
fn a_malformed_file_is_one_line_with_its_place() {
    let message = error("[[target]]\nname = \"x\"\npakage = \"npm:a@1.0.0\"\n");
    assert!(message.contains("SWEEP.toml:3:1: "), "{message}");
    assert!(message.contains("pakage"), "{message}");
    let message = error("name = \n");
    assert!(message.contains("SWEEP.toml:1:"), "{message}");
    assert!(error("name = \"x\"\n").ends_with("it lists no [[target]]"));
}

#[test]
fn mistakes_in_a_target_name_the_target() {
    let cases = [
        ("package = \"npm:a@^1.0.0\"\nbin = \"a\"", "must be exact"),
        ("package = \"npm:a@latest\"\nbin = \"a\"", "must be exact"),
        (
            "package = \"pypi:a>=1\"\nmodule = \"a\"",
            "pypi:NAME==VERSION",
        ),
        ("package = \"cargo:a@1.0.0\"", "expected npm:NAME@VERSION"),
        ("package = \"npm:a@1.0.0\"", "one of bin, module or launch"),
        (
            "package = \"npm:a@1.0.0\"\nmodule = \"a\"",
            "module goes with a pypi",
        ),
        ("package = \"npm:a@1.0.0\"\ncommand = [\"a\"]", "not both"),
        ("command = [\"a\", \"{install}/x\"]", "a command has none"),
        ("command = [\"a\", \"{mme}\"]", "{mme} names no store"),
        ("command = []", "empty"),
        ("command = [\"a\"]\nbin = \"b\"", "given whole"),
        (
            "command = [\"a\"]\nplan = \"plans/none.toml\"",
            "plans/none.toml",
        ),
        ("command = [\"a\"]\nera = \"future\"", "era"),
        ("command = [\"a\"]\ntimeout_ms = 0", "timeout_ms"),
        (
            "command = [\"a\"]\nclock_text = [\"sundial\"]",
            "clock_text",
        ),
        (
            "package = \"npm:@modelcontextprotocol/server-memory@2026.8.30\"\nbin = \"m\"\nlock = \"lock/package-lock.json\"",
            "does not pin",
        ),
        (
            "package = \"pypi:mcp-server-time==1.0\"\nmodule = \"m\"\nlock = \"reqs.txt\"",
            "does not pin",
        ),
        (
            "command = [\"a\"]\n[[target.store]]\nname = \"jail\"\nkind = \"fs\"",
            "reserved",
        ),
        (
            "command = [\"a\"]\n[[target.store]]\nname = \"s\"\nkind = \"csv\"",
            "unknown kind",
        ),
        (
            "command = [\"a\"]\n[[target.store]]\nname = \"s\"\nkind = \"fs\"\nfixture = \"nowhere\"",
            "not a directory",
        ),
        (
            "command = [\"a\"]\n[[target.store]]\nname = \"s\"\nkind = \"jsonl\"\nclock_columns = [\"t.c\"]",
            "clock_columns go with a sqlite",
        ),
        (
            "command = [\"a\"]\n[[target.store]]\nname = \"s\"\nkind = \"sqlite\"\nfile = \"../x.db\"",
            "plain file name",
        ),
    ];
    for (body, expected) in cases {
        let message = error(&format!("[[target]]\nname = \"bad\"\n{body}\n"));
        assert!(
            message.contains("target \"bad\": ") && message.contains(expected),
            "{body}: {message}"
        );
    }
}

#[test]
fn names_must_be_safe_and_unique() {
    let message = error("[[target]]\nname = \"../x\"\ncommand = [\"a\"]\n");
    assert!(message.contains("ASCII letters"), "{message}");
    let message = error(
        "[[target]]\nname = \"a\"\ncommand = [\"a\"]\n[[target]]\nname = \"a\"\ncommand = [\"b\"]\n",
    );
    assert!(message.contains("two targets are named \"a\""), "{message}");
    let message = error("max_attempts = 0\n[[target]]\nname = \"a\"\ncommand = [\"a\"]\n");
    assert!(message.contains("max_attempts"), "{message}");
}

#[test]
fn package_coordinates_parse_scopes_and_exact_versions() {
    let npm = parse_package("npm:@scope/pkg@1.2.3-beta.1+build.5");
    assert_eq!(
        npm.map(|p| (p.name, p.version)),
        Ok(("@scope/pkg".to_owned(), "1.2.3-beta.1+build.5".to_owned()))
    );
    assert!(parse_package("npm:pkg@1.2").is_err());
    assert!(parse_package("npm:@scope@1.2.3").is_err());
    assert!(parse_package("npm:@1.2.3").is_err());
    assert!(parse_package("pypi:mcp_server.git==2026.10.19").is_ok());
    assert!(parse_package("pypi:a==1.*").is_err());
    assert!(parse_package("pypi:a==").is_err());
}
