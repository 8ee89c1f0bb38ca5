//! `private_key_jwt` (RFC 7523 §2.2, OpenID Connect Core §9): a client that
//! proves itself at the token endpoint with a short-lived JWT signed by its
//! own key instead of a shared secret. ES256 (P-256, SHA-256) only, the
//! algorithm the MCP client-credentials extension names first.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use serde_json::json;

use super::AuthError;

/// The `client_assertion_type` of a JWT client assertion.
pub const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How long an assertion is valid: long enough for one token request.
const LIFETIME_SECS: u64 = 300;

/// A client's P-256 private key. It never prints: its `Debug` names only
/// the algorithm.
pub struct ClientKey {
    pair: EcdsaKeyPair,
    rng: SystemRandom,
}

impl std::fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientKey(ES256)")
    }
}

impl ClientKey {
    /// A key from PEM text: a `PRIVATE KEY` block (PKCS#8) holding a P-256
    /// key. Anything else is refused with a fixed description.
    pub fn from_pem(pem: &str) -> Result<Self, AuthError> {
        let refused = || {
            AuthError::Config(
                "the client key is not a PEM PKCS#8 P-256 private key (BEGIN PRIVATE KEY)".into(),
            )
        };
        let body = pem
            .split("-----BEGIN PRIVATE KEY-----")
            .nth(1)
            .and_then(|rest| rest.split("-----END PRIVATE KEY-----").next())
            .ok_or_else(refused)?;
        let base64: String = body.chars().filter(|c| !c.is_whitespace()).collect();
        let der = STANDARD.decode(base64).map_err(|_| refused())?;
        let rng = SystemRandom::new();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng)
            .map_err(|_| refused())?;
        Ok(Self { pair, rng })
    }

    /// A fresh assertion for `client_id` (its `iss` and `sub`) addressed to
    /// the authorization server `audience` (its issuer identifier), with a
    /// random `jti` so that no two are alike.
    pub fn assertion(&self, client_id: &str, audience: &str) -> Result<String, AuthError> {
        let failed = || AuthError::Config("the client assertion could not be signed".into());
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let mut nonce = [0u8; 16];
        self.rng.fill(&mut nonce).map_err(|_| failed())?;
        let header = json!({"alg": "ES256", "typ": "JWT"});
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "jti": URL_SAFE_NO_PAD.encode(nonce),
            "iat": now,
            "exp": now + LIFETIME_SECS,
        });
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .pair
            .sign(&self.rng, signing_input.as_bytes())
            .map_err(|_| failed())?;
        Ok(format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{ECDSA_P256_SHA256_FIXED, KeyPair, UnparsedPublicKey};

    fn pem_of(der: &[u8]) -> String {
        format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            STANDARD.encode(der)
        )
    }

    #[test]
    fn an_assertion_verifies_with_the_public_key_and_names_the_client_and_audience() {
        let rng = SystemRandom::new();
        let der =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("a key");
        let key = ClientKey::from_pem(&pem_of(der.as_ref())).expect("read back");
        let jwt = key
            .assertion("client-7", "http://127.0.0.1:9")
            .expect("signed");
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let public = UnparsedPublicKey::new(
            &ECDSA_P256_SHA256_FIXED,
            key.pair.public_key().as_ref().to_vec(),
        );
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).expect("base64url");
        public
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
            .expect("the signature verifies");
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).expect("base64url"))
                .expect("JSON");
        assert_eq!(claims["iss"], "client-7");
        assert_eq!(claims["sub"], "client-7");
        assert_eq!(claims["aud"], "http://127.0.0.1:9");
        assert_ne!(
            key.assertion("client-7", "a").expect("signed"),
            key.assertion("client-7", "a").expect("signed"),
            "a fresh jti each time"
        );
        assert_eq!(format!("{key:?}"), "ClientKey(ES256)");
    }

    #[test]
    fn what_is_not_a_pkcs8_p256_key_is_refused() {
        assert!(ClientKey::from_pem("not a key").is_err());
        assert!(ClientKey::from_pem(&pem_of(b"garbage")).is_err());
        assert!(
            ClientKey::from_pem("-----BEGIN PRIVATE KEY-----\n!!\n-----END PRIVATE KEY-----")
                .is_err()
        );
    }
}
