//! The CRM's orders desk: look an order up, search orders, refund an item.
//!
//! Served only by the `orders` and `orders-search-hint` variants, which
//! differ in one sentence of `lookup_order`'s description and in nothing
//! else — seed 004's weekend incident, where a third party's description
//! edit changed what an agent did while every tool behaved as before.
//!
//! Every query is scoped to the caller's tenant; a refund is a new row (one
//! per item, never an update), so `refund_item` honestly declares itself
//! additive. Ids are the seed's or derived from them, so two runs of one
//! conversation write the same rows.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use crate::TestbedError;

/// The orders tables; run after the CRM's own schema.
pub const ORDERS_SCHEMA: &str = include_str!("../../../experiments/agent/seeds/orders-schema.sql");

/// `lookup_order`'s description as the `orders` variant serves it.
pub const LOOKUP_DESCRIPTION: &str = "Looks up one order by its ID and returns the customer and every item, with its id, its price and whether it was already refunded.";

/// The sentence the `orders-search-hint` variant appends to it.
pub const SEARCH_HINT: &str = "Prefer search_orders when the ID is unknown.";

/// What a tool answered: a result, or an error text for the model.
pub(super) type Answered = Result<Value, String>;

/// The order `id` of `tenant`, with its items and their refund state.
pub(super) fn lookup(tx: &Connection, tenant: &str, id: &str) -> Result<Answered, TestbedError> {
    let order = tx
        .query_row(
            "SELECT id, customer, email, placed_on FROM orders WHERE id = ?1 AND tenant_id = ?2",
            params![id.trim(), tenant],
            |r| {
                Ok(json!({
                    "id": r.get::<_, String>(0)?,
                    "customer": r.get::<_, String>(1)?,
                    "email": r.get::<_, String>(2)?,
                    "placed_on": r.get::<_, String>(3)?,
                }))
            },
        )
        .optional()?;
    let Some(mut order) = order else {
        return Ok(Err(format!("No order '{}' in your CRM.", id.trim())));
    };
    let mut stmt = tx.prepare(
        "SELECT i.id, i.name, i.price_cents, r.id IS NOT NULL
         FROM order_items i LEFT JOIN refunds r ON r.item_id = i.id
         WHERE i.order_id = ?1 ORDER BY i.id",
    )?;
    let items = stmt
        .query_map(params![id.trim()], |r| {
            Ok(json!({
                "id": r.get::<_, String>(0)?,
                "name": r.get::<_, String>(1)?,
                "price_cents": r.get::<_, i64>(2)?,
                "refunded": r.get::<_, bool>(3)?,
            }))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    order["items"] = Value::Array(items);
    Ok(Ok(json!({ "order": order })))
}

/// Orders of `tenant` whose id, customer or email contains `query`.
pub(super) fn search(tx: &Connection, tenant: &str, query: &str) -> Result<Answered, TestbedError> {
    let mut stmt = tx.prepare(
        "SELECT o.id, o.customer, o.placed_on, COUNT(i.id) FROM orders o
         LEFT JOIN order_items i ON i.order_id = o.id
         WHERE o.tenant_id = ?1 AND (instr(lower(o.id), lower(?2)) > 0
             OR instr(lower(o.customer), lower(?2)) > 0 OR instr(lower(o.email), lower(?2)) > 0)
         GROUP BY o.id ORDER BY o.id",
    )?;
    let orders = stmt
        .query_map(params![tenant, query.trim()], |r| {
            Ok(json!({
                "id": r.get::<_, String>(0)?,
                "customer": r.get::<_, String>(1)?,
                "placed_on": r.get::<_, String>(2)?,
                "items": r.get::<_, i64>(3)?,
            }))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Ok(json!({ "orders": orders })))
}

/// Refunds item `item` of order `order`: one new `refunds` row. An item of
/// another order or tenant, or one already refunded, is refused unchanged.
pub(super) fn refund(
    tx: &Connection,
    tenant: &str,
    order: &str,
    item: &str,
    now: i64,
) -> Result<Answered, TestbedError> {
    let (order, item) = (order.trim(), item.trim());
    let price: Option<i64> = tx
        .query_row(
            "SELECT i.price_cents FROM order_items i JOIN orders o ON o.id = i.order_id
             WHERE i.id = ?1 AND o.id = ?2 AND o.tenant_id = ?3",
            params![item, order, tenant],
            |r| r.get(0),
        )
        .optional()?;
    let Some(amount) = price else {
        return Ok(Err(format!("No item '{item}' in order '{order}'.")));
    };
    let refunded: bool = tx.query_row(
        "SELECT EXISTS(SELECT 1 FROM refunds WHERE item_id = ?1)",
        params![item],
        |r| r.get(0),
    )?;
    if refunded {
        return Ok(Err(format!("Item '{item}' was already refunded.")));
    }
    let id = format!("rf_{item}");
    tx.execute(
        "INSERT INTO refunds(id, tenant_id, order_id, item_id, amount_cents, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![id, tenant, order, item, amount, now],
    )?;
    Ok(Ok(json!({"refunded": {
        "id": id,
        "order_id": order,
        "item_id": item,
        "amount_cents": amount,
    }})))
}
