//! Servers that listen beside their stdio (a dashboard, a worker port).
//!
//! Inside the jail's own network namespace a listening socket reaches no
//! one, so bind and listen are allowed there and the ports are reported;
//! nothing outside the namespace can connect to them, and a connect out is
//! still the network observer's. Without a namespace (`--no-netns`) every
//! bind stays refused, and the report says so (docs/security.md).

use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process, kill_process_group};
use serde_json::Value;

use crate::common::fixture;

/// Two TCP ports nothing on the host listens on (taken and given back).
fn free_ports() -> (u16, u16) {
    let a = TcpListener::bind("0.0.0.0:0").expect("a port");
    let b = TcpListener::bind("0.0.0.0:0").expect("a port");
    let ports = (
        a.local_addr().expect("addr").port(),
        b.local_addr().expect("addr").port(),
    );
    drop((a, b));
    ports
}

fn mark() -> String {
    format!(
        "witness-listening-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    )
}

/// The audit of `listening_server.py MODE` with a SQLite store to observe.
fn audit(
    store_dir: &std::path::Path,
    mode: &str,
    ports: (u16, u16),
    mark: &str,
    extra: &[&str],
) -> Child {
    let store = store_dir.join("notes.db");
    let seeded = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["testbed", "seed", "--store"])
        .arg(&store)
        .status()
        .expect("seed runs");
    assert!(seeded.success());
    Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["audit", "--format", "json", "--settle-ms", "0"])
        .arg(format!("--store=db=sqlite:{}", store.display()))
        .args(extra)
        .arg("--")
        .arg("python3")
        .arg(fixture("listening_server.py"))
        .args([mode, &ports.0.to_string(), &ports.1.to_string(), mark])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("mcp-witness runs")
}

/// Waits for the audit (at most 120 s), gives its exit code and report.
fn finish(mut child: Child) -> (i32, Value, String) {
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let mut out = String::new();
    let _ = stdout.read_to_string(&mut out);
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = kill_process_group(Pid::from_child(&child), Signal::KILL);
            panic!("the audit hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = err.join().unwrap_or_default();
    let report = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("not a report ({e}); stderr: {stderr}"));
    (status.code().unwrap_or(-1), report, stderr)
}

fn processes_with(marker: &str) -> Vec<Pid> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse::<i32>().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            String::from_utf8_lossy(&cmdline)
                .contains(marker)
                .then(|| Pid::from_raw(pid))
                .flatten()
        })
        .collect()
}

fn listening(report: &Value) -> Vec<String> {
    report["isolation"]["listening"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            format!(
                "{} {}:{}",
                l["protocol"].as_str().unwrap_or("?"),
                l["address"].as_str().unwrap_or("?"),
                l["port"]
            )
        })
        .collect()
}

fn layer<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["isolation"]["layers"]
        .as_array()
        .and_then(|layers| layers.iter().find(|l| l["layer"] == name))
        .unwrap_or_else(|| panic!("no layer {name}: {:#}", report["isolation"]))
}

/// The machine's own address on its outward interface (no packet sent).
fn host_address() -> Option<Ipv4Addr> {
    let probe = UdpSocket::bind("0.0.0.0:0").ok()?;
    probe.connect("192.0.2.1:9").ok()?;
    match probe.local_addr().ok()?.ip() {
        IpAddr::V4(v4) if !v4.is_loopback() && !v4.is_unspecified() => Some(v4),
        _ => None,
    }
}

fn reachable(address: IpAddr, port: u16) -> bool {
    TcpStream::connect_timeout(&SocketAddr::new(address, port), Duration::from_secs(2)).is_ok()
}

#[test]
fn a_server_that_listens_beside_its_stdio_is_audited_to_the_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ports = free_ports();
    let mark = mark();
    let (code, report, stderr) = finish(audit(dir.path(), "honest", ports, &mark, &[]));
    assert_eq!(code, 0, "{stderr}\n{:#}", report["checks"]);
    assert_eq!(report["complete"], true);
    assert_eq!(report["isolation"]["level"], "contained");
    assert_eq!(layer(&report, "network-namespace")["held"], true);
    let net = layer(&report, "landlock-net");
    assert!(
        net["detail"]
            .as_str()
            .is_some_and(|d| d.contains("a listening one reaches no one outside it")),
        "{net:#}"
    );
    let mut expected = vec![
        format!("tcp 0.0.0.0:{}", ports.1),
        format!("tcp 127.0.0.1:{}", ports.0),
    ];
    expected.sort();
    assert_eq!(listening(&report), expected);
    // Every tool answered: the server lived through the audit.
    let status = report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["tool"] == "status")
        .expect("status was called");
    assert_eq!(status["outcome"]["status"], "ok", "{status:#}");
    assert!(processes_with(&mark).is_empty());
}

#[test]
fn a_hostile_listener_is_out_of_reach_and_its_connect_out_recorded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ports = free_ports();
    let mark = mark();
    let child = audit(dir.path(), "hostile", ports, &mark, &[]);
    // The server is in its `hold` call, which lasts until this test ends
    // the `-holding` child: it listens now, and from the host neither its
    // loopback port nor its any-address port answers, on the host's
    // loopback or its outward address.
    let holding = format!("{mark}-holding");
    let deadline = Instant::now() + Duration::from_secs(60);
    while processes_with(&holding).is_empty() {
        assert!(Instant::now() < deadline, "the server never held");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut addresses = vec![IpAddr::V4(Ipv4Addr::LOCALHOST)];
    addresses.extend(host_address().map(IpAddr::V4));
    let mut reached = Vec::new();
    for address in &addresses {
        for port in [ports.0, ports.1] {
            if reachable(*address, port) {
                reached.push(format!("{address}:{port}"));
            }
        }
    }
    let held = processes_with(&holding);
    assert!(!held.is_empty(), "the server was still up");
    for pid in held {
        let _ = kill_process(pid, Signal::KILL);
    }
    let (code, report, stderr) = finish(child);
    assert!(reached.is_empty(), "reached from the host: {reached:?}");
    assert_eq!(report["isolation"]["network_observer"]["observed"], true);
    // The beacon declares a closed world and connects out: EFF-04 fails
    // with the destination the sink recorded.
    assert_eq!(code, 1, "{stderr}");
    let beacon = report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["tool"] == "beacon")
        .expect("beacon was called");
    let attempts: Vec<String> = beacon["network"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| format!("{} {}:{}", a["protocol"], a["address"], a["port"]))
        .collect();
    assert!(
        attempts.contains(&"\"tcp\" \"203.0.113.7\":443".to_owned()),
        "{attempts:?}"
    );
    let eff04 = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["id"] == "EFF-04" && c["tool"] == "beacon")
        .expect("EFF-04 for beacon");
    assert_eq!(eff04["verdict"], "fail");
    assert_eq!(listening(&report).len(), 2, "{:#}", report["isolation"]);
    for pid in processes_with(&mark) {
        let _ = kill_process(pid, Signal::KILL);
    }
}

#[test]
fn without_a_network_namespace_every_bind_stays_refused_and_the_report_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ports = free_ports();
    let mark = mark();
    let (code, report, stderr) = finish(audit(dir.path(), "honest", ports, &mark, &["--no-netns"]));
    // The server dies at start, as it would: its bind is refused.
    assert_eq!(code, 3, "{stderr}");
    assert!(
        report["incomplete_reason"].as_str().is_some_and(|r| r
            .contains("cannot listen on 127.0.0.1")
            && r.contains("Permission denied")),
        "{:#}",
        report["incomplete_reason"]
    );
    assert_eq!(layer(&report, "network-namespace")["held"], false);
    let net = layer(&report, "landlock-net");
    assert_eq!(net["held"], true, "{net:#}");
    assert!(
        net["detail"]
            .as_str()
            .is_some_and(|d| d.starts_with("the kernel refuses every TCP bind")),
        "{net:#}"
    );
    assert!(report["isolation"]["listening"].is_null());
    assert!(!reachable(IpAddr::V4(Ipv4Addr::LOCALHOST), ports.0));
    assert!(processes_with(&mark).is_empty());
}
