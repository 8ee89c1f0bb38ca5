//! The isolation battery: hostile servers against the jail (bubblewrap,
//! Landlock, the network observer's nftables sink) and the PostgreSQL
//! clusters; they need those installed (`.ci/run` does) and assert which
//! layers held.

#[path = "../common/mod.rs"]
mod common;

mod hostile;
mod hostile_observation;
mod listening;
mod network_observer;
mod postgres_store;
mod refused_attempts;
mod views;
