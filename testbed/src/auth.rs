//! The testbed's authorization rule.
//!
//! One function decides whether a presented credential carries authority, and
//! both the server (its `check_credential` tool) and the out-of-band
//! [`crate::probe::CredentialProbe`] call it. A probe that replays a *copy* of
//! the rule could drift from the server; sharing the code makes the probe
//! faithful by construction.

use rusqlite::{Connection, OptionalExtension, params};

use crate::TestbedError;

/// How an API key's authority relates to the grant it was minted under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum AuthRule {
    /// A key stands on its own: revoking its grant leaves it working
    /// (residual authority, as several real providers behave).
    #[default]
    Plain,
    /// A key dies with its grant: it works only while its grant exists and is
    /// active.
    Cascade,
}

/// The rule's answer for one credential, with the evidence behind it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub accepted: bool,
    /// The row the credential matched, e.g. `api_keys/key_0001`; `None` when
    /// nothing matched.
    pub object: Option<String>,
    /// One line naming the column exercised and the checks applied. Never
    /// contains the credential.
    pub basis: String,
}

/// Looks `credential` up among API key secrets, webhook secrets and share-link
/// tokens and applies the rule: accepted iff a row matches, its status is
/// `active`, it has not expired at `now`, and — for API keys under
/// [`AuthRule::Cascade`] — its grant exists and is active.
pub fn authorize(
    conn: &Connection,
    credential: &str,
    now: i64,
    rule: AuthRule,
) -> Result<Decision, TestbedError> {
    let key: Option<(String, String, Option<i64>, Option<String>)> = conn
        .query_row(
            "SELECT id, status, expires_at, grant_id FROM api_keys WHERE secret = ?1",
            params![credential],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    if let Some((id, status, expires_at, grant_id)) = key {
        let mut accepted = live(&status, expires_at, now);
        let checks = match rule {
            AuthRule::Plain => "status/expiry",
            AuthRule::Cascade => {
                accepted = accepted && grant_is_active(conn, grant_id.as_deref())?;
                "status/expiry/grant"
            }
        };
        return Ok(decision("api_keys", &id, "secret", accepted, checks));
    }

    let webhook: Option<(String, String)> = conn
        .query_row(
            "SELECT id, status FROM webhooks WHERE secret = ?1",
            params![credential],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    if let Some((id, status)) = webhook {
        // Webhooks carry no expiry column, so only the status is checked.
        let accepted = live(&status, None, now);
        return Ok(decision("webhooks", &id, "secret", accepted, "status"));
    }

    let share: Option<(String, String, Option<i64>)> = conn
        .query_row(
            "SELECT id, status, expires_at FROM share_links WHERE token = ?1",
            params![credential],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    if let Some((id, status, expires_at)) = share {
        let accepted = live(&status, expires_at, now);
        return Ok(decision(
            "share_links",
            &id,
            "token",
            accepted,
            "status/expiry",
        ));
    }

    Ok(Decision {
        accepted: false,
        object: None,
        basis: "no credential matches".to_owned(),
    })
}

/// Active and not yet expired. A credential expiring exactly at `now` is
/// already dead: `expires_at` is the first instant it no longer works.
fn live(status: &str, expires_at: Option<i64>, now: i64) -> bool {
    status == "active" && expires_at.is_none_or(|t| t > now)
}

fn grant_is_active(conn: &Connection, grant_id: Option<&str>) -> Result<bool, TestbedError> {
    let Some(grant_id) = grant_id else {
        return Ok(false);
    };
    let status: Option<String> = conn
        .query_row(
            "SELECT status FROM grants WHERE id = ?1",
            params![grant_id],
            |r| r.get(0),
        )
        .optional()?;
    Ok(status.as_deref() == Some("active"))
}

fn decision(table: &str, id: &str, column: &str, accepted: bool, checks: &str) -> Decision {
    let verdict = if accepted { "accepts" } else { "rejects" };
    Decision {
        accepted,
        object: Some(format!("{table}/{id}")),
        basis: format!(
            "exercised {table}.{column}: server auth rule {verdict} it ({checks} checked)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store;

    const NOW: i64 = 1_000;

    fn conn() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        store::init_schema(&conn).unwrap();
        conn.execute_batch(
            "INSERT INTO notes(id, body, updated_at) VALUES
                 ('api_key_backup', 'Reminder: rotate keys every quarter.', 0);
             INSERT INTO grants(id, scope, status, created_at) VALUES
                 ('grant_0001', 'notes:write', 'active', 0),
                 ('grant_0002', 'notes:write', 'revoked', 0);
             INSERT INTO api_keys(id, secret, grant_id, status, expires_at, revoked_at, created_at) VALUES
                 ('key_0001', 'wk_active', 'grant_0001', 'active', NULL, NULL, 0),
                 ('key_0002', 'wk_revoked', 'grant_0001', 'revoked', NULL, 900, 0),
                 ('key_0003', 'wk_expired', 'grant_0001', 'active', 999, NULL, 0),
                 ('key_0004', 'wk_orphaned', 'grant_0002', 'active', NULL, NULL, 0),
                 ('key_0005', 'wk_ttl_edge', 'grant_0001', 'active', 1000, NULL, 0),
                 ('key_0006', 'wk_future', 'grant_0001', 'active', 1001, NULL, 0),
                 ('key_0007', 'wk_grantless', NULL, 'active', NULL, NULL, 0);
             INSERT INTO webhooks(id, url, secret, status, created_at) VALUES
                 ('wh_0001', 'https://hooks.invalid/a', 'whsec_live', 'active', 0),
                 ('wh_0002', 'https://hooks.invalid/b', 'whsec_dead', 'disabled', 0);
             INSERT INTO share_links(id, note_id, token, status, expires_at, created_at) VALUES
                 ('share_0001', 'api_key_backup', 'shr_live', 'active', NULL, 0),
                 ('share_0002', 'api_key_backup', 'shr_old', 'active', 10, 0);",
        )
        .unwrap();
        conn
    }

    fn check(credential: &str, rule: AuthRule) -> Decision {
        let d = authorize(&conn(), credential, NOW, rule).unwrap();
        assert!(
            credential.is_empty() || !d.basis.contains(credential),
            "basis leaks the credential: {}",
            d.basis
        );
        d
    }

    #[test]
    fn an_active_key_is_accepted_under_both_rules() {
        for rule in [AuthRule::Plain, AuthRule::Cascade] {
            let d = check("wk_active", rule);
            assert!(d.accepted, "{rule:?}");
            assert_eq!(d.object.as_deref(), Some("api_keys/key_0001"));
            assert!(d.basis.contains("api_keys.secret"), "{}", d.basis);
            assert!(d.basis.contains("accepts"), "{}", d.basis);
        }
    }

    #[test]
    fn a_revoked_key_is_rejected() {
        let d = check("wk_revoked", AuthRule::Plain);
        assert!(!d.accepted);
        assert_eq!(d.object.as_deref(), Some("api_keys/key_0002"));
        assert_eq!(
            d.basis,
            "exercised api_keys.secret: server auth rule rejects it (status/expiry checked)"
        );
    }

    #[test]
    fn expiry_is_exclusive_of_now() {
        assert!(!check("wk_expired", AuthRule::Plain).accepted);
        assert!(!check("wk_ttl_edge", AuthRule::Plain).accepted);
        assert!(check("wk_future", AuthRule::Plain).accepted);
    }

    #[test]
    fn a_revoked_grant_leaves_residual_authority_only_under_the_plain_rule() {
        let plain = check("wk_orphaned", AuthRule::Plain);
        assert!(plain.accepted, "plain rule must not consult the grant");
        let cascade = check("wk_orphaned", AuthRule::Cascade);
        assert!(!cascade.accepted);
        assert_eq!(
            cascade.basis,
            "exercised api_keys.secret: server auth rule rejects it (status/expiry/grant checked)"
        );
        // A key minted without any grant has nothing to cascade from.
        assert!(check("wk_grantless", AuthRule::Plain).accepted);
        assert!(!check("wk_grantless", AuthRule::Cascade).accepted);
    }

    #[test]
    fn webhook_secrets_and_share_tokens_carry_authority() {
        let wh = check("whsec_live", AuthRule::Plain);
        assert!(wh.accepted);
        assert_eq!(wh.object.as_deref(), Some("webhooks/wh_0001"));
        assert!(
            wh.basis.starts_with("exercised webhooks.secret:"),
            "{}",
            wh.basis
        );
        assert!(!check("whsec_dead", AuthRule::Plain).accepted);

        let share = check("shr_live", AuthRule::Cascade);
        assert!(share.accepted, "cascade only concerns api keys");
        assert_eq!(share.object.as_deref(), Some("share_links/share_0001"));
        assert!(
            share.basis.starts_with("exercised share_links.token:"),
            "{}",
            share.basis
        );
        assert!(!check("shr_old", AuthRule::Plain).accepted);
    }

    #[test]
    fn the_decoy_note_is_not_a_credential() {
        for candidate in [
            "api_key_backup",
            "Reminder: rotate keys every quarter.",
            "",
            "key_0001",
        ] {
            let d = check(candidate, AuthRule::Plain);
            assert!(!d.accepted, "{candidate:?}");
            assert_eq!(d.object, None);
            assert_eq!(d.basis, "no credential matches");
        }
    }
}
