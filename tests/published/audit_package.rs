//! `audit PACKAGE`: a published package installed into the sweep's pinned
//! cache and audited in the jail, in the forms a README gives
//! (`npm:…`/`pypi:…`, `npx …`/`uvx …`), from a fresh cache and again from
//! the warm one; an official MCP registry entry (`--server-json`) installed
//! and audited as its npm package is; and the one-line errors of a package
//! that does not exist, a version that does not exist and a package with
//! nothing to run.
//!
//! It needs npm, python3 and a package registry: CI runs it always
//! (`CI=true`); elsewhere it runs with `MCP_WITNESS_PACKAGE_AUDIT=1`, and
//! otherwise says it skipped.
#![allow(
    clippy::print_stderr,
    reason = "a test says on stderr what it skipped or found, where cargo test shows it"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const MEMORY: &str = "@modelcontextprotocol/server-memory@2026.8.31";
const TIME: &str = "mcp-server-time==2026.10.19";

fn wanted() -> bool {
    let ci = std::env::var("CI").as_deref() == Ok("true");
    let asked = std::env::var("MCP_WITNESS_PACKAGE_AUDIT").as_deref() == Ok("1");
    if !(ci || asked) {
        eprintln!(
            "SKIPPED: audit PACKAGE installs from a registry; run it with \
             MCP_WITNESS_PACKAGE_AUDIT=1 cargo test --test published audit_package (CI always does)"
        );
    }
    ci || asked
}

/// A cache of the test's own, emptied first: the first audit installs.
fn fresh_cache(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("package-cache-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn witness(cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(args)
        .env("MCP_WITNESS_INSTALLS", cache)
        .env_remove("MCP_WITNESS_NPM")
        .env_remove("MCP_WITNESS_PYTHON")
        .output()
        .expect("mcp-witness runs")
}

fn report(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn installed_notice(output: &Output) -> bool {
    String::from_utf8_lossy(&output.stderr).contains("mcp-witness: installing ")
}

/// A concluded audit of the package, its pin in the report.
fn assert_audited(output: &Output, name: &str, version: &str, entry: &str, hash: &str) -> Value {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let code = output.status.code();
    let doc = report(output);
    assert!(matches!(code, Some(0 | 1 | 3)), "{code:?}: {stderr}");
    assert_eq!(
        doc["complete"], true,
        "the audit finished: {stderr}\n{}",
        doc["findings"]
    );
    let pin = &doc["target"]["package"];
    assert_eq!(pin["name"], name, "{pin}");
    assert_eq!(pin["version"], version, "{pin}");
    assert_eq!(pin["entry"], entry, "{pin}");
    let integrity = pin["integrity"].as_str().unwrap_or_default();
    assert!(integrity.starts_with(hash), "integrity pinned: {pin}");
    let program = doc["target"]["command"][0].as_str().unwrap_or_default();
    assert!(
        program.starts_with("{install}/"),
        "the cache's place is not recorded: {program}"
    );
    assert!(
        doc["tools"].as_array().is_some_and(|t| !t.is_empty()),
        "the server answered tools/list: {stderr}"
    );
    doc
}

#[test]
fn an_npm_package_is_audited_from_a_fresh_cache_and_a_warm_one_in_both_forms() {
    if !wanted() {
        return;
    }
    let cache = fresh_cache("memory");
    let store = tempfile::tempdir().expect("tempdir");
    let store_flag = format!("mem=jsonl:{}", store.path().join("memory.jsonl").display());
    let common = [
        "--store",
        &store_flag,
        "--env",
        "MEMORY_FILE_PATH={mem}",
        "--format",
        "json",
        "--deterministic",
        "--progress",
        "off",
    ];
    let first_target = format!("npm:{MEMORY}");
    let mut args = vec!["audit", first_target.as_str()];
    args.extend(common);
    let fresh = witness(&cache, &args);
    assert!(installed_notice(&fresh), "a fresh cache installs");
    let first = assert_audited(
        &fresh,
        "@modelcontextprotocol/server-memory",
        "2026.8.31",
        "mcp-server-memory",
        "sha512-",
    );
    assert!(
        first["coverage"]["exercised"]
            .as_u64()
            .is_some_and(|n| n > 0),
        "tools were called: {}",
        first["coverage"]
    );
    // The line a README gives, after --: read, installed nowhere new, run.
    let mut args = vec!["audit"];
    args.extend(common);
    args.extend(["--", "npx", "-y", MEMORY]);
    let warm = witness(&cache, &args);
    assert!(!installed_notice(&warm), "the warm cache is reused");
    let second = assert_audited(
        &warm,
        "@modelcontextprotocol/server-memory",
        "2026.8.31",
        "mcp-server-memory",
        "sha512-",
    );
    assert_eq!(first["target"], second["target"]);
    assert_eq!(
        first["checks"], second["checks"],
        "the same package, the same verdicts"
    );
}

#[test]
fn a_pypi_package_is_audited_from_a_fresh_cache_and_a_warm_one_in_both_forms() {
    if !wanted() {
        return;
    }
    let cache = fresh_cache("time");
    // A generous timeout: a fresh venv's first start compiles its modules.
    let common = [
        "--format",
        "json",
        "--deterministic",
        "--progress",
        "off",
        "--timeout-ms",
        "60000",
    ];
    let first_target = format!("pypi:{TIME}");
    let mut args = vec!["audit", first_target.as_str()];
    args.extend(common);
    let fresh = witness(&cache, &args);
    assert!(installed_notice(&fresh), "a fresh cache installs");
    let first = assert_audited(
        &fresh,
        "mcp-server-time",
        "2026.10.19",
        "mcp-server-time",
        "sha256=",
    );
    let uvx = format!("uvx {TIME}");
    let mut args = vec!["audit", uvx.as_str()];
    args.extend(common);
    let warm = witness(&cache, &args);
    assert!(!installed_notice(&warm), "the warm cache is reused");
    let second = assert_audited(
        &warm,
        "mcp-server-time",
        "2026.10.19",
        "mcp-server-time",
        "sha256=",
    );
    assert_eq!(first["target"], second["target"]);
}

#[test]
fn a_registry_entry_is_audited_as_its_npm_package_is() {
    if !wanted() {
        return;
    }
    let cache = fresh_cache("server-json");
    let dir = tempfile::tempdir().expect("tempdir");
    let (name, version) = MEMORY.rsplit_once('@').expect("name@version");
    // As the registry lists such a server: a container image and the npm
    // package, the file's place from a variable the user fills with a store.
    let entry = serde_json::json!({
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "name": "io.github.modelcontextprotocol/server-memory",
        "description": "Knowledge graph memory kept in a JSON-lines file",
        "version": version,
        "packages": [
            {"registryType": "oci", "identifier": "mcp/memory", "version": version,
             "transport": {"type": "stdio"}},
            {"registryType": "npm", "identifier": name, "version": version,
             "runtimeHint": "npx", "transport": {"type": "stdio"},
             "environmentVariables": [
                {"name": "MEMORY_FILE_PATH", "value": "{mem}",
                 "description": "Where the graph is kept"}
             ]},
        ],
    });
    let path = dir.path().join("server.json");
    std::fs::write(&path, entry.to_string()).expect("entry");
    let store_flag = format!("mem=jsonl:{}", dir.path().join("memory.jsonl").display());
    let common = [
        "--store",
        &store_flag,
        "--format",
        "json",
        "--deterministic",
        "--progress",
        "off",
    ];
    let mut args = vec!["audit", "--server-json", path.to_str().expect("utf-8")];
    args.extend(common);
    let fresh = witness(&cache, &args);
    assert!(installed_notice(&fresh), "a fresh cache installs");
    let doc = assert_audited(&fresh, name, version, "mcp-server-memory", "sha512-");
    assert_eq!(
        doc["target"]["server_json"],
        serde_json::json!({"name": "io.github.modelcontextprotocol/server-memory",
                           "version": version, "package": 1})
    );
    assert_eq!(
        doc["target"]["env"],
        serde_json::json!(["MEMORY_FILE_PATH"])
    );
    let wrote_the_store = doc["calls"].as_array().is_some_and(|calls| {
        calls.iter().any(|c| {
            c["effects"]
                .as_array()
                .is_some_and(|e| e.iter().any(|e| e["store"] == "mem"))
        })
    });
    assert!(wrote_the_store, "MEMORY_FILE_PATH was the jailed store");
    // The same package by its coordinate: the same install, pin and verdicts.
    let coordinate = format!("npm:{MEMORY}");
    let mut args = vec![
        "audit",
        coordinate.as_str(),
        "--env",
        "MEMORY_FILE_PATH={mem}",
    ];
    args.extend(common);
    let warm = witness(&cache, &args);
    assert!(
        !installed_notice(&warm),
        "the entry's install is the package's"
    );
    let plain = assert_audited(&warm, name, version, "mcp-server-memory", "sha512-");
    assert_eq!(doc["target"]["package"], plain["target"]["package"]);
    assert_eq!(doc["target"]["command"], plain["target"]["command"]);
    assert_eq!(doc["checks"], plain["checks"]);
}

/// The error lines on stderr: everything but the install notice.
fn error_lines(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|l| !l.starts_with("mcp-witness: installing "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_bad_name_a_bad_version_and_a_package_with_no_bin_are_one_line_errors() {
    if !wanted() {
        return;
    }
    let cache = fresh_cache("errors");
    let cases = [
        // No such package: the registry says so; nothing was launched.
        (
            "npm:@mcp-witness-no-such-scope/no-such-server@1.0.0",
            3,
            "cannot install",
        ),
        (
            "pypi:mcp-witness-no-such-server-zz==1.0.0",
            3,
            "cannot install",
        ),
        // A real package at a version it never had.
        (
            "npm:@modelcontextprotocol/server-memory@0.0.1",
            3,
            "cannot install",
        ),
        ("pypi:mcp-server-time==0.0.1", 3, "cannot install"),
        // A library: it installs, and declares nothing to run.
        ("npm:is-number@7.0.0", 2, "declares no bin"),
    ];
    for (target, code, words) in cases {
        let output = witness(&cache, &["audit", target, "--progress", "off"]);
        let lines = error_lines(&output);
        assert_eq!(output.status.code(), Some(code), "{target}: {lines:?}");
        assert_eq!(lines.len(), 1, "{target}: one line: {lines:?}");
        assert!(lines[0].contains(words), "{target}: {lines:?}");
        assert!(output.stdout.is_empty(), "{target}: no report");
    }
}
