-- The CRM testbed's schema: the server runs exactly this text on its store
-- (testbed/src/crm/mod.rs includes it), and every golden case seeds it first.
CREATE TABLE IF NOT EXISTS tenants(
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS clients(
    token_digest TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL REFERENCES tenants(id)
);
CREATE TABLE IF NOT EXISTS contacts(
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    company TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS audit_log(
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    tenant_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    outcome TEXT NOT NULL
);
