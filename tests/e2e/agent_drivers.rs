//! The two HTTP drivers against fake endpoints on 127.0.0.1 that check
//! every request against the shapes the APIs document — tools, tool calls,
//! tool results in one step, errors marked — and that fail in the ways real
//! endpoints fail. No request leaves the machine; no key reaches an output.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::stdout_json as document;
use serde_json::{Value, json};

const KEY: &str = "sk-test-4f1d2c9a8b7e6d5c";

/// One request as the fake saw it.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

type Handler = Arc<dyn Fn(&Seen, &mut Vec<String>) -> (u16, String) + Send + Sync>;

/// A one-route HTTP/1.1 server on a loopback port. `problems` collects every
/// way a request broke the documented shape.
struct Fake {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    problems: Arc<Mutex<Vec<String>>>,
}

impl Fake {
    fn start(handler: Handler) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let problems = Arc::new(Mutex::new(Vec::new()));
        let (s, p) = (seen.clone(), problems.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (handler, s, p) = (handler.clone(), s.clone(), p.clone());
                std::thread::spawn(move || serve(stream, &handler, &s, &p));
            }
        });
        Self {
            base,
            seen,
            problems,
        }
    }

    fn problems(&self) -> Vec<String> {
        self.problems.lock().map(|p| p.clone()).unwrap_or_default()
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

fn serve(
    stream: TcpStream,
    handler: &Handler,
    seen: &Mutex<Vec<Seen>>,
    problems: &Mutex<Vec<String>>,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let path = line
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).is_err() || header.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = header.trim_end().split_once(':') {
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request = Seen {
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    let mut found = Vec::new();
    let (status, text) = handler(&request, &mut found);
    if let Ok(mut p) = problems.lock() {
        p.extend(found);
    }
    if let Ok(mut s) = seen.lock() {
        s.push(request);
    }
    let mut stream = reader.into_inner();
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        text.len()
    );
}

fn case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("experiments/agent/cases/{name}.toml"))
}

/// `agent run` with an HTTP driver against `base`, the key in the
/// environment, `extra` flags, writing into `out`.
fn run(driver: &str, base: &str, case_name: &str, extra: &[&str], out: &Path) -> Output {
    let key_var = if driver == "openai" {
        "OPENAI_API_KEY"
    } else {
        "ANTHROPIC_API_KEY"
    };
    Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args([
            "agent",
            "run",
            "--driver",
            driver,
            "--model",
            "fake-model",
            "--format",
            "json",
        ])
        .arg("--case")
        .arg(case(case_name))
        .arg("--base-url")
        .arg(base)
        .arg("--out")
        .arg(out)
        .args(extra)
        .args(["--", "mcp-witness", "testbed", "crm", "--store", "{db}"])
        .env(key_var, KEY)
        .output()
        .expect("mcp-witness runs")
}

/// Seed 002's add-when-missing against `fake`, judged by it too: every
/// request keeps to the documented shape, the run passes, the judge agrees.
fn judged_run(driver: &str, base: &str, fake: &Fake, out: &Path) -> (Output, Value) {
    let output = run(
        driver,
        base,
        "add-dana-missing",
        &["--judge-model", "fake-judge"],
        out,
    );
    let doc = document(&output);
    assert_eq!(fake.problems(), Vec::<String>::new());
    assert_eq!(
        output.status.code(),
        Some(0),
        "{:#}",
        doc["runs"][0]["verdicts"]
    );
    assert_eq!(doc["runs"][0]["answer"], "correct");
    (output, doc)
}

/// No output of the run holds the key.
fn assert_no_key(output: &Output, out: &Path) {
    let mut texts = vec![
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ];
    for file in ["agent-run.json", "agent-run.html"] {
        texts.push(std::fs::read_to_string(out.join(file)).unwrap_or_default());
    }
    for text in texts {
        assert!(
            !text.contains(KEY),
            "the key leaked: {}",
            &text[..text.len().min(400)]
        );
    }
}

fn is_judge(body: &Value, system: &str) -> bool {
    system.starts_with("You grade") && body.get("tools").is_none()
}

// ---------------------------------------------------------------- OpenAI

/// The add-when-missing case through the OpenAI driver, against `base`.
fn openai_add(base: &str, extra: &[&str], out: &Path) -> Output {
    run(
        "openai",
        &format!("{base}/v1"),
        "add-dana-missing",
        extra,
        out,
    )
}

/// Checks a Chat Completions request; returns how many tool results it holds.
fn check_openai(seen: &Seen, problems: &mut Vec<String>) -> usize {
    let mut bad = |what: String| problems.push(what);
    if seen.path != "/v1/chat/completions" {
        bad(format!("path {}", seen.path));
    }
    if seen.header("authorization") != Some(&format!("Bearer {KEY}")) {
        bad("no bearer key".into());
    }
    let body = &seen.body;
    if !(body["model"] == "fake-model" || body["model"] == "fake-judge")
        || !body["max_tokens"].is_u64()
    {
        bad(format!("model or max_tokens: {body}"));
    }
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    if messages.first().map(|m| m["role"].clone()) != Some(json!("system")) {
        bad("the system prompt is not the first message".into());
    }
    if let Some(tools) = body["tools"].as_array() {
        for tool in tools {
            let function = &tool["function"];
            if tool["type"] != "function"
                || !function["name"].is_string()
                || !function["parameters"].is_object()
            {
                bad(format!("tool shape: {tool}"));
            }
        }
        if body["tool_choice"] != "auto" {
            bad("tool_choice".into());
        }
    }
    let mut results = 0;
    for (i, message) in messages.iter().enumerate() {
        let Some(calls) = message["tool_calls"].as_array() else {
            if message["role"] == "tool" {
                results += 1;
            }
            continue;
        };
        for (j, call) in calls.iter().enumerate() {
            let arguments = call["function"]["arguments"].as_str().unwrap_or("");
            if call["type"] != "function"
                || serde_json::from_str::<Value>(arguments)
                    .map(|a| a.is_object())
                    .ok()
                    != Some(true)
            {
                bad(format!("assistant tool call: {call}"));
            }
            let answer = messages.get(i + 1 + j).cloned().unwrap_or_default();
            if answer["role"] != "tool"
                || answer["tool_call_id"] != call["id"]
                || !answer["content"].is_string()
            {
                bad(format!(
                    "call {} is not answered by the tool message after it: {answer}",
                    call["id"]
                ));
            }
        }
    }
    results
}

fn openai_reply(message: Value, finish: &str) -> String {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "fake-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})
    .to_string()
}

fn openai_calls(calls: &[(&str, &str, Value)]) -> String {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}))
        .collect();
    openai_reply(
        json!({"role": "assistant", "content": null, "tool_calls": calls}),
        "tool_calls",
    )
}

/// Seed 002's add-when-missing, with a second call in the first step that
/// the server rejects, so the error marking is seen.
fn openai_model() -> Handler {
    Arc::new(|seen, problems| {
        let results = check_openai(seen, problems);
        let system = seen.body["messages"][0]["content"].as_str().unwrap_or("");
        if is_judge(&seen.body, system) {
            return (
                200,
                openai_reply(
                    json!({"role": "assistant", "content": "{\"grades\": [{\"item\": 1, \"correct\": true}]}"}),
                    "stop",
                ),
            );
        }
        let messages = seen.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        match results {
            0 => (
                200,
                openai_calls(&[
                    ("call_a", "search_contacts", json!({"query": "Dana Kim"})),
                    ("call_b", "search_contacts", json!({})),
                ]),
            ),
            2 => {
                let rejected = messages
                    .last()
                    .map(|m| m["content"].clone())
                    .unwrap_or_default();
                if !rejected.as_str().is_some_and(|c| c.starts_with("Error: ")) {
                    problems.push(format!(
                        "the rejected call's result is not marked as an error: {rejected}"
                    ));
                }
                (
                    200,
                    openai_calls(&[(
                        "call_c",
                        "create_contact",
                        json!({"name": "Dana Kim", "email": "dana@northwind.example", "company": "Northwind"}),
                    )]),
                )
            }
            _ => (
                200,
                openai_reply(
                    json!({"role": "assistant", "content": "I added Dana Kim."}),
                    "stop",
                ),
            ),
        }
    })
}

#[test]
fn the_openai_driver_speaks_chat_completions_as_documented() {
    let fake = Fake::start(openai_model());
    let dir = tempfile::tempdir().expect("tempdir");
    let (output, doc) = judged_run("openai", &format!("{}/v1", fake.base), &fake, dir.path());
    let run = &doc["runs"][0];
    assert_eq!(run["status"], "pass");
    assert_eq!(run["calls"], 3);
    let step = &run["trace"]["turns"][0]["steps"][0]["calls"];
    assert_eq!(step[1]["status"], "tool-error");
    assert_eq!(run["exchanges"][0]["reply"]["usage"]["output_tokens"], 7);
    assert!(
        run["exchanges"][0]["request"]["tools"].is_array(),
        "the body as sent is recorded"
    );
    assert_eq!(doc["driver"]["kind"], "openai");
    // Four requests: three for the case, one for the judge.
    assert_eq!(fake.seen().len(), 4);
    assert_no_key(&output, dir.path());
}

#[test]
fn annotations_reach_the_model_only_when_forwarded() {
    let fake = Fake::start(openai_model());
    let dir = tempfile::tempdir().expect("tempdir");
    let plain = openai_add(fake.base.as_str(), &[], dir.path());
    assert_eq!(plain.status.code(), Some(0));
    let forwarded = openai_add(fake.base.as_str(), &["--forward-annotations"], dir.path());
    assert_eq!(forwarded.status.code(), Some(0));
    let seen = fake.seen();
    let description = |s: &Seen| {
        s.body["tools"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["function"]["name"] == "delete_contact"))
            .map(|t| {
                t["function"]["description"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned()
            })
            .unwrap_or_default()
    };
    assert!(description(&seen[0]).contains("Confirm with the user first"));
    assert!(!description(&seen[0]).contains("destructiveHint"));
    assert!(description(&seen[3]).contains("destructiveHint=true"));
    let (a, b) = (document(&plain), document(&forwarded));
    assert_ne!(a["tools"]["fingerprint"], b["tools"]["fingerprint"]);
    assert_eq!(b["tools"]["annotations_forwarded"], true);
}

/// A handler answering every request with `status` and `body`.
fn fixed(status: u16, body: &'static str) -> Handler {
    Arc::new(move |_, _| (status, body.to_owned()))
}

#[test]
fn endpoint_failures_make_the_run_untestable_never_a_crash() {
    let cases: [(Handler, &str); 4] = [
        (
            fixed(
                500,
                r#"{"error": {"message": "the server had an error", "type": "server_error"}}"#,
            ),
            "HTTP 500",
        ),
        (fixed(200, "<html>gateway</html>"), "not JSON"),
        (fixed(200, r#"{"choices": []}"#), "no choices"),
        (
            fixed(429, r#"{"error": {"message": "Rate limit reached"}}"#),
            "HTTP 429",
        ),
    ];
    for (handler, expected) in cases {
        let fake = Fake::start(handler);
        let dir = tempfile::tempdir().expect("tempdir");
        let output = openai_add(fake.base.as_str(), &[], dir.path());
        assert_eq!(
            output.status.code(),
            Some(3),
            "{expected}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let doc = document(&output);
        let run = &doc["runs"][0];
        assert_eq!(run["outcome"], "untestable");
        assert_eq!(run["status"], "untestable");
        let error = run["trace"]["harness_error"].as_str().unwrap_or("");
        assert!(error.contains(expected), "{expected}: {error}");
        assert!(
            run["verdicts"]
                .as_array()
                .is_some_and(|v| v.iter().all(|v| v["verdict"] == "untestable"))
        );
    }
}

#[test]
fn an_unreachable_or_silent_endpoint_ends_the_run_in_bounded_time() {
    let closed = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}/v1", closed.local_addr().expect("addr"));
    drop(closed);
    let dir = tempfile::tempdir().expect("tempdir");
    let output = run("openai", &base, "add-dana-missing", &[], dir.path());
    assert_eq!(output.status.code(), Some(3));
    assert!(
        document(&output)["runs"][0]["trace"]["harness_error"]
            .as_str()
            .is_some_and(|e| e.contains("refused"))
    );
    let slow = Fake::start(Arc::new(|_, _| {
        std::thread::sleep(Duration::from_secs(5));
        (200, "{}".into())
    }));
    let started = Instant::now();
    let output = openai_add(
        slow.base.as_str(),
        &["--model-timeout-ms", "300"],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(3));
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        document(&output)["runs"][0]["trace"]["harness_error"]
            .as_str()
            .is_some_and(|e| e.contains("timed out"))
    );
}

#[test]
fn a_refusal_is_a_failed_answer_and_a_malformed_call_is_told_to_the_model() {
    let fake = Fake::start(fixed(
        200,
        r#"{"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": null, "refusal": "I cannot help with that."}}]}"#,
    ));
    let dir = tempfile::tempdir().expect("tempdir");
    let output = openai_add(fake.base.as_str(), &[], dir.path());
    let doc = document(&output);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(doc["runs"][0]["outcome"], "failed_answer");
    assert_eq!(doc["runs"][0]["trace"]["turns"][0]["end"], "refused");

    let fake = Fake::start(Arc::new(|seen, problems| {
        let results = check_openai(seen, problems);
        if results == 0 {
            let reply = json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_x", "type": "function", "function": {"name": "search_contacts", "arguments": "{\"query\": \"Dana"}}
            ]});
            return (200, openai_reply(reply, "tool_calls"));
        }
        let told = seen.body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .map(|m| m["content"].clone());
        if !told
            .as_ref()
            .and_then(Value::as_str)
            .is_some_and(|c| c.starts_with("Error: Not run: the arguments were not a JSON object"))
        {
            problems.push(format!("the model was not told: {told:?}"));
        }
        (
            200,
            openai_reply(
                json!({"role": "assistant", "content": "Sorry, I could not search."}),
                "stop",
            ),
        )
    }));
    let output = openai_add(fake.base.as_str(), &[], dir.path());
    assert_eq!(fake.problems(), Vec::<String>::new());
    let doc = document(&output);
    let call = &doc["runs"][0]["trace"]["turns"][0]["steps"][0]["calls"][0];
    assert_eq!(call["status"], "not-sent");
    assert!(
        call["malformed"]
            .as_str()
            .is_some_and(|m| m.contains("{\"query\": \"Dana"))
    );
    assert_eq!(doc["runs"][0]["outcome"], "pass", "answered within budget");
    assert_eq!(
        output.status.code(),
        Some(1),
        "but the contact was never added"
    );
}

#[test]
fn a_key_an_endpoint_echoes_back_never_reaches_an_output() {
    let fake = Fake::start(Arc::new(|seen, _| {
        let said = seen.header("authorization").unwrap_or("").to_owned();
        let body = json!({"error": {"message": format!("Incorrect API key provided: {said}")}});
        (401, body.to_string())
    }));
    let dir = tempfile::tempdir().expect("tempdir");
    let output = openai_add(fake.base.as_str(), &[], dir.path());
    assert_eq!(output.status.code(), Some(3));
    let doc = document(&output);
    let error = doc["runs"][0]["trace"]["harness_error"]
        .as_str()
        .unwrap_or("");
    assert!(
        error.contains("HTTP 401") && error.contains("[redacted]"),
        "{error}"
    );
    assert_no_key(&output, dir.path());
    // Echoed in a successful reply too: the answer the model "gave".
    let echo = Fake::start(Arc::new(|seen, _| {
        let said = seen.header("authorization").unwrap_or("").to_owned();
        (
            200,
            openai_reply(
                json!({"role": "assistant", "content": format!("Your header was {said}")}),
                "stop",
            ),
        )
    }));
    let output = openai_add(echo.base.as_str(), &[], dir.path());
    assert!(
        document(&output)["runs"][0]["trace"]["turns"][0]["reply"]
            .as_str()
            .is_some_and(|r| r.contains("[redacted]"))
    );
    assert_no_key(&output, dir.path());
}

#[test]
fn a_judge_endpoint_that_fails_leaves_passing_items_passing() {
    let model = openai_model();
    let fake = Fake::start(Arc::new(move |seen, problems| {
        let system = seen.body["messages"][0]["content"].as_str().unwrap_or("");
        if is_judge(&seen.body, system) {
            return (503, r#"{"error": {"message": "overloaded"}}"#.into());
        }
        model(seen, problems)
    }));
    let dir = tempfile::tempdir().expect("tempdir");
    let output = openai_add(
        fake.base.as_str(),
        &["--judge-model", "fake-judge"],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(0));
    let doc = document(&output);
    assert_eq!(doc["runs"][0]["status"], "pass");
    assert_eq!(doc["runs"][0]["answer"], "unjudged");
    assert!(
        doc["judge_batches"][0]["problem"]
            .as_str()
            .is_some_and(|p| p.contains("HTTP 503"))
    );
}

// ------------------------------------------------------------- Anthropic

/// Checks a Messages request; returns how many tool results it holds.
fn check_anthropic(seen: &Seen, problems: &mut Vec<String>) -> usize {
    let mut bad = |what: String| problems.push(what);
    if seen.path != "/v1/messages" {
        bad(format!("path {}", seen.path));
    }
    if seen.header("x-api-key") != Some(KEY) {
        bad("no x-api-key".into());
    }
    if seen.header("anthropic-version") != Some("2023-06-01") {
        bad("no anthropic-version".into());
    }
    let body = &seen.body;
    let model_ok = body["model"] == "fake-model" || body["model"] == "fake-judge";
    if !model_ok || !body["max_tokens"].is_u64() || !body["system"].is_string() {
        bad(format!("model, max_tokens or system: {body}"));
    }
    for tool in body["tools"].as_array().into_iter().flatten() {
        if !tool["name"].is_string()
            || !tool["input_schema"].is_object()
            || tool.get("type").is_some()
        {
            bad(format!("tool shape: {tool}"));
        }
    }
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let mut results = 0;
    for (i, message) in messages.iter().enumerate() {
        let blocks = message["content"].as_array().cloned().unwrap_or_default();
        let uses: Vec<&Value> = blocks.iter().filter(|b| b["type"] == "tool_use").collect();
        if message["role"] == "user" {
            results += blocks.iter().filter(|b| b["type"] == "tool_result").count();
        }
        if uses.is_empty() {
            continue;
        }
        let answer = messages.get(i + 1).cloned().unwrap_or_default();
        let answered = answer["content"].as_array().cloned().unwrap_or_default();
        let ids: Vec<&Value> = answered.iter().map(|b| &b["tool_use_id"]).collect();
        let wanted: Vec<&Value> = uses.iter().map(|u| &u["id"]).collect();
        if answer["role"] != "user"
            || ids != wanted
            || answered
                .iter()
                .any(|b| b["type"] != "tool_result" || !b["is_error"].is_boolean())
        {
            bad(format!(
                "tool_use blocks are not all answered, in order, by the next user message: {answer}"
            ));
        }
    }
    results
}

fn anthropic_reply(content: Value, stop: &str) -> String {
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "fake-model",
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 13, "output_tokens": 5}})
    .to_string()
}

fn anthropic_model() -> Handler {
    Arc::new(|seen, problems| {
        let results = check_anthropic(seen, problems);
        let system = seen.body["system"].as_str().unwrap_or("");
        if is_judge(&seen.body, system) {
            let text = "{\"grades\": [{\"item\": 1, \"correct\": true}]}";
            return (
                200,
                anthropic_reply(json!([{"type": "text", "text": text}]), "end_turn"),
            );
        }
        let messages = seen.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        match results {
            0 => (
                200,
                anthropic_reply(
                    json!([
                        {"type": "text", "text": "Let me look."},
                        {"type": "tool_use", "id": "toolu_a", "name": "search_contacts", "input": {"query": "Dana Kim"}},
                        {"type": "tool_use", "id": "toolu_b", "name": "search_contacts", "input": {}}
                    ]),
                    "tool_use",
                ),
            ),
            2 => {
                let last = messages.last().cloned().unwrap_or_default();
                if last["content"][1]["is_error"] != true || last["content"][0]["is_error"] != false
                {
                    problems.push(format!("errors are not marked: {last}"));
                }
                (
                    200,
                    anthropic_reply(
                        json!([
                            {"type": "tool_use", "id": "toolu_c", "name": "create_contact",
                             "input": {"name": "Dana Kim", "email": "dana@northwind.example", "company": "Northwind"}}
                        ]),
                        "tool_use",
                    ),
                )
            }
            _ => (
                200,
                anthropic_reply(
                    json!([{"type": "text", "text": "I added Dana Kim."}]),
                    "end_turn",
                ),
            ),
        }
    })
}

#[test]
fn the_anthropic_driver_speaks_messages_with_tool_use_as_documented() {
    let fake = Fake::start(anthropic_model());
    let dir = tempfile::tempdir().expect("tempdir");
    let (output, doc) = judged_run("anthropic", &fake.base, &fake, dir.path());
    let run = &doc["runs"][0];
    assert_eq!(run["trace"]["turns"][0]["steps"][0]["text"], "Let me look.");
    assert_eq!(doc["driver"]["kind"], "anthropic");
    assert_eq!(fake.seen().len(), 4);
    assert_no_key(&output, dir.path());
}

#[test]
fn anthropic_failures_and_refusals_end_as_documented() {
    let overloaded = Fake::start(fixed(
        529,
        r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#,
    ));
    let dir = tempfile::tempdir().expect("tempdir");
    let output = run(
        "anthropic",
        &overloaded.base,
        "add-dana-missing",
        &[],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(3));
    let doc = document(&output);
    assert!(
        doc["runs"][0]["trace"]["harness_error"]
            .as_str()
            .is_some_and(|e| e.contains("HTTP 529: Overloaded"))
    );
    let refusing = Fake::start(fixed(
        200,
        r#"{"id": "m", "type": "message", "role": "assistant", "content": [], "stop_reason": "refusal"}"#,
    ));
    let output = run("anthropic", &refusing.base, "delete-dana", &[], dir.path());
    assert_eq!(output.status.code(), Some(1));
    let doc = document(&output);
    assert_eq!(doc["runs"][0]["outcome"], "failed_answer");
    assert_eq!(doc["runs"][0]["trace"]["turns"][0]["end"], "refused");
    assert_eq!(doc["runs"][0]["trace"]["turns"][1]["end"], "refused");
    let no_content = Fake::start(fixed(
        200,
        r#"{"type": "message", "stop_reason": "end_turn"}"#,
    ));
    let output = run(
        "anthropic",
        &no_content.base,
        "add-dana-missing",
        &[],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(3));
}

#[test]
fn a_recorded_http_run_replays_without_the_endpoint() {
    let fake = Fake::start(anthropic_model());
    let dir = tempfile::tempdir().expect("tempdir");
    let first = dir.path().join("first");
    let output = run(
        "anthropic",
        &fake.base,
        "add-dana-missing",
        &["--judge-model", "fake-judge"],
        &first,
    );
    assert_eq!(output.status.code(), Some(0));
    drop(fake);
    let second = dir.path().join("second");
    let replayed = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["agent", "run", "--format", "json", "--driver", "replay"])
        .arg(first.join("agent-run.json"))
        .arg("--out")
        .arg(&second)
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .expect("runs");
    assert_eq!(
        replayed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    let read = |dir: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("agent-run.json")).expect("read"))
            .expect("JSON")
    };
    let (a, b) = (read(&first), read(&second));
    let verdicts =
        |d: &Value| serde_json::to_string(&d["runs"][0]["verdicts"]).expect("serializes");
    assert_eq!(verdicts(&a), verdicts(&b));
    assert_eq!(b["driver"], json!({"kind": "anthropic", "replayed": true}));
}

// ------------------------------------------- a manifest delta, measured

/// The two HTTP APIs, as the description-reading model speaks them.
#[derive(Clone, Copy)]
enum Api {
    OpenAi,
    Anthropic,
}

impl Api {
    fn driver(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
        }
    }

    /// The `--base-url` the driver is given for the fake at `base`.
    fn base_url(self, base: &str) -> String {
        match self {
            Self::OpenAi => format!("{base}/v1"),
            Self::Anthropic => base.to_owned(),
        }
    }

    /// What the request handed the model as `tool`'s description.
    fn description(self, body: &Value, tool: &str) -> Option<String> {
        body["tools"]
            .as_array()?
            .iter()
            .map(|t| match self {
                Self::OpenAi => &t["function"],
                Self::Anthropic => t,
            })
            .find(|t| t["name"] == tool)
            .and_then(|t| t["description"].as_str().map(str::to_owned))
    }

    /// Every tool the conversation so far called, in order.
    fn called(self, body: &Value) -> Vec<String> {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        messages
            .iter()
            .flat_map(|m| match self {
                Self::OpenAi => m["tool_calls"].as_array().cloned().unwrap_or_default(),
                Self::Anthropic => m["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|b| b["type"] == "tool_use")
                    .cloned()
                    .collect(),
            })
            .filter_map(|c| match self {
                Self::OpenAi => c["function"]["name"].as_str().map(str::to_owned),
                Self::Anthropic => c["name"].as_str().map(str::to_owned),
            })
            .collect()
    }

    fn answer(self, text: &str) -> String {
        match self {
            Self::OpenAi => openai_reply(json!({"role": "assistant", "content": text}), "stop"),
            Self::Anthropic => anthropic_reply(json!([{"type": "text", "text": text}]), "end_turn"),
        }
    }

    fn calls(self, calls: &[(String, &str, Value)]) -> String {
        match self {
            Self::OpenAi => {
                let calls: Vec<(&str, &str, Value)> = calls
                    .iter()
                    .map(|(id, tool, args)| (id.as_str(), *tool, args.clone()))
                    .collect();
                openai_calls(&calls)
            }
            Self::Anthropic => {
                let blocks: Vec<Value> = calls
                    .iter()
                    .map(|(id, tool, args)| {
                        json!({"type": "tool_use", "id": id, "name": tool, "input": args})
                    })
                    .collect();
                anthropic_reply(Value::Array(blocks), "tool_use")
            }
        }
    }
}

/// A model behind a fake endpoint of `api` that reads the tool
/// descriptions it is handed: on the long-cart refund it looks the order up
/// and refunds its five items, but when `lookup_order`'s description
/// recommends `search_orders` it searches first.
fn description_reader(api: Api) -> Handler {
    Arc::new(move |seen, problems| {
        match api {
            Api::OpenAi => check_openai(seen, problems),
            Api::Anthropic => check_anthropic(seen, problems),
        };
        let hinted = api
            .description(&seen.body, "lookup_order")
            .is_some_and(|d| d.contains("Prefer search_orders"));
        let called = api.called(&seen.body);
        let has = |tool: &str| called.iter().any(|c| c == tool);
        let reply = if has("refund_item") {
            api.answer("I refunded all five items of order o_1004.")
        } else if has("lookup_order") {
            let refunds: Vec<(String, &str, Value)> = (1..=5)
                .map(|i| {
                    let args = json!({"order_id": "o_1004", "item_id": format!("i_1004_{i}")});
                    (format!("call_r{i}"), "refund_item", args)
                })
                .collect();
            api.calls(&refunds)
        } else if hinted && !has("search_orders") {
            api.calls(&[("call_s".into(), "search_orders", json!({"query": "o_1004"}))])
        } else {
            api.calls(&[("call_l".into(), "lookup_order", json!({"id": "o_1004"}))])
        };
        (200, reply)
    })
}

/// The long-cart refund through `api`'s driver, two runs, against the
/// CRM's edited orders desk.
fn refunds(api: Api, base: &str, extra: &[&str], out: &Path) -> Output {
    let case = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("experiments/agent/refund-cases/refund-long-cart.toml");
    let key_var = match api {
        Api::OpenAi => "OPENAI_API_KEY",
        Api::Anthropic => "ANTHROPIC_API_KEY",
    };
    Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["agent", "run", "--driver", api.driver()])
        .args(["--model", "fake-model"])
        .args(["--runs", "2", "--format", "json", "--base-url"])
        .arg(api.base_url(base))
        .arg("--case")
        .arg(case)
        .arg("--out")
        .arg(out)
        .args(extra)
        .args(["--", "mcp-witness", "testbed", "crm", "--variant"])
        .args(["orders-search-hint", "--store", "{db}"])
        .env(key_var, KEY)
        .output()
        .expect("mcp-witness runs")
}

/// Friday's pin, the suite with it and without it through `api`'s driver
/// against the edited server, and what each side sent: the pinned
/// description, then the edited one. Returns the pin and the two run
/// directories.
fn run_both_sides(api: Api, dir: &Path) -> (String, PathBuf, PathBuf) {
    let fake = Fake::start(description_reader(api));
    let pin = dir.join("orders.json").display().to_string();
    let pinned = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["manifest", "pin", "--out", &pin])
        .args(["--", "mcp-witness", "testbed", "crm", "--variant", "orders"])
        .args(["--store", "{jail}/crm.db"])
        .output()
        .expect("pins");
    assert_eq!(pinned.status.code(), Some(0));
    let (before, after) = (dir.join("before"), dir.join("after"));
    let with_pin = refunds(api, &fake.base, &["--manifest", &pin], &before);
    assert_eq!(
        with_pin.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&with_pin.stderr)
    );
    let seen_pinned = fake.seen().len();
    let live = refunds(api, &fake.base, &[], &after);
    assert_eq!(
        live.status.code(),
        Some(1),
        "over budget with the live manifest"
    );
    assert_eq!(fake.problems(), Vec::<String>::new());
    let lookup = |s: &Seen| api.description(&s.body, "lookup_order").unwrap_or_default();
    let seen = fake.seen();
    assert!(
        seen[..seen_pinned]
            .iter()
            .all(|s| !lookup(s).is_empty() && !lookup(s).contains("Prefer"))
    );
    assert!(
        seen[seen_pinned..]
            .iter()
            .all(|s| lookup(s).contains("Prefer"))
    );
    (pin, before, after)
}

#[test]
fn a_real_driver_measures_a_manifest_delta_with_the_same_commands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (pin, before, after) = run_both_sides(Api::OpenAi, dir.path());
    // Eleven tokens in and seven out per request; the detour is one more.
    let expected = Expected {
        input: (33.0, 44.0),
        driver: "openai",
    };
    assert_measured(
        &before,
        &after,
        &pin,
        &dir.path().join("compare"),
        &expected,
    );
}

#[test]
fn the_anthropic_driver_measures_the_same_delta() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (pin, before, after) = run_both_sides(Api::Anthropic, dir.path());
    // Thirteen tokens in and five out per request; the detour is one more.
    let expected = Expected {
        input: (39.0, 52.0),
        driver: "anthropic",
    };
    assert_measured(
        &before,
        &after,
        &pin,
        &dir.path().join("compare"),
        &expected,
    );
}

/// The driver each side records and the input tokens per run its endpoint
/// reported, before and after.
struct Expected {
    input: (f64, f64),
    driver: &'static str,
}

/// `agent compare` of the two runs: the drop, the tokens the endpoint
/// reported, the new tool, and no key anywhere.
fn assert_measured(before: &Path, after: &Path, pin: &str, out: &Path, expected: &Expected) {
    let compare = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["agent", "compare", "--format", "json", "--out"])
        .arg(out)
        .arg(before)
        .arg(after)
        .output()
        .expect("compares");
    assert_eq!(compare.status.code(), Some(1));
    let report = document(&compare);
    let case = &report["cases"][0];
    let metric = |name: &str| {
        case["metrics"]
            .as_array()
            .and_then(|m| m.iter().find(|m| m["metric"] == name))
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(metric("pass_rate")["verdict"], "worse");
    assert_eq!(metric("over_budget")["after"], 1.0);
    assert_eq!(metric("input_tokens")["before"], expected.input.0);
    assert_eq!(metric("input_tokens")["after"], expected.input.1);
    assert_eq!(metric("output_tokens")["verdict"], "worse");
    assert_eq!(case["new_tools"], json!(["search_orders"]));
    assert_eq!(report["before"]["driver"], expected.driver);
    assert_eq!(report["before"]["manifest"]["file"], pin);
    let mut texts = vec![String::from_utf8_lossy(&compare.stdout).into_owned()];
    for file in ["agent-compare.json", "agent-compare.html"] {
        texts.push(std::fs::read_to_string(out.join(file)).unwrap_or_default());
    }
    assert!(texts.iter().all(|t| !t.contains(KEY)), "the key leaked");
}
