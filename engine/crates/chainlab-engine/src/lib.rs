//! Library half of the engine, so integration tests and benchmarks reach the same code.
//!
//! Modules in workflow order: `cli` (arguments), `algorithms` (names the engine accepts),
//! `pki` (hierarchies), `tls` (context, server, client), `record` (the JSON Lines schema),
//! `cpu` (thread clocks, pinning), `primitives` (timed cryptographic operations), `random`
//! (the seeded random source of `--random-seed`), `reference` (the host-speed workload),
//! `info` (build facts).

pub mod algorithms;
pub mod build;
pub mod cli;
pub mod info;
pub mod ossl;
pub mod pki;
pub mod primitives;
pub mod random;
pub mod reference;
pub mod tls;

// The record schema and the CPU clocks are shared with the rustls engine (chainlab-record).
pub use chainlab_record::{cpu, record};
