//! The command line: one module per command, and the argument types they
//! share.

pub mod manifest;

use clap::ValueEnum;
use witness_engine::audit::EraChoice;
use witness_model::guidance::Profile;

/// `--era`: which protocol era to speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EraArg {
    /// Try `server/discover` on a fresh process; fall back to `initialize` on another.
    Auto,
    /// Only `server/discover` (2026-07-28); anything else is incomplete.
    Modern,
    /// Only the legacy `initialize` handshake.
    Legacy,
}

impl From<EraArg> for EraChoice {
    fn from(era: EraArg) -> Self {
        match era {
            EraArg::Auto => EraChoice::Auto,
            EraArg::Modern => EraChoice::Modern,
            EraArg::Legacy => EraChoice::Legacy,
        }
    }
}

/// `--profile`: a client capability profile for `guidance`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProfileArg {
    /// No client capabilities.
    None,
    /// `roots` only.
    Roots,
    /// `sampling` only.
    Sampling,
    /// `elicitation` only.
    Elicitation,
    /// `roots`, `sampling` and `elicitation` together.
    All,
}

impl From<ProfileArg> for Profile {
    fn from(profile: ProfileArg) -> Self {
        match profile {
            ProfileArg::None => Profile::None,
            ProfileArg::Roots => Profile::Roots,
            ProfileArg::Sampling => Profile::Sampling,
            ProfileArg::Elicitation => Profile::Elicitation,
            ProfileArg::All => Profile::All,
        }
    }
}
