//! The client's half of SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL
//! speaks it: no channel binding (a Unix socket has no TLS to bind to), the
//! user name left empty (the startup message already named the role).
//!
//! The password is used as given, without SASLprep: the same bytes for
//! every ASCII password, which is what the probe and the observer use
//! (PostgreSQL itself falls back to the raw bytes when a password does not
//! normalize).

use std::fs::File;
use std::io::Read;
use std::num::NonZeroU32;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ring::{digest, hmac, pbkdf2};

use crate::protocol::ProtocolError;

pub const MECHANISM: &str = "SCRAM-SHA-256";

/// The GS2 header `n,,` (no channel binding, no authzid), base64.
const GS2_HEADER_B64: &str = "biws";

/// An exchange after the client's first message.
pub struct Exchange {
    nonce: String,
    /// Empty for PostgreSQL; the RFC's test vector names its user.
    user: &'static str,
}

impl Exchange {
    /// A fresh client nonce from the kernel's random source.
    pub fn start() -> Result<Self, ProtocolError> {
        let mut bytes = [0u8; 18];
        File::open("/dev/urandom")?.read_exact(&mut bytes)?;
        Ok(Self {
            nonce: STANDARD.encode(bytes),
            user: "",
        })
    }

    fn client_first_bare(&self) -> String {
        format!("n={},r={}", self.user, self.nonce)
    }

    /// `client-first-message`.
    pub fn client_first(&self) -> String {
        format!("n,,{}", self.client_first_bare())
    }

    /// `client-final-message` for the server's first message, and the
    /// `server-final-message` (`v=…`) a server that knows the password
    /// must answer with.
    pub fn client_final(
        &self,
        password: &str,
        server_first: &str,
    ) -> Result<(String, String), ProtocolError> {
        let mut nonce = None;
        let mut salt = None;
        let mut iterations = None;
        for attribute in server_first.split(',') {
            match attribute.split_once('=') {
                Some(("r", v)) => nonce = Some(v),
                Some(("s", v)) => salt = Some(v),
                Some(("i", v)) => iterations = v.parse::<u32>().ok(),
                _ => {}
            }
        }
        let nonce = nonce.ok_or(ProtocolError::Scram("no server nonce"))?;
        // The server's nonce must extend ours, or this is not our exchange.
        if !nonce.starts_with(&self.nonce) || nonce.len() <= self.nonce.len() {
            return Err(ProtocolError::Scram(
                "the server's nonce does not extend ours",
            ));
        }
        let salt = salt
            .and_then(|s| STANDARD.decode(s).ok())
            .ok_or(ProtocolError::Scram("no salt"))?;
        let iterations = iterations
            .and_then(NonZeroU32::new)
            .ok_or(ProtocolError::Scram("no iteration count"))?;
        let mut salted = [0u8; digest::SHA256_OUTPUT_LEN];
        pbkdf2::derive(
            pbkdf2::PBKDF2_HMAC_SHA256,
            iterations,
            &salt,
            password.as_bytes(),
            &mut salted,
        );
        let salted_key = hmac::Key::new(hmac::HMAC_SHA256, &salted);
        let client_key = hmac::sign(&salted_key, b"Client Key");
        let stored_key = digest::digest(&digest::SHA256, client_key.as_ref());
        let without_proof = format!("c={GS2_HEADER_B64},r={nonce}");
        let auth_message = format!(
            "{},{server_first},{without_proof}",
            self.client_first_bare()
        );
        let signature = hmac::sign(
            &hmac::Key::new(hmac::HMAC_SHA256, stored_key.as_ref()),
            auth_message.as_bytes(),
        );
        let proof: Vec<u8> = client_key
            .as_ref()
            .iter()
            .zip(signature.as_ref())
            .map(|(k, s)| k ^ s)
            .collect();
        let server_key = hmac::sign(&salted_key, b"Server Key");
        let server_signature = hmac::sign(
            &hmac::Key::new(hmac::HMAC_SHA256, server_key.as_ref()),
            auth_message.as_bytes(),
        );
        Ok((
            format!("{without_proof},p={}", STANDARD.encode(proof)),
            format!("v={}", STANDARD.encode(server_signature.as_ref())),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677's test vector (user "user", password "pencil").
    #[test]
    fn the_rfc_7677_exchange_is_reproduced() {
        let exchange = Exchange {
            nonce: "rOprNGfwEbeRWgbNEkqO".into(),
            user: "user",
        };
        assert_eq!(exchange.client_first(), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let server_first = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let (final_message, server) = exchange.client_final("pencil", server_first).unwrap();
        assert_eq!(
            final_message,
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        assert_eq!(server, "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
        // A server nonce that does not extend ours is refused.
        assert!(
            exchange
                .client_final("pencil", "r=other,s=AA==,i=1")
                .is_err()
        );
        assert!(
            exchange
                .client_final("pencil", "r=rOprNGfwEbeRWgbNEkqOx,s=AA==")
                .is_err()
        );
    }
}
