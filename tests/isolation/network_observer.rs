//! The network observer end to end: what a jailed server reaches for is
//! recorded and attributed to its call, EFF-04 is judged on it, and
//! nothing leaves the machine while it happens.

use std::net::{IpAddr, Ipv4Addr, TcpListener, UdpSocket};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

fn binary() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-witness"));
    cmd.stdin(Stdio::null());
    cmd
}

fn report_of(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not a report ({e}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// An audit of the testbed variant, as JSON, and its exit code.
fn audit_testbed(variant: &str, extra: &[&str]) -> (i32, Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("notes.db");
    let output = binary()
        .args(["audit", "--format", "json", "--settle-ms", "0"])
        .arg(format!("--store=db=sqlite:{}", store.display()))
        .args(extra)
        .args([
            "--",
            "mcp-witness",
            "testbed",
            "serve",
            "--variant",
            variant,
        ])
        .args(["--store", "{db}"])
        .output()
        .expect("mcp-witness runs");
    (output.status.code().unwrap_or(-1), report_of(&output))
}

fn check<'a>(report: &'a Value, id: &str, tool: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["id"] == id && c["tool"] == tool))
        .unwrap_or_else(|| panic!("no {id} for {tool}: {:#}", report["checks"]))
}

fn observed(report: &Value) -> bool {
    report["isolation"]["network_observer"]["observed"] == true
}

/// `protocol host-or-address:port` of every attempt of one call.
fn attempts(call: &Value) -> Vec<String> {
    call["network"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            let at = a["host"].as_str().or(a["address"].as_str()).unwrap_or("?");
            format!(
                "{} {at}:{}",
                a["protocol"].as_str().unwrap_or("?"),
                a["port"]
            )
        })
        .collect()
}

#[test]
fn a_closed_world_tool_that_posts_a_webhook_fails_eff04_with_the_destination() {
    let (code, report) = audit_testbed("closed-world-webhook", &[]);
    assert!(observed(&report), "{:#}", report["isolation"]);
    assert_eq!(code, 1, "{:#}", report["checks"]);
    let failed = check(&report, "EFF-04", "save_note");
    assert_eq!(failed["verdict"], "fail", "{failed:#}");
    let evidence: Vec<&str> = failed["evidence"]["network"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["destination"].as_str())
        .collect();
    assert!(
        evidence.contains(&"tcp hooks.testbed.example (198.18.0.2):80"),
        "{evidence:#?}"
    );
    // Only the planted tool fails: the others declare their worlds truly.
    let failures: Vec<&str> = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["verdict"] == "fail")
        .filter_map(|c| c["tool"].as_str())
        .collect();
    assert_eq!(failures, ["save_note"]);
    // The attempt sits in the ledger beside the call's store effects.
    let save = report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["tool"] == "save_note" && c["outcome"]["status"] == "ok")
        .expect("a successful save_note");
    assert!(!save["effects"].as_array().expect("effects").is_empty());
    let tcp = save["network"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["protocol"] == "tcp")
        .expect("a TCP attempt");
    assert_eq!(tcp["host"], "hooks.testbed.example");
    assert!(tcp["bytes"].as_u64().is_some_and(|b| b > 0), "{tcp:#}");
    assert!(
        tcp["digest"]
            .as_str()
            .is_some_and(|d| d.starts_with("blake3:")),
        "first bytes are kept by digest only: {tcp:#}"
    );
    assert!(
        !report.to_string().contains("POST /hook"),
        "the bytes themselves never reach the report"
    );
}

#[test]
fn the_honest_network_variant_passes_and_its_open_world_reach_is_recorded_not_failed() {
    let (code, report) = audit_testbed("network-honest", &[]);
    assert!(observed(&report), "{:#}", report["isolation"]);
    assert_eq!(code, 0, "{:#}", report["checks"]);
    for tool in ["save_note", "get_note", "list_notes", "ping"] {
        assert_eq!(check(&report, "EFF-04", tool)["verdict"], "pass", "{tool}");
    }
    let open = check(&report, "EFF-04", "create_webhook");
    assert_eq!(open["verdict"], "skip", "{open:#}");
    assert!(
        !open["evidence"]["network"]
            .as_array()
            .expect("recorded")
            .is_empty(),
        "{open:#}"
    );
}

#[test]
fn the_same_audit_records_the_same_attempts() {
    let calls = |report: &Value| -> Vec<Vec<String>> {
        report["calls"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let mut all = attempts(c);
                all.extend(
                    c["network"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|a| a["digest"].to_string()),
                );
                all
            })
            .collect()
    };
    let (_, first) = audit_testbed("closed-world-webhook", &[]);
    let (_, second) = audit_testbed("closed-world-webhook", &[]);
    assert_eq!(calls(&first), calls(&second));
}

#[test]
fn without_the_observer_eff04_is_untestable_never_passed() {
    let (_, report) = audit_testbed("honest", &["--no-netns"]);
    let observer = &report["isolation"]["network_observer"];
    assert_eq!(observer["observed"], false, "{observer:#}");
    assert!(
        observer["detail"]
            .as_str()
            .is_some_and(|d| d.starts_with("the network was not observed")),
        "{observer:#}"
    );
    for tool in ["get_note", "list_notes", "ping"] {
        let eff04 = check(&report, "EFF-04", tool);
        assert_eq!(eff04["verdict"], "untestable", "{eff04:#}");
    }
}

/// The machine's own address on its outward interface (no packet is sent
/// to find it), or `None` on a machine without one.
fn host_address() -> Option<Ipv4Addr> {
    let probe = UdpSocket::bind("0.0.0.0:0").ok()?;
    probe.connect("192.0.2.1:9").ok()?;
    match probe.local_addr().ok()?.ip() {
        IpAddr::V4(v4) if !v4.is_loopback() && !v4.is_unspecified() => Some(v4),
        _ => None,
    }
}

#[test]
fn nothing_leaves_the_machine_during_an_audit() {
    // Listeners outside the jail, on every address of the host: its
    // loopback and its external-looking address.
    let tcp = TcpListener::bind("0.0.0.0:0").expect("listen");
    tcp.set_nonblocking(true).expect("nonblocking");
    let tcp_port = tcp.local_addr().expect("addr").port();
    let udp = UdpSocket::bind(("0.0.0.0", 0)).expect("udp");
    udp.set_nonblocking(true).expect("nonblocking");
    let udp_port = udp.local_addr().expect("addr").port();
    let host = host_address().map_or("198.51.100.1".to_owned(), |a| a.to_string());
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/network_reacher.py");
    let output = binary()
        .args(["audit", "--format", "json", "--settle-ms", "0"])
        .args(["--timeout-ms", "20000", "--", "python3"])
        .arg(&server)
        .args([tcp_port.to_string(), udp_port.to_string(), host.clone()])
        .output()
        .expect("mcp-witness runs");
    let report = report_of(&output);
    let mut buf = [0u8; 64];
    assert!(
        tcp.accept().is_err(),
        "a connection reached the host: {:#}",
        report["calls"]
    );
    assert!(
        udp.recv_from(&mut buf).is_err(),
        "a datagram reached the host: {:#}",
        report["calls"]
    );
    assert!(observed(&report), "{:#}", report["isolation"]);
    let call = &report["calls"][0];
    let seen = attempts(call);
    for expected in [
        format!("tcp {host}:{tcp_port}"),
        format!("udp {host}:{udp_port}"),
        "tcp 203.0.113.7:443".to_owned(),
        "dns exfil.example.net:53".to_owned(),
        "tcp exfil.example.net:80".to_owned(),
    ] {
        assert!(seen.contains(&expected), "{expected} not in {seen:#?}");
    }
    // The jail's own loopback is its own: refused there, never the host's.
    assert!(!seen.iter().any(|a| a.contains("127.0.0.1")), "{seen:#?}");
    assert!(
        call["response"].to_string().contains("127.0.0.1:")
            && call["response"]
                .to_string()
                .contains("ConnectionRefusedError"),
        "{:#}",
        call["response"]
    );
    assert_eq!(check(&report, "EFF-04", "lookup")["verdict"], "fail");
    // The name it looked up carried a credential: only its digest remains.
    assert!(
        !output
            .stdout
            .windows(20)
            .any(|w| w == b"AKIAQ7RT5XW2PN4KZ3ML"),
        "a secret in a DNS label reached the report"
    );
    assert!(
        seen.iter().any(|a| a.starts_with("dns [secret blake3:")),
        "{seen:#?}"
    );
}
