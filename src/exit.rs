//! The one place an error becomes an exit status.
//!
//! Every command returns `Result<ExitStatus>`: a command that concluded says
//! how, and an error ends the run as either an invalid invocation (exit 2,
//! refused before anything was launched) or incomplete (exit 3). Which errors
//! are invalid invocations is decided by their type, here and nowhere else.

use witness_engine::plan::PlanError;
use witness_guidance::GuidanceError;
use witness_jail::JailError;
use witness_lab::cases::CasesError;
use witness_manifest::ManifestError;
use witness_model::exit::ExitStatus;
use witness_sweep::SweepError;
use witness_wire::http::EndpointError;

/// An invalid invocation the binary itself found (a malformed `--store`, an
/// `--out` that cannot be written, ...): exit 2, nothing was launched.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

/// An [`Invalid`] as the error a command returns.
pub fn invalid(message: impl Into<String>) -> anyhow::Error {
    Invalid(message.into()).into()
}

/// The status a document records as its exit code. A code outside the rule
/// is an error (so incomplete), never a guess.
pub fn recorded(code: impl Into<i64>) -> anyhow::Result<ExitStatus> {
    let code = code.into();
    ExitStatus::from_code(code)
        .ok_or_else(|| anyhow::anyhow!("the report records exit code {code}, which is not 0 to 3"))
}

/// How a command that failed with `error` ends: invalid when any error in its
/// chain is one of the typed invalid invocations, else incomplete. Context
/// added on the way up never changes the answer.
pub fn status_of(error: &anyhow::Error) -> ExitStatus {
    if error.chain().any(is_invalid_invocation) {
        ExitStatus::Invalid
    } else {
        ExitStatus::Incomplete
    }
}

fn is_invalid_invocation(cause: &(dyn std::error::Error + 'static)) -> bool {
    cause.is::<Invalid>()
        // A package that declares nothing to run.
        || cause
            .downcast_ref::<witness_sweep::package::PackageError>()
            .is_some_and(witness_sweep::package::PackageError::is_invalid)
        // An audit report for `suggest` that is missing or is not one.
        || cause.is::<witness_engine::suggest::SuggestError>()
        // A plan file that cannot be read or does not parse.
        || cause.is::<PlanError>()
        // A refused --url (or url: side).
        || cause.is::<EndpointError>()
        // A bad --server label, --require-tool or --settle-ms.
        || cause.is::<GuidanceError>()
        || cause
            .downcast_ref::<ManifestError>()
            .is_some_and(ManifestError::is_invalid)
        // A store that cannot be one (a FIFO, a socket, a device).
        || cause
            .downcast_ref::<JailError>()
            .is_some_and(JailError::is_invalid)
        || matches!(
            cause.downcast_ref::<CasesError>(),
            Some(CasesError::NotInstalled { .. })
        )
        // `lab postgres` without dbhub or PostgreSQL: the cases' rule.
        || matches!(
            cause.downcast_ref::<witness_lab::postgres::PostgresLabError>(),
            Some(
                witness_lab::postgres::PostgresLabError::NotInstalled { .. }
                    | witness_lab::postgres::PostgresLabError::NoPostgres(_)
            )
        )
        // A malformed SWEEP.toml, a bad --shard, outputs that cannot merge.
        || cause
            .downcast_ref::<SweepError>()
            .is_some_and(SweepError::is_invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_invalid_invocations_exit_2_even_under_context() {
        let plan = PlanError::Invalid {
            path: "p.toml".into(),
            message: "no calls".into(),
        };
        let errors = [
            invalid("--store x: expected NAME=KIND:PATH"),
            anyhow::Error::from(plan).context("loading the plan"),
            EndpointError::Scheme.into(),
            GuidanceError::ServerLabel.into(),
            ManifestError::Invalid("--out is a directory".into()).into(),
            SweepError::Shard("--shard 3/3: shard 3 of 3 does not exist".into()).into(),
            witness_engine::suggest::SuggestError::SchemaVersion {
                path: "a.json".into(),
                found: "mcp-witness.audit/v2".into(),
            }
            .into(),
        ];
        for error in &errors {
            assert_eq!(status_of(error), ExitStatus::Invalid, "{error:#}");
        }
    }

    #[test]
    fn everything_else_is_incomplete() {
        let errors = [
            anyhow::anyhow!("no plan: tools/list failed"),
            ManifestError::Fetch("the server died".into()).into(),
            SweepError::Io {
                path: "out/dataset.csv".into(),
                source: std::io::Error::other("disk full"),
            }
            .into(),
            anyhow::Error::from(std::io::Error::other("disk full")).context("cannot write"),
        ];
        for error in &errors {
            assert_eq!(status_of(error), ExitStatus::Incomplete, "{error:#}");
        }
    }
}
