//! PostgreSQL stores: a throwaway cluster per audit, restored from the
//! store's source and observed out of band.
//!
//! - [`cluster`]: `initdb` in the jail, a postmaster on a Unix socket only,
//!   the source (SQL or a `pg_dump` archive) restored, the server handed a
//!   non-superuser role; the cluster ends with its owner.
//! - [`observer`]: committed row changes from a logical replication slot
//!   (`test_decoding`, every table at full replica identity), everything
//!   else from the catalogs.
//! - [`protocol`]: the little of PostgreSQL's wire protocol the observer
//!   and the cluster's setup speak.
//! - [`decode`]: the `test_decoding` output, read.
//! - [`probe`]: roles and grants exercised by use (a login with the
//!   password a call carried, `SET ROLE` and the granted action in a
//!   transaction rolled back), behind the `witness_probes::Probe` trait.
//!
//! No async runtime and no driver crate: the engine stays free of both.

pub mod cluster;
pub mod decode;
pub mod observer;
pub mod probe;
pub mod protocol;
mod scram;

pub use cluster::{Cluster, ClusterError, Source};
pub use observer::PostgresObserver;
pub use probe::PostgresProbe;
