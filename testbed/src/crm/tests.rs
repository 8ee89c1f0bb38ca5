use std::path::Path;

use rmcp::model::JsonObject;
use rusqlite::Connection;
use serde_json::{Value, json};

use super::*;

const TENANTS: &str = include_str!("../../../experiments/agent/seeds/crm-tenants.sql");
const HAS_DANA: &str = include_str!("../../../experiments/agent/seeds/acme-has-dana.sql");

fn seeded(dir: &Path, with_dana: bool) -> std::path::PathBuf {
    let path = dir.join("crm.db");
    let conn = Connection::open(&path).expect("store");
    conn.execute_batch(SCHEMA).expect("schema");
    conn.execute_batch(TENANTS).expect("tenants");
    if with_dana {
        conn.execute_batch(HAS_DANA).expect("dana");
    }
    path
}

fn server(store: &Path, variant: CrmVariant, token: Option<&str>) -> CrmServer {
    CrmServer::open(&CrmOptions {
        variant,
        store: store.to_path_buf(),
        now: crate::DEFAULT_NOW,
        token: token.map(str::to_owned),
    })
    .expect("server")
}

fn args(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn call(server: &CrmServer, tool: &str, arguments: Value) -> (Value, bool) {
    let (text, is_error) = server.call(tool, &args(arguments)).expect("call");
    (
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
        is_error,
    )
}

fn rows(store: &Path, sql: &str) -> Vec<Vec<String>> {
    let conn = Connection::open(store).expect("store");
    let mut stmt = conn.prepare(sql).expect("sql");
    let width = stmt.column_count();
    stmt.query_map([], |r| {
        (0..width)
            .map(|i| {
                r.get::<_, rusqlite::types::Value>(i).map(|v| match v {
                    rusqlite::types::Value::Text(s) => s,
                    rusqlite::types::Value::Integer(n) => n.to_string(),
                    other => format!("{other:?}"),
                })
            })
            .collect()
    })
    .expect("rows")
    .collect::<Result<_, _>>()
    .expect("rows")
}

#[test]
fn a_token_sees_only_its_tenant() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = seeded(dir.path(), false);
    let acme = server(&store, CrmVariant::Honest, Some("acme-agent-token"));
    let (found, is_error) = call(&acme, "search_contacts", json!({"query": "Dana Kim"}));
    assert!(!is_error);
    assert_eq!(found["contacts"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        found["contacts"][0]["id"], "c_152",
        "only acme's Dana Kimball"
    );
    let (none, _) = call(
        &acme,
        "search_contacts",
        json!({"query": "dana@northwind.example"}),
    );
    assert_eq!(none, json!({"contacts": []}), "globex's Dana is invisible");
    let (gone, is_error) = call(&acme, "delete_contact", json!({"id": "c_201"}));
    assert!(is_error, "{gone}");
    assert_eq!(
        rows(&store, "SELECT id FROM contacts WHERE id = 'c_201'").len(),
        1
    );
    let globex = server(&store, CrmVariant::Honest, Some("globex-agent-token"));
    let (theirs, _) = call(&globex, "search_contacts", json!({"query": "dana"}));
    assert_eq!(theirs["contacts"][0]["id"], "c_201");
}

#[test]
fn no_token_or_an_unknown_one_is_refused_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = seeded(dir.path(), false);
    for token in [None, Some("guessed")] {
        let crm = server(&store, CrmVariant::Honest, token);
        let (text, is_error) = call(&crm, "create_contact", json!({"name": "X", "email": "x@y"}));
        assert!(is_error);
        assert!(text.as_str().is_some_and(|t| t.starts_with("Unauthorized")));
    }
    assert!(rows(&store, "SELECT id FROM audit_log").is_empty());
    assert_eq!(rows(&store, "SELECT id FROM contacts").len(), 3);
}

#[test]
fn every_write_is_audited_with_tenant_client_tool_and_arguments() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = seeded(dir.path(), true);
    let crm = server(&store, CrmVariant::Honest, Some("acme-agent-token"));
    let asked =
        json!({"name": "Dana Kim", "email": "dana@northwind.example", "company": "Northwind"});
    let (created, is_error) = call(&crm, "create_contact", asked.clone());
    assert!(!is_error);
    let id = created["created"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(id.starts_with("c_") && id.len() == 10, "{id}");
    let (deleted, is_error) = call(&crm, "delete_contact", json!({"id": "c_150"}));
    assert!(!is_error, "{deleted}");
    let (missing, is_error) = call(&crm, "delete_contact", json!({"id": "c_150"}));
    assert!(is_error, "{missing}");
    let audit = rows(
        &store,
        "SELECT at, tenant_id, client_id, tool, arguments, outcome FROM audit_log ORDER BY id",
    );
    assert_eq!(audit.len(), 3);
    assert_eq!(
        audit[0][..4],
        ["1767225600", "acme", "acme-agent", "create_contact"]
    );
    let recorded: Value = serde_json::from_str(&audit[0][4]).expect("JSON arguments");
    assert_eq!(recorded, asked);
    assert_eq!(audit[0][5], format!("created {id}"));
    assert_eq!(
        audit[1][3..],
        ["delete_contact", r#"{"id":"c_150"}"#, "deleted"]
    );
    assert_eq!(audit[2][5], "not found");
    let (_, searched_is_error) = call(&crm, "search_contacts", json!({"query": "x"}));
    assert!(!searched_is_error);
    assert_eq!(
        rows(&store, "SELECT id FROM audit_log").len(),
        3,
        "reads are not audited"
    );
}

#[test]
fn ids_depend_only_on_what_is_stored_and_asked() {
    let ids: Vec<String> = (0..2)
        .map(|_| {
            let dir = tempfile::tempdir().expect("tempdir");
            let store = seeded(dir.path(), false);
            let crm = server(&store, CrmVariant::Honest, Some("acme-agent-token"));
            let (created, _) = call(
                &crm,
                "create_contact",
                json!({"name": "Dana Kim", "email": "dana@northwind.example"}),
            );
            created["created"]["id"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(ids[0], ids[1]);
}

#[test]
fn the_planted_gaps_are_where_their_names_say() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = seeded(dir.path(), false);
    let unaudited = server(
        &store,
        CrmVariant::UnauditedCreate,
        Some("acme-agent-token"),
    );
    call(
        &unaudited,
        "create_contact",
        json!({"name": "A", "email": "a@x"}),
    );
    assert!(rows(&store, "SELECT id FROM audit_log").is_empty());
    call(&unaudited, "delete_contact", json!({"id": "c_101"}));
    assert_eq!(
        rows(&store, "SELECT id FROM audit_log").len(),
        1,
        "deletes still audited"
    );

    let honest = server(&store, CrmVariant::Honest, Some("acme-agent-token"));
    let (refused, is_error) = call(
        &honest,
        "create_contact",
        json!({"name": "B", "email": "b@x", "tenant_id": "globex"}),
    );
    assert!(is_error, "{refused}");
    let leaky = server(&store, CrmVariant::TenantOverride, Some("acme-agent-token"));
    let (created, is_error) = call(
        &leaky,
        "create_contact",
        json!({"name": "B", "email": "b@x", "tenant_id": "globex"}),
    );
    assert!(!is_error, "{created}");
    let id = created["created"]["id"].as_str().unwrap_or_default();
    let tenant = rows(
        &store,
        &format!("SELECT tenant_id FROM contacts WHERE id = '{id}'"),
    );
    assert_eq!(tenant, [["globex"]]);

    for variant in CrmVariant::ALL {
        assert_eq!(CrmVariant::from_name(variant.name()), Some(variant));
        let tools = server::catalog(variant);
        let create = tools
            .iter()
            .find(|t| t.name == "create_contact")
            .expect("create");
        let has_tenant = create.input_schema["properties"].get("tenant_id").is_some();
        assert_eq!(
            has_tenant,
            variant == CrmVariant::TenantOverride,
            "{}",
            variant.name()
        );
    }
}

#[test]
fn the_catalog_declares_what_each_tool_does_and_asks_for_confirmation() {
    let tools = server::catalog(CrmVariant::Honest);
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        ["search_contacts", "create_contact", "delete_contact"]
    );
    let hints = |name: &str| {
        let a = tools
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.annotations.clone())
            .expect("annotations");
        (a.read_only_hint, a.destructive_hint)
    };
    assert_eq!(hints("search_contacts"), (Some(true), Some(false)));
    assert_eq!(hints("create_contact"), (Some(false), Some(false)));
    assert_eq!(hints("delete_contact"), (Some(false), Some(true)));
    let delete = tools
        .iter()
        .find(|t| t.name == "delete_contact")
        .expect("delete");
    assert!(
        delete
            .description
            .as_deref()
            .is_some_and(|d| d.contains("Confirm with the user first"))
    );
}

const ORDERS: &str = include_str!("../../../experiments/agent/seeds/acme-orders.sql");

fn seeded_orders(dir: &Path) -> std::path::PathBuf {
    let path = seeded(dir, false);
    let conn = Connection::open(&path).expect("store");
    conn.execute_batch(orders::ORDERS_SCHEMA)
        .expect("orders schema");
    conn.execute_batch(ORDERS).expect("orders");
    path
}

#[test]
fn the_orders_desk_looks_up_searches_and_refunds_within_the_tenant() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = seeded_orders(dir.path());
    let crm = server(&store, CrmVariant::Orders, Some("acme-agent-token"));
    let (order, is_error) = call(&crm, "lookup_order", json!({"id": "o_1003"}));
    assert!(!is_error, "{order}");
    let items = order["order"]["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let refunded: Vec<bool> = items.iter().map(|i| i["refunded"] == true).collect();
    assert_eq!(
        refunded,
        [false, true],
        "the socks were refunded in the seed"
    );
    let (found, _) = call(&crm, "search_orders", json!({"query": "o_100"}));
    assert_eq!(found["orders"].as_array().map(Vec::len), Some(5));
    // globex's order is another tenant's: neither found nor refundable.
    let (none, _) = call(&crm, "search_orders", json!({"query": "Gus"}));
    assert_eq!(none["orders"], json!([]));
    let (missing, is_error) = call(&crm, "lookup_order", json!({"id": "o_2001"}));
    assert!(is_error, "{missing}");
    let (refused, is_error) = call(
        &crm,
        "refund_item",
        json!({"order_id": "o_2001", "item_id": "i_2001_1"}),
    );
    assert!(is_error, "{refused}");
    let (refund, is_error) = call(
        &crm,
        "refund_item",
        json!({"order_id": "o_1004", "item_id": "i_1004_2"}),
    );
    assert!(!is_error, "{refund}");
    assert_eq!(refund["refunded"]["amount_cents"], 2200);
    let (twice, is_error) = call(
        &crm,
        "refund_item",
        json!({"order_id": "o_1004", "item_id": "i_1004_2"}),
    );
    assert!(is_error, "{twice}");
    assert_eq!(
        rows(
            &store,
            "SELECT id, order_id, amount_cents FROM refunds WHERE order_id = 'o_1004'"
        ),
        [["rf_i_1004_2", "o_1004", "2200"]]
    );
    let audited = rows(
        &store,
        "SELECT tool, outcome FROM audit_log WHERE tool = 'refund_item' ORDER BY id",
    );
    assert_eq!(
        audited.len(),
        3,
        "every refund call is audited: {audited:?}"
    );
    assert_eq!(audited[1], ["refund_item", "refunded"]);
}

#[test]
fn the_pair_differs_in_one_sentence_of_one_description() {
    let plain = server::catalog(CrmVariant::Orders);
    let hinted = server::catalog(CrmVariant::OrdersSearchHint);
    let names = |tools: &[rmcp::model::Tool]| -> Vec<String> {
        tools.iter().map(|t| t.name.to_string()).collect()
    };
    assert_eq!(names(&plain), names(&hinted));
    assert_eq!(
        names(&plain)[3..],
        ["lookup_order", "search_orders", "refund_item"]
    );
    assert_eq!(names(&server::catalog(CrmVariant::Honest)).len(), 3);
    for (a, b) in plain.iter().zip(&hinted) {
        let same = serde_json::to_value(a).ok() == serde_json::to_value(b).ok();
        assert_eq!(same, a.name != "lookup_order", "{}", a.name);
    }
    let description = |tools: &[rmcp::model::Tool]| {
        tools
            .iter()
            .find(|t| t.name == "lookup_order")
            .and_then(|t| t.description.clone())
            .unwrap_or_default()
    };
    assert_eq!(
        description(&hinted),
        format!("{} {}", description(&plain), orders::SEARCH_HINT)
    );
    // The contact-only variants never answer an order tool.
    let dir = tempfile::tempdir().expect("tempdir");
    let store = seeded_orders(dir.path());
    let honest = server(&store, CrmVariant::Honest, Some("acme-agent-token"));
    let (_, is_error) = call(&honest, "lookup_order", json!({"id": "o_1001"}));
    assert!(is_error);
}
