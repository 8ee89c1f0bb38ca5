use serde_json::json;

use super::*;
use witness_model::sweep::Ecosystem;

fn entry(packages: serde_json::Value) -> ServerJson {
    let text = json!({
        "$schema": "https://static.example/schemas/2025-12-11/server.schema.json",
        "name": "io.github.example/notes",
        "description": "Notes in a SQLite file",
        "version": "1.2.0",
        "repository": {"url": "https://example.invalid/notes", "source": "github"},
        "remotes": [{"type": "streamable-http", "url": "https://example.invalid/mcp"}],
        "_meta": {"io.modelcontextprotocol.registry/publisher-provided": {"tool": "x"}},
        "packages": packages,
    })
    .to_string();
    ServerJson::parse(&text).unwrap_or_else(|e| panic!("{e}"))
}

fn npm(extra: serde_json::Value) -> serde_json::Value {
    let mut package = json!({
        "registryType": "npm",
        "identifier": "@example/notes-server",
        "version": "1.2.0",
        "runtimeHint": "npx",
        "transport": {"type": "stdio"},
    });
    if let (Some(p), Some(e)) = (package.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    package
}

fn given(stores: &[&str], vars: &[(&str, &str)], env: &[(&str, &str)]) -> Given {
    let pairs = |list: &[(&str, &str)]| {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    };
    Given {
        stores: stores.iter().map(|s| (*s).to_owned()).collect(),
        vars: pairs(vars),
        env: pairs(env),
    }
}

fn error(doc: &ServerJson, index: Option<usize>, given: &Given) -> String {
    match doc.resolve(index, given) {
        Ok(resolved) => panic!("resolved, but should not: {resolved:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn an_entry_is_read_bare_or_as_the_registry_serves_it_and_unknown_fields_are_ignored() {
    let doc = entry(json!([npm(json!({}))]));
    assert_eq!(doc.name, "io.github.example/notes");
    assert_eq!(doc.version.as_deref(), Some("1.2.0"));
    assert_eq!(doc.packages[0].runtime_hint.as_deref(), Some("npx"));
    let wrapped = json!({
        "server": {"name": "io.github.example/notes", "description": "d", "version": "1.2.0",
                   "packages": [npm(json!({}))]},
        "_meta": {"io.modelcontextprotocol.registry/official": {"isLatest": true}},
    });
    let inner = ServerJson::parse(&wrapped.to_string()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(inner.name, doc.name);
    assert_eq!(inner.packages.len(), 1);
    let bad = ServerJson::parse(r#"{"description": "no name"}"#).map(|_| ());
    assert!(bad.is_err_and(|e| e.to_string().starts_with("not a server.json entry: ")));
    let bad = ServerJson::parse("{").map(|_| ());
    assert!(bad.is_err_and(|e| !e.to_string().contains('\n')));
}

#[test]
fn an_npm_and_a_pypi_package_are_the_coordinates_audit_installs() {
    let doc = entry(json!([
        {"registryType": "oci", "identifier": "example/notes", "version": "1.2.0",
         "transport": {"type": "stdio"}},
        npm(json!({})),
        {"registryType": "pypi", "identifier": "notes-server", "version": "0.4.1"},
    ]));
    let first = doc
        .resolve(None, &Given::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        first.index, 1,
        "the first installable package, not the oci one"
    );
    assert_eq!(
        first.package.coordinate(),
        "npm:@example/notes-server@1.2.0"
    );
    let pypi = doc
        .resolve(Some(2), &Given::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pypi.package.ecosystem, Ecosystem::Pypi);
    assert_eq!(pypi.package.coordinate(), "pypi:notes-server==0.4.1");
    assert!(pypi.args.is_empty() && pypi.env.is_empty());
}

#[test]
fn an_unknown_registry_type_no_version_and_a_network_transport_are_refused() {
    let doc = entry(json!([
        {"registryType": "oci", "identifier": "example/notes", "version": "1.2.0"},
        {"registryType": "nuget", "identifier": "Example.Notes", "version": "1.2.0"},
    ]));
    assert_eq!(
        error(&doc, None, &Given::default()),
        "no package of the entry can be installed here (registryType nuget, oci); \
         mcp-witness installs npm and pypi packages"
    );
    assert_eq!(
        error(&doc, Some(0), &Given::default()),
        "package 0: registryType \"oci\" cannot be installed here; \
         mcp-witness installs npm and pypi packages"
    );
    assert_eq!(
        error(&doc, Some(2), &Given::default()),
        "--package 2: the entry lists 2 package(s), numbered from 0"
    );
    let unpinned = entry(json!([{"registryType": "npm", "identifier": "@example/notes-server"}]));
    assert_eq!(
        error(&unpinned, None, &Given::default()),
        "package 0: @example/notes-server has no version; an audit installs exactly one \
         version, so the entry must give it"
    );
    let range = entry(json!([npm(json!({"version": "^1.2.0"}))]));
    assert!(error(&range, None, &Given::default()).contains("the version must be exact"));
    let latest = entry(json!([npm(json!({"version": "latest"}))]));
    assert!(error(&latest, None, &Given::default()).contains("the version must be exact"));
    let http = entry(json!([npm(json!({
        "transport": {"type": "streamable-http", "url": "http://localhost:{port}/mcp"}
    }))]));
    assert_eq!(
        error(&http, None, &Given::default()),
        "package 0: transport \"streamable-http\" is not stdio; start the server yourself \
         and audit it with `mcp-witness audit --url URL`"
    );
    let remote_only = entry(json!([]));
    assert!(error(&remote_only, None, &Given::default()).contains("--url"));
}

#[test]
fn arguments_are_built_in_order_positional_and_named_with_defaults() {
    let doc = entry(json!([npm(json!({"packageArguments": [
        {"type": "positional", "value": "serve"},
        {"type": "named", "name": "--db", "value": "{db}"},
        {"type": "named", "name": "--mode=", "default": "local"},
        {"type": "named", "name": "--port", "description": "optional, no default"},
        {"type": "named", "name": "-v"  , "value": "2"},
        {"type": "positional", "valueHint": "root", "default": "/srv/notes"},
        {"type": "positional", "valueHint": "extra", "isRepeated": true},
    ]}))]));
    let resolved = doc
        .resolve(
            None,
            &given(&["db"], &[("extra", "a"), ("extra", "b")], &[]),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        resolved.args,
        [
            "serve",
            "--db",
            "{db}",
            "--mode=local",
            "-v",
            "2",
            "/srv/notes",
            "a",
            "b"
        ]
    );
    // --var names a valueless argument by its valueHint or its flag name.
    let resolved = doc
        .resolve(
            None,
            &given(
                &["db"],
                &[("root", "/data"), ("port", "7"), ("mode", "proxy")],
                &[],
            ),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        resolved.args,
        [
            "serve",
            "--db",
            "{db}",
            "--mode=proxy",
            "--port",
            "7",
            "-v",
            "2",
            "/data"
        ]
    );
}

#[test]
fn placeholders_resolve_from_a_store_then_a_var_then_the_variable() {
    let doc = entry(json!([npm(json!({
        "packageArguments": [{
            "type": "named", "name": "--file", "value": "{dir}/{file}.{ext}",
            "variables": {
                "dir": {"default": "/tmp"},
                "file": {"isRequired": true},
                "ext": {"value": "jsonl", "default": "json"},
            },
        }],
        "environmentVariables": [
            {"name": "NOTES_ROOT", "value": "{jail}/notes"},
            {"name": "LOG_LEVEL", "default": "info"},
            {"name": "NOTES_FILE", "value": "{mem}"},
        ],
    }))]));
    // A store named like the variable wins and is left for the jail.
    let resolved = doc
        .resolve(
            None,
            &given(&["dir", "mem"], &[("file", "notes"), ("dir", "/x")], &[]),
        )
        .map(|r| r.args);
    assert!(
        resolved.is_err_and(|e| e.to_string().contains("--var dir")),
        "a --var the store shadowed is reported unused"
    );
    let resolved = doc
        .resolve(None, &given(&["dir", "mem"], &[("file", "notes")], &[]))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(resolved.args, ["--file", "{dir}/notes.jsonl"]);
    assert_eq!(
        resolved.env,
        [
            ("NOTES_ROOT".to_owned(), "{jail}/notes".to_owned()),
            ("LOG_LEVEL".to_owned(), "info".to_owned()),
            ("NOTES_FILE".to_owned(), "{mem}".to_owned()),
        ]
    );
    // No store: the --var, else the variable's default.
    let resolved = doc
        .resolve(None, &given(&["mem"], &[("file", "n"), ("ext", "db")], &[]))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(resolved.args, ["--file", "/tmp/n.db"]);
    // A required variable nobody gave, and a placeholder the entry never
    // declared, are refused by name.
    assert_eq!(
        error(&doc, None, &given(&["mem"], &[], &[])),
        "variable {file} of argument --file has no value: give it with --var file=VALUE, \
         or --store file=KIND:PATH for a store's path"
    );
    assert_eq!(
        error(&doc, None, &given(&[], &[("file", "n")], &[])),
        "variable {mem} of environment variable NOTES_FILE has no value: give it with \
         --var mem=VALUE, or --store mem=KIND:PATH for a store's path"
    );
}

#[test]
fn the_users_env_wins_and_other_env_passes_through_in_order() {
    let doc = entry(json!([npm(json!({"environmentVariables": [
        {"name": "MEMORY_FILE_PATH", "value": "{mem}"},
        {"name": "LOG_LEVEL", "default": "info"},
        {"name": "OPTIONAL_URL", "description": "unset unless given"},
    ]}))]));
    let resolved = doc
        .resolve(
            None,
            &given(&["mem"], &[], &[("EXTRA", "1"), ("LOG_LEVEL", "debug")]),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        resolved.env,
        [
            ("MEMORY_FILE_PATH".to_owned(), "{mem}".to_owned()),
            ("LOG_LEVEL".to_owned(), "debug".to_owned()),
            ("EXTRA".to_owned(), "1".to_owned()),
        ]
    );
    assert!(resolved.secrets.is_empty());
}

#[test]
fn a_required_input_or_secret_nobody_gave_is_refused_and_a_given_secret_is_kept_for_redaction() {
    let doc = entry(json!([npm(json!({
        "packageArguments": [
            {"type": "positional", "valueHint": "database", "isRequired": true},
            {"type": "named", "name": "--token", "isSecret": true, "default": "changeme"},
        ],
        "environmentVariables": [
            {"name": "NOTES_API_KEY", "isRequired": true, "isSecret": true,
             "default": "your-key-here"},
            {"name": "NOTES_OPTIONAL_KEY", "isSecret": true, "value": "placeholder"},
            {"name": "NOTES_REGION", "isRequired": true},
        ],
    }))]));
    assert_eq!(
        error(&doc, None, &Given::default()),
        "argument <database> has no value: give it with --var database=VALUE"
    );
    assert_eq!(
        error(&doc, None, &given(&[], &[("database", "main")], &[])),
        "secret environment variable NOTES_API_KEY has no value: give it with \
         --env NOTES_API_KEY=VALUE (a secret is taken only from --env, never from the file)"
    );
    assert_eq!(
        error(
            &doc,
            None,
            &given(
                &[],
                &[("database", "main")],
                &[("NOTES_API_KEY", "sk-live-0123456789")]
            )
        ),
        "environment variable NOTES_REGION has no value: give it with --env NOTES_REGION=VALUE"
    );
    let resolved = doc
        .resolve(
            None,
            &given(
                &[],
                &[("database", "main"), ("token", "tok-abcdefghijkl")],
                &[
                    ("NOTES_API_KEY", "sk-live-0123456789"),
                    ("NOTES_REGION", "eu"),
                ],
            ),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    // The optional secret was not given: unset, never its file value; the
    // secret argument's default was never used.
    assert_eq!(resolved.args, ["main", "--token", "tok-abcdefghijkl"]);
    assert_eq!(
        resolved.env,
        [
            ("NOTES_API_KEY".to_owned(), "sk-live-0123456789".to_owned()),
            ("NOTES_REGION".to_owned(), "eu".to_owned()),
        ]
    );
    assert_eq!(resolved.secrets, ["tok-abcdefghijkl", "sk-live-0123456789"]);
    let without_token = doc
        .resolve(
            None,
            &given(
                &[],
                &[("database", "main")],
                &[
                    ("NOTES_API_KEY", "sk-live-0123456789"),
                    ("NOTES_REGION", "eu"),
                ],
            ),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        without_token.args,
        ["main"],
        "an optional secret is left out"
    );
}

#[test]
fn a_var_the_entry_never_names_or_gives_twice_for_one_value_is_refused() {
    let doc = entry(json!([npm(json!({"packageArguments": [
        {"type": "positional", "valueHint": "root", "default": "/srv"},
    ]}))]));
    assert_eq!(
        error(&doc, None, &given(&[], &[("rooot", "/x")], &[])),
        "--var rooot: nothing in the entry's package takes it \
         (no {rooot} placeholder, and no argument rooot without a value)"
    );
    assert_eq!(
        error(
            &doc,
            None,
            &given(&[], &[("root", "/x"), ("root", "/y")], &[])
        ),
        "--var root: given 2 times, but argument <root> takes one value"
    );
}

#[test]
fn a_value_given_for_an_input_with_choices_must_be_one_of_them() {
    let doc = entry(json!([npm(json!({
        "packageArguments": [
            {"type": "named", "name": "--mode", "choices": ["local", "cached"], "default": "local"},
            {"type": "named", "name": "-e", "value": "DB_TYPE={db_type}",
             "variables": {"db_type": {"choices": ["sqlite", "duckdb"], "isRequired": true}}},
        ],
        "environmentVariables": [
            {"name": "SSL_MODE", "choices": ["disable", "require"], "default": "disable"},
            {"name": "NOTES_PIN", "isSecret": true, "choices": ["1111", "2222"]},
        ],
    }))]));
    let ok = doc
        .resolve(
            None,
            &given(&[], &[("db_type", "duckdb")], &[("SSL_MODE", "require")]),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ok.args, ["--mode", "local", "-e", "DB_TYPE=duckdb"]);
    assert_eq!(
        error(&doc, None, &given(&[], &[("db_type", "mysql")], &[])),
        "variable {db_type} of argument -e: \"mysql\" is not one of its choices (sqlite, duckdb)"
    );
    assert_eq!(
        error(
            &doc,
            None,
            &given(&[], &[("db_type", "sqlite"), ("mode", "proxy")], &[])
        ),
        "argument --mode: \"proxy\" is not one of its choices (local, cached)"
    );
    assert_eq!(
        error(
            &doc,
            None,
            &given(&[], &[("db_type", "sqlite")], &[("NOTES_PIN", "9999")])
        ),
        "environment variable NOTES_PIN: the value given is not one of its choices (1111, 2222)"
    );
}
