//! A small CRM-shaped MCP server for agent runs: tenants, contacts, an
//! audit log, and one client token per tenant.
//!
//! Seed 002's demo, rebuilt in miniature and in our own words: a client
//! presents a token (`CRM_TOKEN` in the server's environment, the way a
//! stdio host passes a credential); the token names a client and its tenant,
//! and every tool sees only that tenant's rows. Every write lands in
//! `audit_log` with the tenant, the client, the tool and its arguments.
//! `delete_contact`'s description asks the model to confirm with the user
//! first; its annotations say it is destructive, which a client may or may
//! not forward.
//!
//! Like the notes server it never reads the wall clock (`at` is the injected
//! `now`) and derives ids from what is already stored, so two runs of the
//! same conversation write the same rows.
//!
//! [`CrmVariant`]s plant server-side gaps an agent run must catch in the
//! store, whatever the client said: a create that writes no audit row, and a
//! create that trusts a tenant named in its arguments. Two more add an
//! orders desk ([`orders`]) and differ only in one sentence of one tool's
//! description: seed 004's weekend incident, a pair whose behaviour delta an
//! agent compare measures.

pub mod orders;
mod server;

use std::path::PathBuf;

pub use server::CrmServer;

use crate::TestbedError;

/// The environment variable holding the client's token.
pub const TOKEN_ENV: &str = "CRM_TOKEN";

/// Every table. `IF NOT EXISTS`, so a server started on a seeded store
/// writes nothing before its first call. The text is the golden cases' first
/// seed file, so the cases and the server cannot disagree on the schema.
pub const SCHEMA: &str = include_str!("../../../experiments/agent/seeds/crm-schema.sql");

/// Which CRM the testbed serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrmVariant {
    /// Tenant-scoped tools, every write audited.
    Honest,
    /// `create_contact` writes the contact but no audit row.
    UnauditedCreate,
    /// `create_contact` takes an optional `tenant_id` and trusts it.
    TenantOverride,
    /// The honest CRM with an orders desk: look up, search, refund.
    Orders,
    /// The same, with `lookup_order`'s description recommending
    /// `search_orders` when the ID is unknown: the only difference.
    OrdersSearchHint,
}

impl CrmVariant {
    pub const ALL: [CrmVariant; 5] = [
        CrmVariant::Honest,
        CrmVariant::UnauditedCreate,
        CrmVariant::TenantOverride,
        CrmVariant::Orders,
        CrmVariant::OrdersSearchHint,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CrmVariant::Honest => "honest",
            CrmVariant::UnauditedCreate => "unaudited-create",
            CrmVariant::TenantOverride => "tenant-override",
            CrmVariant::Orders => "orders",
            CrmVariant::OrdersSearchHint => "orders-search-hint",
        }
    }

    /// Whether it serves the orders desk.
    pub fn has_orders(self) -> bool {
        matches!(self, CrmVariant::Orders | CrmVariant::OrdersSearchHint)
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.name() == name)
    }

    pub fn summary(self) -> &'static str {
        match self {
            CrmVariant::Honest => "every tool sees only the token's tenant; every write is audited",
            CrmVariant::UnauditedCreate => "create_contact writes the contact but no audit row",
            CrmVariant::TenantOverride => {
                "create_contact accepts a tenant_id argument and writes into that tenant"
            }
            CrmVariant::Orders => {
                "the honest CRM with an orders desk: lookup_order, search_orders, refund_item"
            }
            CrmVariant::OrdersSearchHint => {
                "orders, with lookup_order's description ending \"Prefer search_orders when the ID is unknown.\""
            }
        }
    }
}

/// The digest a token is stored under: the store never holds a token.
pub fn token_digest(token: &str) -> String {
    blake3::hash(token.as_bytes()).to_hex().to_string()
}

/// What [`serve_stdio`] needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrmOptions {
    pub variant: CrmVariant,
    /// The SQLite store; created with the schema when absent.
    pub store: PathBuf,
    /// The injected clock, in Unix seconds.
    pub now: i64,
    /// The client's token (`None`: every call is refused as unauthorized).
    pub token: Option<String>,
}

/// Serves the CRM over stdin/stdout until stdin closes.
pub fn serve_stdio(opts: CrmOptions) -> Result<(), TestbedError> {
    crate::block_on(async {
        let server = CrmServer::open(&opts)?;
        crate::serve_handler(server, rmcp::transport::stdio()).await
    })
}

#[cfg(test)]
mod tests;
