//! The rule set that finds bare secrets in text, keyed or not.
//!
//! Written for mcp-witness in the style of the common secret scanners'
//! rule lists (one pattern per provider's published token shape), not
//! copied from any of them. Each rule names the capture group that holds
//! the secret (0: the whole match). Every pattern is run by the `regex`
//! crate, whose matching time is linear in the text: a hostile server
//! cannot make a scan slow. The tests below hold one made-up example per
//! rule, and a few near misses that must stay untouched.
//!
//! To add a provider: one [`Rule`] with a pattern anchored on the token's
//! fixed prefix, and a positive and a negative example in the tests.

use std::sync::OnceLock;

use regex::Regex;

/// One shape of secret.
pub struct Rule {
    pub id: &'static str,
    pub pattern: &'static str,
    /// The capture group that holds the secret; 0 is the whole match.
    pub group: usize,
    /// Minimal Shannon entropy (bits per character) of the secret, for
    /// rules that would otherwise take ordinary words.
    pub min_entropy: f64,
}

pub const RULES: &[Rule] = &[
    Rule {
        id: "private-key-block",
        pattern: r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]{16,}?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----",
        group: 0,
        min_entropy: 0.0,
    },
    Rule {
        id: "aws-access-key-id",
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA)[0-9A-Z]{16}\b",
        group: 0,
        min_entropy: 0.0,
    },
    Rule {
        id: "github-token",
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
        group: 0,
        min_entropy: 0.0,
    },
    Rule {
        id: "gitlab-token",
        pattern: r"\bgl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,}",
        group: 0,
        min_entropy: 0.0,
    },
    Rule {
        id: "slack-token",
        pattern: r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
        group: 0,
        min_entropy: 0.0,
    },
    Rule {
        id: "slack-webhook",
        pattern: r"https://hooks\.slack\.com/services/[A-Za-z0-9_/]{20,}",
        group: 0,
        min_entropy: 0.0,
    },
    Rule {
        id: "stripe-key",
        pattern: r"\b(?:sk|rk|pk|whsec)_(?:live|test)_[A-Za-z0-9]{16,}\b",
        group: 0,
        min_entropy: 0.0,
    },
    Rule {
        id: "sk-dash-key",
        // OpenAI, Anthropic and the many services that copied the shape:
        // sk-…, sk-live-…, sk-proj-…, sk-ant-…
        pattern: r"\bsk-(?:[a-z]{2,8}-)?[A-Za-z0-9_-]{16,}",
        group: 0,
        min_entropy: 3.0,
    },
    Rule {
        id: "google-api-key",
        pattern: r"\bAIza[0-9A-Za-z_-]{35}\b",
        group: 0,
        min_entropy: 0.0,
    },
    Rule {
        id: "npm-token",
        pattern: r"\bnpm_[A-Za-z0-9]{36}\b",
        group: 0,
        min_entropy: 0.0,
    },
    Rule {
        id: "pypi-token",
        pattern: r"\bpypi-[A-Za-z0-9_-]{50,}",
        group: 0,
        min_entropy: 0.0,
    },
    Rule {
        id: "sendgrid-key",
        pattern: r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b",
        group: 0,
        min_entropy: 0.0,
    },
    Rule {
        id: "twilio-key",
        pattern: r"\bSK[0-9a-f]{32}\b",
        group: 0,
        min_entropy: 0.0,
    },
    Rule {
        id: "jwt",
        pattern: r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        group: 0,
        min_entropy: 0.0,
    },
    Rule {
        id: "bearer-token",
        pattern: r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{12,}=*)",
        group: 1,
        min_entropy: 2.5,
    },
    Rule {
        id: "url-password",
        pattern: r"[a-z][a-z0-9+.-]{1,20}://[^/\s:@]{1,64}:([^/\s@]{6,128})@",
        group: 1,
        min_entropy: 2.0,
    },
    Rule {
        id: "credential-word-then-token",
        // A high-entropy token right after a credential word in prose:
        // "the api key is 8fK2…", "secret 9Qz…".
        pattern: r"(?i)\b(?:api[ _-]?key|secret|token|passw(?:or)?d|credential|access[ _-]?key)s?\b(?:\s+(?:is|was|of))?[\s:=]{1,3}['`]?([A-Za-z0-9+/_.-]{20,200}={0,2})",
        group: 1,
        min_entropy: 3.5,
    },
];

fn compiled() -> &'static [(&'static Rule, Option<Regex>)] {
    static COMPILED: OnceLock<Vec<(&'static Rule, Option<Regex>)>> = OnceLock::new();
    COMPILED.get_or_init(|| {
        RULES
            .iter()
            // A rule that does not compile is left out (a test fails on it).
            .map(|rule| (rule, Regex::new(rule.pattern).ok()))
            .collect()
    })
}

/// Every secret the rules find in `text`, with the rule that found it.
pub fn find(text: &str) -> Vec<(&'static str, String)> {
    let mut found = Vec::new();
    for (rule, regex) in compiled() {
        let Some(regex) = regex else { continue };
        for captures in regex.captures_iter(text) {
            let Some(secret) = captures.get(rule.group) else {
                continue;
            };
            let secret = secret.as_str();
            if entropy(secret) >= rule.min_entropy && !looks_like_a_word(secret, rule) {
                found.push((rule.id, secret.to_owned()));
            }
        }
    }
    found
}

/// A token after a credential word must mix letters and digits: a long
/// word or an identifier in prose is not a secret.
fn looks_like_a_word(secret: &str, rule: &Rule) -> bool {
    if rule.min_entropy < 3.0 {
        return false;
    }
    let letters = secret.chars().any(|c| c.is_ascii_alphabetic());
    let digits = secret.chars().any(|c| c.is_ascii_digit());
    !(letters && digits)
}

/// Shannon entropy of `text` in bits per character.
pub fn entropy(text: &str) -> f64 {
    let mut counts = std::collections::BTreeMap::new();
    let mut total = 0usize;
    for c in text.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
        total += 1;
    }
    if total == 0 {
        return 0.0;
    }
    let n = total as f64;
    counts
        .values()
        .map(|&k| {
            let p = k as f64 / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One made-up secret per rule, each in a sentence a server might send.
    const EXAMPLES: &[(&str, &str, &str)] = &[
        (
            "private-key-block",
            "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END RSA PRIVATE KEY-----\nbye",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END RSA PRIVATE KEY-----",
        ),
        (
            "aws-access-key-id",
            "id AKIAZ7Q3EXAMPLE4KEY9, ok",
            "AKIAZ7Q3EXAMPLE4KEY9",
        ),
        (
            "github-token",
            "push with ghp_0123456789abcdefghijABCDEFGHIJ012345 now",
            "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        ),
        (
            "gitlab-token",
            "glpat-Ab3dE6gH9jK2mN5pQ8sT ok",
            "glpat-Ab3dE6gH9jK2mN5pQ8sT",
        ),
        (
            "slack-token",
            "xoxb-1234567890-abcdefABCDEF",
            "xoxb-1234567890-abcdefABCDEF",
        ),
        (
            "slack-webhook",
            "post to https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX",
            "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX",
        ),
        (
            "stripe-key",
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        ),
        (
            "sk-dash-key",
            "using sk-live-9fK2mQ7xL4pR8tZ1vB6n for billing",
            "sk-live-9fK2mQ7xL4pR8tZ1vB6n",
        ),
        (
            "google-api-key",
            "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q!",
            "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
        ),
        (
            "npm-token",
            "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
            "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        ),
        (
            "pypi-token",
            "pypi-AgEIcHlwaS5vcmcCJGE0ZjM5YjA1LWI0ZjMtNDk1Mi1iMTJmZq9X ok",
            "pypi-AgEIcHlwaS5vcmcCJGE0ZjM5YjA1LWI0ZjMtNDk1Mi1iMTJmZq9X",
        ),
        (
            "sendgrid-key",
            "SG.abcdefghij0123456789AB.abcdefghij0123456789abcdefghij0123456789ABC",
            "SG.abcdefghij0123456789AB.abcdefghij0123456789abcdefghij0123456789ABC",
        ),
        (
            "twilio-key",
            "SK0123456789abcdef0123456789abcdef",
            "SK0123456789abcdef0123456789abcdef",
        ),
        (
            "jwt",
            "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ3aXRuZXNzIn0.c2lnbmF0dXJl end",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ3aXRuZXNzIn0.c2lnbmF0dXJl",
        ),
        (
            "bearer-token",
            "Authorization: Bearer 8fK2mQ7xL4pR8tZ1vB6n",
            "8fK2mQ7xL4pR8tZ1vB6n",
        ),
        (
            "url-password",
            "postgres://app:Pa55w0rd!x@db.internal/app",
            "Pa55w0rd!x",
        ),
        (
            "credential-word-then-token",
            "the api key is Q9x7Lm2Vb8Nc4Zr6Tw1Ys3Kd5",
            "Q9x7Lm2Vb8Nc4Zr6Tw1Ys3Kd5",
        ),
    ];

    #[test]
    fn every_rule_compiles_and_finds_its_example() {
        for (rule, regex) in compiled() {
            assert!(regex.is_some(), "rule {} does not compile", rule.id);
            let Some((_, text, secret)) = EXAMPLES.iter().find(|(id, _, _)| *id == rule.id) else {
                panic!("rule {} has no example", rule.id);
            };
            let found = find(text);
            assert!(
                found.iter().any(|(id, s)| *id == rule.id && s == secret),
                "rule {} missed {secret:?} in {text:?}: {found:?}",
                rule.id
            );
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for text in [
            "the token is missing; please pass a token parameter",
            "secret: notes_secretary_department",
            "sk-learn is a library",
            "key_0001 was created at 2026-01-01T00:00:00Z",
            "bearer of bad news",
            "digest 3f2a9c1d",
            "https://example.com/a/b",
            "password: hunter2",
        ] {
            assert_eq!(find(text), [], "{text}");
        }
    }
}
