//! DPoP (RFC 9449): proof that the client holding a token holds the key it
//! was bound to. Where the authorization server lists ES256 in
//! `dpop_signing_alg_values_supported`, the client makes a P-256 key for
//! the session (never written anywhere), sends a proof signed with it on
//! every token request, and presents the token it gets (`token_type:
//! DPoP`) with the `DPoP` scheme and a fresh proof, bound to the token by
//! its hash (`ath`), on every request to the MCP endpoint. A server that
//! answers `use_dpop_nonce` with a `DPoP-Nonce` gets the request again with
//! the nonce in the proof (§8 at the token endpoint, §9 at the resource).
//!
//! The proofs are compact JWS on `ring`, as the client assertions are
//! (`jwt.rs`): the header's `jwk` is the public key's two coordinates, and
//! no JOSE crate is needed for one algorithm the client chooses itself.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::digest::{SHA256, digest};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Map, Value, json};

use super::AuthError;

/// The one algorithm the client proves with.
pub const ALGORITHM: &str = "ES256";

/// A session's DPoP key. Its Debug output names the algorithm only.
pub struct DpopKey {
    pair: EcdsaKeyPair,
    rng: SystemRandom,
    /// The public key as a JWK (`kty`, `crv`, `x`, `y`: no private part).
    jwk: Value,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DpopKey(ES256)")
    }
}

impl DpopKey {
    /// A fresh key.
    pub fn generate() -> Result<Self, AuthError> {
        let failed = || AuthError::Config("no DPoP key could be made".into());
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| failed())?;
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .map_err(|_| failed())?;
        // An uncompressed point: 0x04, then x and y, 32 bytes each.
        let point = pair.public_key().as_ref();
        if point.len() != 65 || point[0] != 4 {
            return Err(failed());
        }
        let jwk = json!({
            "kty": "EC",
            "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        });
        Ok(Self { pair, rng, jwk })
    }

    /// A proof for one request: `method` to `url` (its query and fragment
    /// are left out, §4.2), bound to `access_token` when one is presented,
    /// carrying the server's `nonce` when it gave one.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, AuthError> {
        let failed = || AuthError::Config("the DPoP proof could not be signed".into());
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let mut jti = [0u8; 16];
        self.rng.fill(&mut jti).map_err(|_| failed())?;
        let header = json!({"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self.jwk});
        let mut claims = Map::new();
        claims.insert("jti".into(), json!(URL_SAFE_NO_PAD.encode(jti)));
        claims.insert("htm".into(), json!(method));
        claims.insert("htu".into(), json!(target_uri(url)));
        claims.insert("iat".into(), json!(now));
        if let Some(token) = access_token {
            let hash = digest(&SHA256, token.as_bytes());
            claims.insert("ath".into(), json!(URL_SAFE_NO_PAD.encode(hash.as_ref())));
        }
        if let Some(nonce) = nonce {
            claims.insert("nonce".into(), json!(nonce));
        }
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(Value::Object(claims).to_string())
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

/// The `htu` of a request: its URL without query or fragment.
fn target_uri(url: &str) -> &str {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    &url[..end]
}

/// Whether an authorization server's metadata offers DPoP with ES256.
pub fn offered(server: &Value) -> bool {
    server
        .get("dpop_signing_alg_values_supported")
        .and_then(Value::as_array)
        .is_some_and(|algs| algs.iter().any(|a| a.as_str() == Some(ALGORITHM)))
}

#[cfg(test)]
mod tests {
    use ring::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};

    use super::*;

    fn decode(part: &str) -> Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).expect("base64url")).expect("JSON")
    }

    #[test]
    fn a_proof_verifies_with_its_own_jwk_and_binds_method_uri_token_and_nonce() {
        let key = DpopKey::generate().expect("key");
        let proof = key
            .proof(
                "POST",
                "http://127.0.0.1:9/mcp?x=1#f",
                Some("tok"),
                Some("n-1"),
            )
            .expect("signed");
        let parts: Vec<&str> = proof.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header = decode(parts[0]);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert!(header["jwk"].get("d").is_none(), "no private part");
        let coordinate = |c: &str| {
            URL_SAFE_NO_PAD
                .decode(header["jwk"][c].as_str().expect("coordinate"))
                .expect("base64url")
        };
        let mut point = vec![4u8];
        point.extend(coordinate("x"));
        point.extend(coordinate("y"));
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).expect("base64url");
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point)
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
            .expect("verifies with the jwk it carries");
        let claims = decode(parts[1]);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "http://127.0.0.1:9/mcp");
        assert_eq!(claims["nonce"], "n-1");
        assert_eq!(
            claims["ath"],
            json!(URL_SAFE_NO_PAD.encode(digest(&SHA256, b"tok").as_ref()))
        );
        let again = key
            .proof("POST", "http://127.0.0.1:9/token", None, None)
            .expect("signed");
        let claims_again = decode(again.split('.').nth(1).expect("claims"));
        assert_ne!(claims_again["jti"], claims["jti"], "a fresh jti each time");
        assert!(claims_again.get("ath").is_none());
        assert!(claims_again.get("nonce").is_none());
        assert_eq!(format!("{key:?}"), "DpopKey(ES256)");
    }

    #[test]
    fn dpop_is_used_only_where_es256_is_offered() {
        assert!(offered(
            &json!({"dpop_signing_alg_values_supported": ["RS256", "ES256"]})
        ));
        assert!(!offered(
            &json!({"dpop_signing_alg_values_supported": ["RS256"]})
        ));
        assert!(!offered(&json!({})));
    }
}
