//! End-to-end runs against the pinned published servers
//! (experiments/cases/install.sh, experiments/proxy/install.sh, the sweep's
//! own installs) and the reproduction gates that rerun them. Under
//! `CI=true` a missing install fails, elsewhere it skips with a line.

#[path = "../common/mod.rs"]
mod common;

mod audit_package;
mod everything_e2e;
mod lab_cases;
mod lab_coverage;
mod lab_field;
mod lab_wild;
mod modern_sdk;
mod postgres_lab;
mod postgres_published;
mod proxy_sdk;
mod response_published;
mod sweep_example;
