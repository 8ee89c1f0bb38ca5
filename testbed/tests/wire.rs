//! The testbed server on the wire: raw newline-delimited JSON-RPC through an
//! in-memory pipe, the way the auditor's hand-written client talks to it.
//! Store state is read out of band through a private copy, never through the
//! tools under test.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::task::JoinHandle;
use witness_observers::sqlite::PrivateCopy;
use witness_testbed::auth::{self, AuthRule};
use witness_testbed::{DEFAULT_NOW, ServeOptions, TestbedError, Variant, lifecycle, oracle, store};

const TOOLS: [&str; 11] = [
    "save_note",
    "get_note",
    "list_notes",
    "delete_note",
    "create_webhook",
    "ping",
    "create_grant",
    "mint_api_key",
    "revoke_api_key",
    "create_share_link",
    "check_credential",
];

/// The 2026-07-28 request envelope.
fn inline_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}
    })
}

struct Session {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    writer: WriteHalf<DuplexStream>,
    server: JoinHandle<Result<(), TestbedError>>,
    next_id: u64,
    /// Every line the server wrote, verbatim.
    transcript: Vec<String>,
}

impl Session {
    fn start(variant: Variant, store: &Path) -> Self {
        let (client, server) = tokio::io::duplex(1 << 16);
        let opts = ServeOptions {
            variant,
            store: store.to_path_buf(),
            now: DEFAULT_NOW,
            busy: false,
        };
        let server = tokio::spawn(witness_testbed::serve_transport(opts, server));
        let (read, writer) = tokio::io::split(client);
        Session {
            lines: BufReader::new(read).lines(),
            writer,
            server,
            next_id: 1,
            transcript: Vec::new(),
        }
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    /// Sends a request and returns the raw response line and its parse.
    async fn request(&mut self, method: &str, params: Option<Value>) -> (String, Value) {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.send(message).await;
        loop {
            let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
                .await
                .expect("server did not answer within 10s")
                .unwrap()
                .expect("server closed stdout");
            let parsed: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("non-JSON line on stdout ({e}): {line}"));
            assert_eq!(parsed["jsonrpc"], "2.0", "not JSON-RPC: {line}");
            self.transcript.push(line.clone());
            if parsed["id"] == json!(id) {
                return (line, parsed);
            }
        }
    }

    async fn initialize(&mut self) -> Value {
        let (_, response) = self
            .request(
                "initialize",
                Some(json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"}
                })),
            )
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        response
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> (String, Value) {
        self.request(
            "tools/call",
            Some(json!({"name": tool, "arguments": arguments})),
        )
        .await
    }

    /// The text of a successful tool result; panics on a protocol error.
    async fn text(&mut self, tool: &str, arguments: Value) -> (String, bool) {
        let (line, response) = self.call(tool, arguments).await;
        let result = response
            .get("result")
            .unwrap_or_else(|| panic!("{tool} failed at the protocol level: {line}"));
        let text = result["content"][0]["text"].as_str().unwrap().to_owned();
        (text, result["isError"] == json!(true))
    }

    async fn ok(&mut self, tool: &str, arguments: Value) -> String {
        let (text, is_error) = self.text(tool, arguments).await;
        assert!(!is_error, "{tool} returned isError: {text}");
        text
    }

    async fn tools(&mut self) -> Vec<Value> {
        let (_, response) = self.request("tools/list", None).await;
        response["result"]["tools"].as_array().unwrap().clone()
    }

    /// Closes the client's side and waits for the server to finish.
    async fn close(mut self) -> Vec<String> {
        // Shutting the write half down is the pipe's EOF, as closing a
        // child's stdin is; dropping one half of a split stream is not.
        self.writer.shutdown().await.unwrap();
        tokio::time::timeout(Duration::from_secs(10), self.server)
            .await
            .expect("server did not stop after stdin closed")
            .unwrap()
            .unwrap();
        self.transcript
    }
}

fn seeded() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.db");
    store::seed_fixtures(&path).unwrap();
    (dir, path)
}

/// Rows of `sql` against a private copy of the store, rendered as JSON.
fn rows(store: &Path, sql: &str) -> Vec<Value> {
    let copy = PrivateCopy::open(store).unwrap().unwrap();
    let mut stmt = copy.conn().prepare(sql).unwrap();
    let width = stmt.column_count();
    let mut out = Vec::new();
    let mut q = stmt.query([]).unwrap();
    while let Some(row) = q.next().unwrap() {
        let cells: Vec<Value> = (0..width)
            .map(|i| match row.get::<_, rusqlite::types::Value>(i).unwrap() {
                rusqlite::types::Value::Null => Value::Null,
                rusqlite::types::Value::Integer(n) => json!(n),
                rusqlite::types::Value::Text(s) => json!(s),
                other => json!(format!("{other:?}")),
            })
            .collect();
        out.push(Value::from(cells));
    }
    out
}

fn decide(store: &Path, credential: &str, rule: AuthRule) -> auth::Decision {
    let copy = PrivateCopy::open(store).unwrap().unwrap();
    auth::authorize(copy.conn(), credential, DEFAULT_NOW, rule).unwrap()
}

fn hints(tool: &Value) -> [bool; 4] {
    let a = &tool["annotations"];
    [
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
    ]
    .map(|k| {
        a[k].as_bool()
            .unwrap_or_else(|| panic!("{} does not declare {k}", tool["name"]))
    })
}

#[tokio::test]
async fn legacy_initialize_then_tools_list_serves_eleven_annotated_tools() {
    let (_dir, path) = seeded();
    let mut s = Session::start(Variant::Honest, &path);
    let init = s.initialize().await;
    let result = &init["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(result["serverInfo"]["name"], "mcp-witness-testbed");
    assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(result["capabilities"]["tools"].is_object());
    assert!(
        result["instructions"]
            .as_str()
            .is_some_and(|i| !i.is_empty())
    );

    let tools = s.tools().await;
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, TOOLS);
    let expected = [
        [false, true, true, false],
        [true, false, true, false],
        [true, false, true, false],
        [false, true, true, false],
        [false, false, false, true],
        [true, false, true, false],
        [false, false, false, false],
        [false, false, false, false],
        [false, true, true, false],
        [false, false, false, true],
        [true, false, true, false],
    ];
    for (tool, want) in tools.iter().zip(expected) {
        assert_eq!(hints(tool), want, "{}", tool["name"]);
        assert!(tool["title"].as_str().is_some_and(|t| !t.is_empty()));
        assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()));
        assert_eq!(tool["inputSchema"]["type"], "object");
        assert!(
            tool["inputSchema"]["properties"].is_object(),
            "{}",
            tool["name"]
        );
        assert!(
            tool["inputSchema"]["required"].is_array(),
            "{}",
            tool["name"]
        );
    }
    s.close().await;
}

#[tokio::test]
async fn variants_differ_from_honest_only_in_the_planted_annotation() {
    let honest = {
        let (_dir, path) = seeded();
        let mut s = Session::start(Variant::Honest, &path);
        s.initialize().await;
        let tools = s.tools().await;
        s.close().await;
        tools
    };
    for variant in Variant::ALL {
        let (_dir, path) = seeded();
        let mut s = Session::start(variant, &path);
        let init = s.initialize().await;
        assert_eq!(init["result"]["serverInfo"]["name"], "mcp-witness-testbed");
        let tools = s.tools().await;
        s.close().await;
        let lie = oracle::planted_lie(variant).filter(|l| l.in_annotations());
        // The response variants list three more tools after the same eleven.
        let extra = if variant.serves_response_tools() {
            3
        } else {
            0
        };
        assert_eq!(tools.len(), honest.len() + extra, "{variant}");
        for (mine, theirs) in tools.iter().zip(&honest) {
            let mut without_annotations = mine.clone();
            let mut honest_without = theirs.clone();
            without_annotations["annotations"] = Value::Null;
            honest_without["annotations"] = Value::Null;
            assert_eq!(without_annotations, honest_without, "{variant}");
            let is_liar = lie.is_some_and(|l| mine["name"] == l.tool);
            assert_eq!(
                mine["annotations"] != theirs["annotations"],
                is_liar,
                "{variant}: {}",
                mine["name"]
            );
        }
    }
}

#[tokio::test]
async fn honest_tools_do_what_they_say() {
    let (_dir, path) = seeded();
    let mut s = Session::start(Variant::Honest, &path);
    s.initialize().await;

    assert_eq!(s.ok("ping", json!({})).await, "pong");
    assert_eq!(
        s.ok("get_note", json!({"id": "welcome"})).await,
        "Welcome to the notes server."
    );
    assert_eq!(
        s.ok("save_note", json!({"id": "draft", "body": "héllo"}))
            .await,
        "Saved note 'draft' (6 bytes)."
    );
    assert_eq!(
        s.ok("list_notes", json!({})).await,
        r#"["api_key_backup","draft","welcome"]"#
    );
    assert_eq!(
        rows(
            &path,
            "SELECT body, updated_at FROM notes WHERE id = 'draft'"
        ),
        [json!(["héllo", DEFAULT_NOW])]
    );
    s.ok("save_note", json!({"id": "draft", "body": "v2"}))
        .await;
    assert_eq!(s.ok("get_note", json!({"id": "draft"})).await, "v2");
    assert_eq!(
        s.ok("delete_note", json!({"id": "draft"})).await,
        "Deleted note 'draft'."
    );
    assert_eq!(
        s.ok("delete_note", json!({"id": "draft"})).await,
        "No note 'draft'; nothing deleted."
    );
    assert_eq!(
        s.text("get_note", json!({"id": "draft"})).await,
        ("No note 'draft'.".to_owned(), true)
    );

    assert_eq!(
        s.ok(
            "create_webhook",
            json!({"url": "https://example.invalid/hook"})
        )
        .await,
        "Endpoint https://example.invalid/hook accepted."
    );
    let hooks = rows(
        &path,
        "SELECT id, url, secret, status, created_at FROM webhooks",
    );
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0][0], "wh_0001");
    let hook_secret = hooks[0][2].as_str().unwrap().to_owned();
    assert!(hook_secret.starts_with("whsec_"));

    assert_eq!(
        s.ok("create_grant", json!({"scope": "notes:read"})).await,
        "Created grant grant_0002 for scope 'notes:read'."
    );
    let key: Value = serde_json::from_str(
        &s.ok("mint_api_key", json!({"grant_id": "grant_0001"}))
            .await,
    )
    .unwrap();
    assert_eq!(key["id"], "key_0001");
    assert_eq!(key["grant_id"], "grant_0001");
    assert_eq!(key["expires_at"], Value::Null);
    let secret = key["secret"].as_str().unwrap().to_owned();
    assert_eq!(
        rows(
            &path,
            "SELECT secret, grant_id, status, expires_at FROM api_keys WHERE id = 'key_0001'"
        ),
        [json!([secret, "grant_0001", "active", null])]
    );
    let short: Value = serde_json::from_str(
        &s.ok(
            "mint_api_key",
            json!({"grant_id": "grant_0002", "ttl_seconds": 60}),
        )
        .await,
    )
    .unwrap();
    assert_eq!(short["id"], "key_0002");
    assert_eq!(short["expires_at"], DEFAULT_NOW + 60);
    assert_eq!(
        s.text("mint_api_key", json!({"grant_id": "grant_0404"}))
            .await,
        ("No active grant 'grant_0404'.".to_owned(), true)
    );

    let (line, _) = s
        .call("check_credential", json!({"credential": secret}))
        .await;
    assert!(line.contains("accepted: api_keys/key_0001"), "{line}");
    assert!(
        !line.contains(&secret),
        "check_credential echoed the secret"
    );
    assert_eq!(
        s.ok("check_credential", json!({"credential": hook_secret}))
            .await,
        "accepted: webhooks/wh_0001"
    );
    assert_eq!(
        s.ok("check_credential", json!({"credential": "api_key_backup"}))
            .await,
        "rejected"
    );

    assert_eq!(
        s.ok("revoke_api_key", json!({"key_id": "key_0001"})).await,
        "Revoked key key_0001."
    );
    assert_eq!(
        rows(
            &path,
            "SELECT status, revoked_at FROM api_keys WHERE id = 'key_0001'"
        ),
        [json!(["revoked", DEFAULT_NOW])]
    );
    assert_eq!(
        s.ok("check_credential", json!({"credential": secret}))
            .await,
        "rejected"
    );
    assert_eq!(
        s.text("revoke_api_key", json!({"key_id": "key_0404"}))
            .await,
        ("No API key 'key_0404'.".to_owned(), true)
    );

    let link: Value = serde_json::from_str(
        &s.ok(
            "create_share_link",
            json!({"note_id": "welcome", "ttl_seconds": 5}),
        )
        .await,
    )
    .unwrap();
    assert_eq!(link["id"], "share_0001");
    assert_eq!(link["note_id"], "welcome");
    assert_eq!(link["expires_at"], DEFAULT_NOW + 5);
    let token = link["token"].as_str().unwrap();
    assert!(token.starts_with("shr_"));
    assert!(decide(&path, token, AuthRule::Plain).accepted);
    assert_eq!(
        s.text("create_share_link", json!({"note_id": "nope"}))
            .await,
        ("No note 'nope'.".to_owned(), true)
    );
    s.close().await;
}

#[tokio::test]
async fn honest_read_only_tools_and_server_start_leave_the_store_byte_identical() {
    let (dir, path) = seeded();
    let before = std::fs::read(&path).unwrap();
    let mut s = Session::start(Variant::Honest, &path);
    s.initialize().await;
    s.ok("get_note", json!({"id": "welcome"})).await;
    s.text("get_note", json!({"id": "missing"})).await;
    s.ok("list_notes", json!({})).await;
    s.ok("ping", json!({})).await;
    s.ok("check_credential", json!({"credential": "wk_nothing"}))
        .await;
    assert_eq!(before, std::fs::read(&path).unwrap());
    s.close().await;
    assert_eq!(before, std::fs::read(&path).unwrap());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        names,
        ["store.db"],
        "the server left companion files behind"
    );
}

/// Runs the same calls against an honest and a lying server on fresh stores
/// and returns, per server, the raw response lines and the store path.
async fn side_by_side(
    liar: Variant,
    calls: &[(&str, Value)],
) -> [(Vec<String>, tempfile::TempDir, PathBuf); 2] {
    let mut out = Vec::new();
    for variant in [Variant::Honest, liar] {
        let (dir, path) = seeded();
        let mut s = Session::start(variant, &path);
        s.initialize().await;
        let mut lines = Vec::new();
        for (tool, args) in calls {
            lines.push(s.call(tool, args.clone()).await.0);
        }
        s.close().await;
        out.push((lines, dir, path));
    }
    let mut out = out.into_iter();
    [out.next().unwrap(), out.next().unwrap()]
}

#[tokio::test]
async fn silent_keymint_get_note_answers_like_honest_but_mints_a_working_key() {
    let [(honest, _h, honest_path), (liar, _l, liar_path)] = side_by_side(
        Variant::SilentKeymint,
        &[
            ("get_note", json!({"id": "welcome"})),
            ("get_note", json!({"id": "welcome"})),
        ],
    )
    .await;
    assert_eq!(honest, liar, "responses must be byte-identical");
    assert!(honest[0].contains("Welcome to the notes server."));
    assert_eq!(
        rows(&honest_path, "SELECT id FROM api_keys"),
        Vec::<Value>::new()
    );
    let keys = rows(
        &liar_path,
        "SELECT id, secret, grant_id, status, expires_at FROM api_keys ORDER BY id",
    );
    assert_eq!(keys.len(), 2, "one key per call: {keys:?}");
    assert_eq!(keys[0][0], "key_0001");
    assert_eq!(keys[0][2], Value::Null);
    assert_eq!(keys[0][3], "active");
    assert_eq!(keys[0][4], Value::Null);
    let decision = decide(&liar_path, keys[0][1].as_str().unwrap(), AuthRule::Plain);
    assert!(decision.accepted, "{}", decision.basis);
    assert_eq!(decision.object.as_deref(), Some("api_keys/key_0001"));
}

#[tokio::test]
async fn shadow_webhook_list_notes_answers_like_honest_but_registers_a_webhook() {
    let [(honest, _h, honest_path), (liar, _l, liar_path)] =
        side_by_side(Variant::ShadowWebhook, &[("list_notes", json!({}))]).await;
    assert_eq!(honest, liar, "responses must be byte-identical");
    assert_eq!(
        rows(&honest_path, "SELECT id FROM webhooks"),
        Vec::<Value>::new()
    );
    let hooks = rows(&liar_path, "SELECT id, secret, status FROM webhooks");
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0][0], "wh_0001");
    assert!(decide(&liar_path, hooks[0][1].as_str().unwrap(), AuthRule::Plain).accepted);
}

#[tokio::test]
async fn phantom_write_ping_answers_like_honest_but_records_telemetry() {
    let [(honest, _h, honest_path), (liar, _l, liar_path)] =
        side_by_side(Variant::PhantomWrite, &[("ping", json!({}))]).await;
    assert_eq!(honest, liar, "responses must be byte-identical");
    assert!(honest[0].contains("pong"));
    assert_eq!(
        rows(&honest_path, "SELECT * FROM telemetry"),
        Vec::<Value>::new()
    );
    assert_eq!(
        rows(&liar_path, "SELECT id, event, at FROM telemetry"),
        [json!([1, "ping", DEFAULT_NOW])]
    );
}

#[tokio::test]
async fn residual_revoke_reports_revocation_but_the_key_still_authorizes() {
    let calls = [
        ("mint_api_key", json!({"grant_id": "grant_0001"})),
        ("revoke_api_key", json!({"key_id": "key_0001"})),
    ];
    let [(honest, _h, honest_path), (liar, _l, liar_path)] =
        side_by_side(Variant::ResidualRevoke, &calls).await;
    assert_eq!(honest, liar, "responses must be byte-identical");
    assert!(liar[1].contains("Revoked key key_0001."));
    let secret_of = |path: &Path| {
        rows(path, "SELECT secret FROM api_keys WHERE id = 'key_0001'")[0][0]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        rows(&liar_path, "SELECT status, revoked_at FROM api_keys"),
        [json!(["active", DEFAULT_NOW])]
    );
    assert!(decide(&liar_path, &secret_of(&liar_path), AuthRule::Plain).accepted);
    assert!(!decide(&honest_path, &secret_of(&honest_path), AuthRule::Plain).accepted);
}

#[tokio::test]
async fn cascade_server_rejects_a_key_once_its_grant_is_revoked_out_of_band() {
    for (variant, still_accepted) in [(Variant::Honest, true), (Variant::Cascade, false)] {
        let (_dir, path) = seeded();
        let mut s = Session::start(variant, &path);
        s.initialize().await;
        let key: Value = serde_json::from_str(
            &s.ok("mint_api_key", json!({"grant_id": "grant_0001"}))
                .await,
        )
        .unwrap();
        let credential = json!({"credential": key["secret"]});
        assert_eq!(
            s.ok("check_credential", credential.clone()).await,
            "accepted: api_keys/key_0001"
        );
        lifecycle::apply(&path, &lifecycle::Event::RevokeGrant("grant_0001".into())).unwrap();
        let verdict = s.ok("check_credential", credential).await;
        let expected = if still_accepted {
            "accepted: api_keys/key_0001"
        } else {
            "rejected"
        };
        assert_eq!(verdict, expected, "{variant}");
        s.close().await;
    }
}

#[tokio::test]
async fn server_discover_then_inline_requests_work() {
    let (_dir, path) = seeded();
    let mut s = Session::start(Variant::Honest, &path);
    let (_, discover) = s
        .request("server/discover", Some(json!({"_meta": inline_meta()})))
        .await;
    let result = &discover["result"];
    let versions: Vec<&str> = result["supportedVersions"]
        .as_array()
        .unwrap_or_else(|| panic!("no supportedVersions: {discover}"))
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(versions.contains(&"2026-07-28"), "{versions:?}");
    assert!(result["capabilities"]["tools"].is_object());
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "mcp-witness-testbed"
    );

    let (_, list) = s
        .request("tools/list", Some(json!({"_meta": inline_meta()})))
        .await;
    let tools = list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("inline tools/list failed: {list}"));
    assert_eq!(tools.len(), 11);
    assert_eq!(hints(&tools[0]), [false, true, true, false]);

    let (_, call) = s
        .request(
            "tools/call",
            Some(json!({"_meta": inline_meta(), "name": "ping", "arguments": {}})),
        )
        .await;
    assert_eq!(call["result"]["content"][0]["text"], "pong", "{call}");
    s.close().await;
}

#[tokio::test]
async fn bad_arguments_are_errors_never_panics() {
    let (_dir, path) = seeded();
    let before = std::fs::read(&path).unwrap();
    let mut s = Session::start(Variant::Honest, &path);
    s.initialize().await;
    let bad = [
        ("save_note", json!({"id": "x"})),
        ("save_note", json!({"id": 7, "body": "b"})),
        ("save_note", json!({"id": "", "body": "b"})),
        ("save_note", json!({"id": "x", "body": "b", "extra": true})),
        ("get_note", json!({})),
        ("ping", json!({"loud": true})),
        (
            "mint_api_key",
            json!({"grant_id": "grant_0001", "ttl_seconds": 0}),
        ),
        (
            "mint_api_key",
            json!({"grant_id": "grant_0001", "ttl_seconds": 1.5}),
        ),
        (
            "mint_api_key",
            json!({"grant_id": "grant_0001", "ttl_seconds": "60"}),
        ),
        (
            "mint_api_key",
            json!({"grant_id": "grant_0001", "ttl_seconds": i64::MAX}),
        ),
        (
            "create_share_link",
            json!({"note_id": "welcome", "ttl_seconds": -1}),
        ),
        ("check_credential", json!({"credential": ["wk_x"]})),
    ];
    for (tool, args) in bad {
        let (text, is_error) = s.text(tool, args.clone()).await;
        assert!(is_error, "{tool} {args} was accepted: {text}");
    }
    // Arguments omitted altogether.
    let (_, response) = s
        .request("tools/call", Some(json!({"name": "get_note"})))
        .await;
    assert_eq!(response["result"]["isError"], true, "{response}");

    let (_, unknown) = s.call("drop_tables", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    let (_, garbage) = s
        .request("tools/call", Some(json!({"arguments": {}})))
        .await;
    assert!(garbage.get("error").is_some(), "{garbage}");

    assert_eq!(s.ok("ping", json!({})).await, "pong");
    s.close().await;
    assert_eq!(
        before,
        std::fs::read(&path).unwrap(),
        "a rejected call wrote"
    );
}

#[tokio::test]
async fn check_credential_never_echoes_what_it_is_given() {
    let (_dir, path) = seeded();
    let mut s = Session::start(Variant::Honest, &path);
    s.initialize().await;
    for credential in ["wk_0123456789abcdef", "api_key_backup"] {
        let (line, _) = s
            .call("check_credential", json!({"credential": credential}))
            .await;
        assert!(!line.contains(credential), "{line}");
    }
    let (line, _) = s.call("check_credential", json!({"credential": 42})).await;
    assert!(!line.contains("42"), "{line}");
    s.close().await;
}

#[tokio::test]
async fn a_fixed_plan_gives_byte_identical_responses_and_stores() {
    let plan = [
        ("save_note", json!({"id": "scratch", "body": "tmp"})),
        (
            "create_webhook",
            json!({"url": "https://example.invalid/a"}),
        ),
        ("create_grant", json!({"scope": "notes:read"})),
        (
            "mint_api_key",
            json!({"grant_id": "grant_0002", "ttl_seconds": 30}),
        ),
        ("create_share_link", json!({"note_id": "scratch"})),
        ("get_note", json!({"id": "scratch"})),
        ("delete_note", json!({"id": "scratch"})),
        ("list_notes", json!({})),
    ];
    let mut runs = Vec::new();
    for _ in 0..2 {
        let (dir, path) = seeded();
        let mut s = Session::start(Variant::SilentKeymint, &path);
        s.initialize().await;
        for (tool, args) in &plan {
            s.call(tool, args.clone()).await;
        }
        let transcript = s.close().await;
        runs.push((transcript, std::fs::read(&path).unwrap(), dir));
    }
    assert_eq!(runs[0].0, runs[1].0);
    assert_eq!(runs[0].1, runs[1].1);
}

#[tokio::test]
async fn closing_the_pipe_ends_the_server_cleanly() {
    // Before any handshake.
    let (_dir, path) = seeded();
    let s = Session::start(Variant::Honest, &path);
    assert!(s.close().await.is_empty());
    // After a discover probe only.
    let mut s = Session::start(Variant::Honest, &path);
    s.request("server/discover", Some(json!({"_meta": inline_meta()})))
        .await;
    s.close().await;
    // Mid-session.
    let mut s = Session::start(Variant::Honest, &path);
    s.initialize().await;
    s.ok("ping", json!({})).await;
    s.close().await;
}

#[tokio::test]
async fn a_missing_store_is_created_with_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fresh.db");
    let mut s = Session::start(Variant::Honest, &path);
    s.initialize().await;
    assert_eq!(s.ok("list_notes", json!({})).await, "[]");
    s.close().await;
    let tables = rows(
        &path,
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
    );
    assert_eq!(
        tables,
        [
            "api_keys",
            "grants",
            "notes",
            "share_links",
            "telemetry",
            "webhooks"
        ]
        .map(|t| json!([t]))
    );
}
