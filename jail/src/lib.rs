//! The jail: a throwaway copy of a server's world, and everything that
//! watches a server run in it.
//!
//! Every command that runs a server someone else wrote (audit, plan,
//! guidance, manifest pins, agent runs, the proxy) runs it here:
//!
//! - the jail itself ([`Jail`]): a fresh temporary directory holding the
//!   declared stores as copy-on-write views of their originals (`cow`), or
//!   copies where no view can be had, a working directory, `HOME` and `TMPDIR`; the
//!   server starts there with a scrubbed environment, in the sandbox this
//!   machine offers ([`sandbox`]: bubblewrap's namespaces and Landlock, each
//!   where it works), and in its own process group. The report records
//!   every isolation layer and whether it held; nothing pretends otherwise.
//!   A store's view or copy cannot lead out ([`copy`]);
//! - decoys in the place of the stores' originals, inside the sandbox's
//!   mount namespace: a write the server attempts on the user's data lands
//!   there and is reported, never lost as a quiet refusal;
//! - [`interrupt`]: a live jail and every launched server are known to the
//!   signal handler, so that no signal strands them;
//! - [`observe`]: the stores observed out of band, one observer per store
//!   plus one over the rest of the jail, and the one observation around a
//!   call (moments and the settle) that the audit, agent runs and the proxy
//!   all make;
//! - [`redact`]: secrets replaced by digests before anything is written;
//! - [`Target`]: the one server a command talks to, launched here or
//!   already running behind a URL, and the one place it is opened.
//!
//! It knows nothing of plans, checks or verdicts: those are the engine's.

pub mod bounds;
pub mod copy;
mod cow;
mod decoy;
pub mod disk;
pub mod interrupt;
mod isolation;
mod jail;
mod listening;
pub mod network;
pub mod observe;
mod process;
pub mod redact;
pub mod sandbox;
mod stale;
mod store;
mod target;
pub mod view;

pub use cow::FORCE_COPY_ENV;
pub use decoy::OriginalWrites;
pub use isolation::Isolation;
pub use jail::{ENV_ALLOWLIST, Jail, JailError, JailSpec, LaunchError, REMOTE_ISOLATION, connect};
pub use store::{JailedStore, StoreKind, StoreSpec, parse_env_pairs, postgres_socket_dir};
pub use target::{OpenTarget, Target};
