//! `tools/call` arguments read against a tool's input schema, for both of
//! the testbed's servers: unexpected, missing, empty and mistyped arguments
//! are answered as an `isError` result naming the argument (never its value).

use rmcp::model::JsonObject;
use serde_json::Value;

use crate::TestbedError;

/// Why a call produced no tool outcome.
pub(crate) enum Failure {
    /// The arguments do not fit the tool's input schema; reported to the
    /// client as an `isError` result.
    Invalid(String),
    /// The store failed; surfaces as a JSON-RPC internal error.
    Store(TestbedError),
}

impl From<TestbedError> for Failure {
    fn from(e: TestbedError) -> Self {
        Failure::Store(e)
    }
}

impl From<rusqlite::Error> for Failure {
    fn from(e: rusqlite::Error) -> Self {
        Failure::Store(e.into())
    }
}

/// Read access to one call's arguments.
pub(crate) struct Args<'a>(pub(crate) &'a JsonObject);

impl<'a> Args<'a> {
    /// Rejects properties the schema does not declare
    /// (`additionalProperties: false`).
    pub(crate) fn only(&self, allowed: &[&str]) -> Result<(), Failure> {
        match self.0.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(extra) => Err(Failure::Invalid(format!("unexpected argument '{extra}'"))),
            None => Ok(()),
        }
    }

    /// A required, non-empty string.
    pub(crate) fn string(&self, name: &str) -> Result<&'a str, Failure> {
        self.optional(name)?
            .ok_or_else(|| Failure::Invalid(format!("missing required argument '{name}'")))
    }

    /// An optional string; when present it must be a non-empty string.
    pub(crate) fn optional(&self, name: &str) -> Result<Option<&'a str>, Failure> {
        match self.0.get(name) {
            None => Ok(None),
            Some(Value::String(s)) if s.is_empty() => {
                Err(Failure::Invalid(format!("'{name}' must not be empty")))
            }
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(Failure::Invalid(format!("'{name}' must be a string"))),
        }
    }

    /// The raw value of `name`, when present.
    pub(crate) fn get(&self, name: &str) -> Option<&'a Value> {
        self.0.get(name)
    }
}
