//! The CRM's rmcp handler: three contact tools (and, in the orders
//! variants, three order tools), one transaction per call, every query
//! scoped to the tenant the client's token names.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde_json::{Value, json};

use super::orders::{self, Answered};
use super::{CrmOptions, CrmVariant, SCHEMA, token_digest};
use crate::TestbedError;
use crate::args::{Args, Failure};

const SERVER_NAME: &str = "mcp-witness-crm";
const INSTRUCTIONS: &str =
    "A CRM: search, create and delete the contacts of the tenant your token belongs to.";

/// Who the token says the client is.
struct Identity {
    client: String,
    tenant: String,
}

/// What a call produced.
struct Outcome {
    text: String,
    is_error: bool,
}

impl Outcome {
    fn ok(value: Value) -> Self {
        Self {
            text: value.to_string(),
            is_error: false,
        }
    }
    fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
        }
    }
}

/// One CRM server: a variant, a clock, the client's token, its store.
pub struct CrmServer {
    variant: CrmVariant,
    now: i64,
    token: Option<String>,
    // Calls are short and synchronous; the lock is never held across an await.
    conn: Mutex<Connection>,
}

impl CrmServer {
    /// Opens (creating if needed) the store and its schema.
    pub fn open(opts: &CrmOptions) -> Result<Self, TestbedError> {
        let conn = crate::store::open_or_create(&opts.store)?;
        conn.execute_batch(SCHEMA)?;
        if opts.variant.has_orders() {
            conn.execute_batch(orders::ORDERS_SCHEMA)?;
        }
        Ok(Self {
            variant: opts.variant,
            now: opts.now,
            token: opts.token.clone(),
            conn: Mutex::new(conn),
        })
    }

    /// Runs one call in one transaction, committed before the answer leaves.
    /// Returns `(text, is_error)`.
    pub fn call(&self, name: &str, args: &JsonObject) -> Result<(String, bool), TestbedError> {
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let tx = conn.transaction()?;
        let outcome = match self.identity(&tx)? {
            None => Outcome::error(
                "Unauthorized: the server has no valid client token (set CRM_TOKEN).",
            ),
            Some(who) => match self.dispatch(&tx, &who, name, args) {
                Ok(outcome) => outcome,
                Err(Failure::Invalid(why)) => {
                    Outcome::error(format!("Invalid arguments for {name}: {why}."))
                }
                Err(Failure::Store(e)) => return Err(e),
            },
        };
        tx.commit()?;
        Ok((outcome.text, outcome.is_error))
    }

    fn identity(&self, tx: &Transaction<'_>) -> Result<Option<Identity>, TestbedError> {
        let Some(token) = &self.token else {
            return Ok(None);
        };
        Ok(tx
            .query_row(
                "SELECT client_id, tenant_id FROM clients WHERE token_digest = ?1",
                params![token_digest(token)],
                |r| {
                    Ok(Identity {
                        client: r.get(0)?,
                        tenant: r.get(1)?,
                    })
                },
            )
            .optional()?)
    }

    fn dispatch(
        &self,
        tx: &Transaction<'_>,
        who: &Identity,
        name: &str,
        args: &JsonObject,
    ) -> Result<Outcome, Failure> {
        let a = Args(args);
        match name {
            "search_contacts" => {
                a.only(&["query"])?;
                Ok(search(tx, who, a.string("query")?)?)
            }
            "create_contact" => {
                let overridable = self.variant == CrmVariant::TenantOverride;
                a.only(if overridable {
                    &["name", "email", "company", "tenant_id"]
                } else {
                    &["name", "email", "company"]
                })?;
                let tenant = match a.optional("tenant_id")? {
                    Some(tenant) if overridable => tenant,
                    _ => &who.tenant,
                };
                let contact = NewContact {
                    name: a.string("name")?,
                    email: a.string("email")?,
                    company: a.optional("company")?.unwrap_or(""),
                };
                Ok(self.create(tx, who, tenant, &contact, args)?)
            }
            "delete_contact" => {
                a.only(&["id"])?;
                Ok(self.delete(tx, who, a.string("id")?, args)?)
            }
            _ if self.variant.has_orders() => self.dispatch_orders(tx, who, name, args),
            other => Err(Failure::Invalid(format!("no tool named '{other}'"))),
        }
    }

    /// The orders desk's tools; a refund is audited like any write.
    fn dispatch_orders(
        &self,
        tx: &Transaction<'_>,
        who: &Identity,
        name: &str,
        args: &JsonObject,
    ) -> Result<Outcome, Failure> {
        let a = Args(args);
        let answered = match name {
            "lookup_order" => {
                a.only(&["id"])?;
                orders::lookup(tx, &who.tenant, a.string("id")?)?
            }
            "search_orders" => {
                a.only(&["query"])?;
                orders::search(tx, &who.tenant, a.string("query")?)?
            }
            "refund_item" => {
                a.only(&["order_id", "item_id"])?;
                let (order, item) = (a.string("order_id")?, a.string("item_id")?);
                let answered = orders::refund(tx, &who.tenant, order, item, self.now)?;
                let outcome = match &answered {
                    Ok(_) => "refunded".to_owned(),
                    Err(why) => why.clone(),
                };
                self.audit(tx, who, "refund_item", args, &outcome)?;
                answered
            }
            other => return Err(Failure::Invalid(format!("no tool named '{other}'"))),
        };
        Ok(outcome_of(answered))
    }

    fn create(
        &self,
        tx: &Connection,
        who: &Identity,
        tenant: &str,
        contact: &NewContact<'_>,
        args: &JsonObject,
    ) -> Result<Outcome, TestbedError> {
        // The id depends only on what is stored and what was asked, so the
        // same conversation writes the same row.
        let count: i64 = tx.query_row("SELECT COUNT(*) FROM contacts", [], |r| r.get(0))?;
        let seed = format!("{tenant}\0{}\0{count}", contact.email.trim().to_lowercase());
        let id = format!("c_{}", &blake3::hash(seed.as_bytes()).to_hex()[..8]);
        tx.execute(
            "INSERT INTO contacts(id, tenant_id, name, email, company) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![id, tenant, contact.name, contact.email, contact.company],
        )?;
        if self.variant != CrmVariant::UnauditedCreate {
            let audited = Identity {
                client: who.client.clone(),
                tenant: tenant.to_owned(),
            };
            self.audit(
                tx,
                &audited,
                "create_contact",
                args,
                &format!("created {id}"),
            )?;
        }
        Ok(Outcome::ok(json!({"created": {
            "id": id,
            "name": contact.name,
            "email": contact.email,
            "company": contact.company,
        }})))
    }

    fn delete(
        &self,
        tx: &Connection,
        who: &Identity,
        id: &str,
        args: &JsonObject,
    ) -> Result<Outcome, TestbedError> {
        let deleted = tx.execute(
            "DELETE FROM contacts WHERE id = ?1 AND tenant_id = ?2",
            params![id, who.tenant],
        )?;
        let outcome = if deleted == 0 { "not found" } else { "deleted" };
        self.audit(tx, who, "delete_contact", args, outcome)?;
        Ok(if deleted == 0 {
            Outcome::error(format!("No contact '{id}' in your CRM."))
        } else {
            Outcome::ok(json!({"deleted": id}))
        })
    }

    fn audit(
        &self,
        tx: &Connection,
        who: &Identity,
        tool: &str,
        args: &JsonObject,
        outcome: &str,
    ) -> Result<(), TestbedError> {
        tx.execute(
            "INSERT INTO audit_log(at, tenant_id, client_id, tool, arguments, outcome)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                self.now,
                who.tenant,
                who.client,
                tool,
                Value::Object(args.clone()).to_string(),
                outcome
            ],
        )?;
        Ok(())
    }

    /// The catalog this variant serves.
    pub fn tools(&self) -> Vec<Tool> {
        catalog(self.variant)
    }
}

fn outcome_of(answered: Answered) -> Outcome {
    match answered {
        Ok(value) => Outcome::ok(value),
        Err(text) => Outcome::error(text),
    }
}

/// A contact as `create_contact` was asked for it.
struct NewContact<'a> {
    name: &'a str,
    email: &'a str,
    company: &'a str,
}

/// Contacts of the caller's tenant whose name or email contains `query`.
fn search(tx: &Connection, who: &Identity, query: &str) -> Result<Outcome, TestbedError> {
    let mut stmt = tx.prepare(
        "SELECT id, name, email, company FROM contacts
         WHERE tenant_id = ?1 AND (instr(lower(name), lower(?2)) > 0 OR instr(lower(email), lower(?2)) > 0)
         ORDER BY id",
    )?;
    let contacts = stmt
        .query_map(params![who.tenant, query.trim()], |r| {
            Ok(json!({
                "id": r.get::<_, String>(0)?,
                "name": r.get::<_, String>(1)?,
                "email": r.get::<_, String>(2)?,
                "company": r.get::<_, String>(3)?,
            }))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Outcome::ok(json!({ "contacts": contacts })))
}

/// `(name, description, properties, required, [readOnly, destructive, idempotent])`.
type Spec = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
    [bool; 3],
);

const SPECS: [Spec; 3] = [
    (
        "search_contacts",
        "Searches your contacts by name or email (case-insensitive, part of a word is enough) and returns each match with its id.",
        &[("query", "A name, an email address, or part of one.")],
        &["query"],
        [true, false, true],
    ),
    (
        "create_contact",
        "Creates a contact in your CRM and returns it with its new id. It does not look for duplicates: search first.",
        &[
            ("name", "Full name."),
            ("email", "Email address."),
            ("company", "Company, if known."),
        ],
        &["name", "email"],
        [false, false, false],
    ),
    (
        "delete_contact",
        "Deletes the contact with the given id. This cannot be undone. Confirm with the user first: show them the record and ask.",
        &[("id", "The contact's id, as search_contacts returned it.")],
        &["id"],
        [false, true, true],
    ),
];

/// The orders desk's tools (`lookup_order`'s description is the variant's).
const ORDER_SPECS: [Spec; 3] = [
    (
        "lookup_order",
        orders::LOOKUP_DESCRIPTION,
        &[("id", "The order's ID, such as o_1001.")],
        &["id"],
        [true, false, true],
    ),
    (
        "search_orders",
        "Searches your orders by customer name, email address or part of an order ID, and returns each match with its ID, date and number of items.",
        &[(
            "query",
            "A name, an email address, an order ID, or part of one.",
        )],
        &["query"],
        [true, false, true],
    ),
    (
        "refund_item",
        "Refunds one item of an order to the customer's original payment method and returns the refund. One call per item; an item already refunded is refused.",
        &[
            ("order_id", "The order's ID."),
            ("item_id", "The item's id, as lookup_order returned it."),
        ],
        &["order_id", "item_id"],
        [false, false, false],
    ),
];

/// The `tools/list` entries of `variant`.
pub(super) fn catalog(variant: CrmVariant) -> Vec<Tool> {
    let orders: &[Spec] = if variant.has_orders() {
        &ORDER_SPECS
    } else {
        &[]
    };
    SPECS
        .iter()
        .chain(orders)
        .map(|&(name, description, properties, required, [ro, de, id])| {
            let description = match (name, variant) {
                ("lookup_order", CrmVariant::OrdersSearchHint) => {
                    format!("{description} {}", orders::SEARCH_HINT)
                }
                _ => description.to_owned(),
            };
            let mut props = serde_json::Map::new();
            for (key, text) in properties {
                props.insert(
                    (*key).to_owned(),
                    json!({"type": "string", "minLength": 1, "description": text}),
                );
            }
            if variant == CrmVariant::TenantOverride && name == "create_contact" {
                props.insert(
                    "tenant_id".into(),
                    json!({"type": "string", "minLength": 1, "description": "Tenant to create the contact in; defaults to yours."}),
                );
            }
            let mut schema = JsonObject::new();
            schema.insert("type".into(), json!("object"));
            schema.insert("properties".into(), Value::Object(props));
            schema.insert("required".into(), json!(required));
            schema.insert("additionalProperties".into(), json!(false));
            let annotations = ToolAnnotations::default()
                .read_only(ro)
                .destructive(de)
                .idempotent(id)
                .open_world(false);
            Tool::new(name, description, Arc::new(schema)).with_annotations(annotations)
        })
        .collect()
}

impl ServerHandler for CrmServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().into_iter().find(|tool| tool.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.as_ref();
        if !self.tools().iter().any(|tool| tool.name == name) {
            return Err(McpError::invalid_params(
                format!("unknown tool '{name}'"),
                None,
            ));
        }
        let args = request.arguments.unwrap_or_default();
        let (text, is_error) = self
            .call(name, &args)
            .map_err(|e| McpError::internal_error(format!("{name} failed: {e}"), None))?;
        let content = vec![ContentBlock::text(text)];
        Ok(if is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
        .into())
    }
}
