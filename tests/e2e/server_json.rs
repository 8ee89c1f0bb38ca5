//! `audit --server-json`: an official MCP registry entry audited end to
//! end, and what the entry cannot run refused in one line before anything
//! is installed or launched.
//!
//! No registry is reached here: the entry's npm package is put into the
//! pinned cache as a finished install would leave it (the sweep's layout,
//! its marker, npm's lock with an integrity), so the audit takes the warm
//! cache's path. Its program is a wrapper that says on stderr which key it
//! started with and runs the command line the entry's arguments make: the
//! built-in testbed on the declared store. (Installing from a registry:
//! tests/published/audit_package.rs.)

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use witness_model::sweep::{Ecosystem, Package};
use witness_sweep::install::{Installs, MARKER};

// No credential shape the redactor knows of: only being declared secret hides it.
const SECRET: &str = "correct horse battery staple e2e";
const PACKAGE: &str = "mcp-witness-e2e-notes";

fn witness(cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(args)
        .env("MCP_WITNESS_INSTALLS", cache)
        // An install this test did not expect fails at once.
        .env("MCP_WITNESS_NPM", "/nonexistent/npm-for-this-test")
        .env("MCP_WITNESS_PYTHON", "/nonexistent/python-for-this-test")
        .output()
        .expect("mcp-witness runs")
}

/// An npm package installed into `cache` as `npm install` and the audit's
/// install leave one: its program is `notes-server`.
fn seed_install(cache: &Path) -> PathBuf {
    let package = Package {
        ecosystem: Ecosystem::Npm,
        name: PACKAGE.into(),
        version: "1.0.0".into(),
    };
    let dir = Installs {
        root: cache.to_path_buf(),
    }
    .dir_for_package(&package);
    let module = dir.join("node_modules").join(PACKAGE);
    std::fs::create_dir_all(&module).expect("module dir");
    std::fs::create_dir_all(dir.join("node_modules/.bin")).expect("bin dir");
    std::fs::write(
        module.join("package.json"),
        json!({"name": PACKAGE, "version": "1.0.0", "bin": {"notes-server": "server.sh"}})
            .to_string(),
    )
    .expect("package.json");
    let program = dir.join("node_modules/.bin/notes-server");
    std::fs::write(
        &program,
        "#!/bin/sh\necho \"notes-server: started with key $NOTES_API_KEY, level $LOG_LEVEL\" >&2\nexec \"$@\"\n",
    )
    .expect("program");
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::write(
        dir.join("package-lock.json"),
        json!({"packages": {format!("node_modules/{PACKAGE}"): {"integrity": "sha512-e2e"}}})
            .to_string(),
    )
    .expect("lock");
    std::fs::write(
        dir.join(MARKER),
        json!({"package": package.coordinate()}).to_string(),
    )
    .expect("marker");
    dir
}

/// The entry: an OCI image first (not installable here), then the npm
/// package, whose arguments run this binary's testbed on store `{db}`.
fn write_entry(dir: &Path) -> PathBuf {
    let entry = json!({
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "name": "io.github.mcp-witness/e2e-notes",
        "description": "Notes in a SQLite file",
        "version": "1.0.0",
        "repository": {"url": "https://example.invalid/notes", "source": "github"},
        "packages": [
            {"registryType": "oci", "identifier": "example/notes", "version": "1.0.0",
             "transport": {"type": "stdio"}},
            {"registryType": "npm", "identifier": PACKAGE, "version": "1.0.0",
             "runtimeHint": "npx", "transport": {"type": "stdio"},
             "packageArguments": [
                {"type": "positional", "value": env!("CARGO_BIN_EXE_mcp-witness")},
                {"type": "positional", "value": "testbed"},
                {"type": "positional", "value": "serve"},
                {"type": "named", "name": "--variant", "value": "{variant}",
                 "variables": {"variant": {"default": "honest"}}},
                {"type": "named", "name": "--store", "value": "{db}"},
             ],
             "environmentVariables": [
                {"name": "NOTES_API_KEY", "isRequired": true, "isSecret": true},
                {"name": "LOG_LEVEL", "default": "info"},
             ]},
        ],
        "_meta": {"io.modelcontextprotocol.registry/official": {"isLatest": true}},
    });
    let path = dir.join("server.json");
    std::fs::write(&path, serde_json::to_string_pretty(&entry).expect("json")).expect("entry");
    path
}

fn report(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not a report ({e}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn a_registry_entry_is_installed_from_the_cache_launched_as_it_says_and_its_secret_never_shown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("installs");
    seed_install(&cache);
    let entry = write_entry(dir.path());
    let store = format!("db=sqlite:{}", dir.path().join("notes.db").display());
    let env = format!("NOTES_API_KEY={SECRET}");
    let common = [
        "audit",
        "--server-json",
        entry.to_str().expect("utf-8 path"),
        "--store",
        &store,
        "--env",
        &env,
        "--format",
        "json",
        "--deterministic",
        "--settle-ms",
        "0",
        "--progress",
        "off",
    ];
    let output = witness(&cache, &common);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let doc = report(&output);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stderr}\n{:#}",
        doc["checks"]
    );
    assert!(
        !stderr.contains("installing"),
        "the warm cache is used: {stderr}"
    );
    let target = &doc["target"];
    assert_eq!(
        target["server_json"],
        json!({"name": "io.github.mcp-witness/e2e-notes", "version": "1.0.0", "package": 1}),
        "the first installable package, and where it came from"
    );
    assert_eq!(target["label"], format!("npm:{PACKAGE}@1.0.0"));
    assert_eq!(target["package"]["integrity"], "sha512-e2e");
    assert_eq!(target["package"]["entry"], "notes-server");
    let command: Vec<&str> = target["command"]
        .as_array()
        .expect("command")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(command[0], "{install}/node_modules/.bin/notes-server");
    assert_eq!(
        &command[2..],
        ["testbed", "serve", "--variant", "honest", "--store", "{db}"]
    );
    assert_eq!(target["env"], json!(["NOTES_API_KEY", "LOG_LEVEL"]));
    // The server ran on the jailed copy of the store the entry's {db} names.
    assert!(
        doc["calls"].as_array().is_some_and(|calls| calls
            .iter()
            .any(|c| { c["effects"].as_array().is_some_and(|e| !e.is_empty()) })),
        "writes were observed on the declared store"
    );
    // The server printed its secret on stderr; the report kept the line,
    // not the secret.
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("notes-server: started with key"),
        "stderr kept"
    );
    assert!(text.contains("level info"), "LOG_LEVEL took its default");
    assert!(!text.contains(SECRET), "the secret is redacted everywhere");

    // --var fills the entry's variable: a lying variant fails the audit.
    let mut args = common.to_vec();
    args.extend(["--var", "variant=lie-readonly"]);
    let output = witness(&cache, &args);
    let doc = report(&output);
    assert_eq!(output.status.code(), Some(1), "{:#}", doc["checks"]);
    assert!(
        doc["target"]["command"]
            .as_array()
            .is_some_and(|c| c.iter().any(|w| w == "lie-readonly"))
    );
}

#[test]
fn what_an_entry_cannot_run_is_refused_in_one_line_before_anything_is_installed_or_launched() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The install comes before any launch and makes the cache directory
    // first: no cache directory, nothing installed and nothing launched.
    let npm_package = |extra: serde_json::Value| {
        let mut package = json!({
            "registryType": "npm", "identifier": "@example/notes-server", "version": "1.0.0",
            "transport": {"type": "stdio"},
        });
        if let (Some(p), Some(e)) = (package.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        package
    };
    let cases: [(&str, Value, &[&str], &str); 6] = [
        (
            "missing-secret",
            json!([npm_package(json!({"environmentVariables": [
                {"name": "NOTES_API_KEY", "isRequired": true, "isSecret": true,
                 "default": "your-key-here"}
            ]}))]),
            &[],
            "secret environment variable NOTES_API_KEY has no value: give it with \
             --env NOTES_API_KEY=VALUE (a secret is taken only from --env, never from the file)",
        ),
        (
            "unknown-registry-type",
            json!([{"registryType": "nuget", "identifier": "Example.Notes",
                    "version": "1.0.0", "transport": {"type": "stdio"}}]),
            &[],
            "no package of the entry can be installed here (registryType nuget); \
             mcp-witness installs npm and pypi packages",
        ),
        (
            "chosen-registry-type",
            json!([{"registryType": "oci", "identifier": "example/notes", "version": "1.0.0"},
                   npm_package(json!({}))]),
            &["--package", "0"],
            "package 0: registryType \"oci\" cannot be installed here; \
             mcp-witness installs npm and pypi packages",
        ),
        (
            "no-version",
            json!([{"registryType": "pypi", "identifier": "notes-server"}]),
            &[],
            "package 0: notes-server has no version; an audit installs exactly one version, \
             so the entry must give it",
        ),
        (
            "http-transport",
            json!([npm_package(json!({"transport": {"type": "streamable-http",
                                                 "url": "http://127.0.0.1:8080/mcp"}}))]),
            &[],
            "package 0: transport \"streamable-http\" is not stdio; start the server yourself \
             and audit it with `mcp-witness audit --url URL`",
        ),
        (
            "required-argument",
            json!([npm_package(json!({"packageArguments": [
                {"type": "positional", "valueHint": "database", "isRequired": true}
            ]}))]),
            &[],
            "argument <database> has no value: give it with --var database=VALUE",
        ),
    ];
    for (name, packages, extra, line) in cases {
        let cache = dir.path().join(format!("installs-{name}"));
        let path = dir.path().join(format!("{name}.json"));
        let entry = json!({"name": "io.github.example/notes", "description": "d",
                           "version": "1.0.0", "packages": packages});
        std::fs::write(&path, entry.to_string()).expect("entry");
        let mut args = vec!["audit", "--server-json", path.to_str().expect("utf-8 path")];
        args.extend(extra.iter().copied());
        let output = witness(&cache, &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{name}: {stderr}");
        assert_eq!(
            stderr,
            format!("mcp-witness: --server-json {}: {line}\n", path.display()),
            "{name}"
        );
        assert!(output.stdout.is_empty(), "{name}: no report");
        assert!(!cache.exists(), "{name}: nothing installed or launched");
    }
}

#[test]
fn server_json_conflicts_with_a_command_a_package_and_a_url_and_its_flags_need_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("installs");
    let entry = write_entry(dir.path());
    let entry = entry.to_str().expect("utf-8 path");
    let cases: [&[&str]; 5] = [
        &["audit", "--server-json", entry, "--", "node", "x.js"],
        &["audit", "--server-json", entry, "npm:x@1.0.0"],
        &[
            "audit",
            "--server-json",
            entry,
            "--url",
            "http://127.0.0.1:9/mcp",
        ],
        &["audit", "--package", "1", "--", "node", "x.js"],
        &["audit", "--var", "variant=honest", "npm:x@1.0.0"],
    ];
    for args in cases {
        let output = witness(&cache, args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
        assert!(!cache.exists(), "{args:?}: nothing installed");
    }
}

#[test]
fn a_command_given_no_server_at_all_is_one_line_invalid_invocation() {
    // COMMAND is no longer required by clap (audit's --server-json stands
    // in for it), so every command that launches a server says it itself.
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("installs");
    let cases: [&[&str]; 5] = [
        &["audit"],
        &["plan"],
        &["guidance", "--server", "x"],
        &["connect"],
        &["manifest", "pin"],
    ];
    for args in cases {
        let output = witness(&cache, args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(
            stderr, "mcp-witness: say which server: a COMMAND after --, a PACKAGE, or --url URL\n",
            "{args:?}"
        );
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}
