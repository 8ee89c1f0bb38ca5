//! Protected servers (issue 32): `manifest pin --url` and `audit --url`
//! against tests/fixtures/protected_server.py on loopback, with a static
//! bearer token, with OAuth client credentials and with the authorization
//! code flow with PKCE; and `connect`, the plain client the conformance
//! suite drives. Whatever the client writes (the pin, the audit document,
//! stdout, stderr) holds no token and no secret.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use crate::common::fixture;

/// The fixture, its URL and the file where it logs each token it issues.
struct Protected {
    child: Child,
    url: String,
    log: tempfile::TempDir,
}

impl Protected {
    fn start(mode: &str, key: &str) -> Self {
        let log = tempfile::tempdir().expect("a temporary directory");
        let mut child = Command::new("python3")
            .arg(fixture("protected_server.py"))
            .args([mode, key])
            .arg(log.path().join("tokens"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("the fixture prints its port");
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .expect("PORT n")
            .to_owned();
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            log,
        }
    }

    /// Every access token issued so far.
    fn tokens(&self) -> Vec<String> {
        std::fs::read_to_string(self.log.path().join("tokens"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for Protected {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const SECRET: &str = "cs-7f3a91e2-never-in-a-report";

fn witness(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-witness"));
    command.args(args);
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("mcp-witness runs")
}

/// Asserts that none of `secrets` appears in the outputs or in `files`.
fn assert_no_secret(secrets: &[String], output: &Output, files: &[&Path]) {
    let mut texts = vec![
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ];
    for file in files {
        texts.push(std::fs::read_to_string(file).expect("the file was written"));
    }
    for secret in secrets {
        assert!(!secret.is_empty());
        for text in &texts {
            assert!(!text.contains(secret.as_str()), "a secret was written");
        }
    }
}

fn pin_and_audit(server: &Protected, auth: &[&str], env: &[(&str, &str)], secrets: &[&str]) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let pin = dir.path().join("pin.json");
    let pin_text = pin.to_string_lossy().into_owned();
    let mut args = vec![
        "manifest",
        "pin",
        "--timeout-ms",
        "5000",
        "--url",
        &server.url,
    ];
    args.extend(auth);
    args.extend(["--out", &pin_text]);
    let output = witness(&args, env);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&pin).expect("a pin")).expect("JSON");
    assert_eq!(written["tools"][0]["name"], "echo");

    let store = dir.path().join("files");
    std::fs::create_dir(&store).expect("a store directory");
    let store_arg = format!("files=fs:{}", store.display());
    let out = dir.path().join("out");
    let audit_text = out.to_string_lossy().into_owned();
    let audit = out.join("audit.json");
    let html = out.join("report.html");
    let mut args = vec![
        "audit",
        "--timeout-ms",
        "5000",
        "--url",
        &server.url,
        "--store",
        &store_arg,
        "--format",
        "json",
        "--out",
        &audit_text,
    ];
    args.extend(auth);
    let output = witness(&args, env);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&audit).expect("an audit")).expect("JSON");
    // The call itself got through: with OAuth only after a step-up to the
    // scope tools/call needs.
    assert_eq!(report["calls"][0]["outcome"]["status"], "ok", "{stderr}");
    assert_eq!(
        report["calls"][0]["response"]["content"][0]["text"],
        "witness"
    );

    let mut all: Vec<String> = server.tokens();
    all.extend(secrets.iter().map(|s| s.to_string()));
    assert_no_secret(&all, &output, &[&pin, &audit, &html]);
}

#[test]
fn a_static_bearer_token_comes_from_the_environment_and_is_never_written() {
    let token = "st-0c1d2e3f-static-token";
    let server = Protected::start("bearer", token);
    pin_and_audit(
        &server,
        &["--bearer-env", "PROTECTED_TOKEN"],
        &[("PROTECTED_TOKEN", token)],
        &[token],
    );

    // Without it the server refuses, and the run says so in one line.
    let output = witness(
        &[
            "manifest",
            "pin",
            "--timeout-ms",
            "3000",
            "--url",
            &server.url,
        ],
        &[],
    );
    assert_ne!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("401"), "{stderr}");
    // A wrong token is refused too (the fixture checks it, we do not).
    let output = witness(
        &[
            "manifest",
            "pin",
            "--timeout-ms",
            "3000",
            "--url",
            &server.url,
            "--bearer-env",
            "T",
        ],
        &[("T", "wrong")],
    );
    assert_ne!(output.status.code(), Some(0));
}

#[test]
fn oauth_client_credentials_pin_and_audit_a_protected_server() {
    let server = Protected::start("oauth", SECRET);
    for method in ["basic", "post"] {
        pin_and_audit(
            &server,
            &[
                "--oauth-client-id",
                "witness",
                "--oauth-client-secret-env",
                "OAUTH_SECRET",
                "--oauth-flow",
                "client-credentials",
                "--oauth-token-auth",
                method,
            ],
            &[("OAUTH_SECRET", SECRET)],
            &[SECRET],
        );
    }
    // pin (1 token) and audit (a token, then the step-up's) for each method.
    assert!(server.tokens().len() >= 4, "{:?}", server.tokens().len());
}

#[test]
fn oauth_authorization_code_with_pkce_pins_and_audits_a_protected_server() {
    let server = Protected::start("oauth", SECRET);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let secret_file = dir.path().join("secret");
    std::fs::write(&secret_file, format!("{SECRET}\n")).expect("written");
    let secret_arg = secret_file.to_string_lossy().into_owned();
    pin_and_audit(
        &server,
        &[
            "--oauth-client-id",
            "witness",
            "--oauth-client-secret-file",
            &secret_arg,
        ],
        &[],
        &[SECRET],
    );
}

#[test]
fn a_wrong_client_secret_or_a_missing_variable_is_one_line_and_no_secret() {
    let server = Protected::start("oauth", SECRET);
    let output = witness(
        &[
            "manifest",
            "pin",
            "--timeout-ms",
            "3000",
            "--url",
            &server.url,
            "--oauth-client-id",
            "witness",
            "--oauth-client-secret-env",
            "S",
            "--oauth-flow",
            "client-credentials",
        ],
        &[("S", "not-the-secret-zz9")],
    );
    assert_eq!(output.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("invalid_client"), "{stderr}");
    assert!(!stderr.contains("not-the-secret-zz9"), "{stderr}");
    // An unset variable is refused before anything is contacted.
    let output = witness(
        &[
            "audit",
            "--url",
            &server.url,
            "--bearer-env",
            "MCP_WITNESS_UNSET_VAR_32",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&output.stderr).lines().count(), 1);
    // Credentials mean nothing for a launched server.
    let output = witness(&["plan", "--bearer-env", "PATH", "--", "true"], &[]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn connect_gets_through_with_oauth_and_prints_each_step_but_no_secret() {
    let server = Protected::start("oauth", SECRET);
    // --oauth-flow auto: the fixture lists authorization_code, so that is
    // the flow; the call needs a step-up to mcp:call.
    let output = witness(
        &[
            "connect",
            "--call-tools",
            "--timeout-ms",
            "5000",
            "--oauth-flow",
            "auto",
            "--oauth-client-id",
            "witness",
            "--oauth-client-secret-env",
            "OAUTH_SECRET",
            "--url",
            &server.url,
        ],
        &[("OAUTH_SECRET", SECRET)],
    );
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "handshake: ok: protocol 2025-06-18, server protected",
            "tools/list: ok: 1 tools in 1 pages",
            "tools/call echo: ok: a result",
        ]
    );
    let mut secrets = server.tokens();
    assert!(secrets.len() >= 2, "a token, then the step-up's");
    secrets.push(SECRET.to_owned());
    assert_no_secret(&secrets, &output, &[]);
}

#[test]
fn connect_without_credentials_to_a_protected_server_is_incomplete_in_one_line() {
    let server = Protected::start("oauth", SECRET);
    let output = witness(
        &["connect", "--timeout-ms", "3000", "--url", &server.url],
        &[],
    );
    assert_eq!(output.status.code(), Some(3));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.starts_with("handshake: failed:"), "{stdout}");
    assert!(stdout.contains("401"), "{stdout}");
    // --include-destructive means nothing without --call-tools.
    let output = witness(
        &["connect", "--include-destructive", "--url", &server.url],
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    // A metadata-document id beside --oauth-register must be a URL.
    let output = witness(
        &[
            "connect",
            "--oauth-client-id",
            "plain-id",
            "--oauth-register",
            "--url",
            &server.url,
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
}
