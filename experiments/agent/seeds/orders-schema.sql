-- The CRM's orders desk, served by the `orders` and `orders-search-hint`
-- variants only: orders, their items, and one refund per refunded item.
-- The server runs exactly this text after crm-schema.sql
-- (testbed/src/crm/orders.rs includes it); the refund cases seed it second.
CREATE TABLE IF NOT EXISTS orders(
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    customer TEXT NOT NULL,
    email TEXT NOT NULL,
    placed_on TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS order_items(
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders(id),
    name TEXT NOT NULL,
    price_cents INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS refunds(
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    order_id TEXT NOT NULL REFERENCES orders(id),
    item_id TEXT NOT NULL UNIQUE REFERENCES order_items(id),
    amount_cents INTEGER NOT NULL,
    at INTEGER NOT NULL
);
