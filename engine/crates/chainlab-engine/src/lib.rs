//! Library half of the engine, so integration tests and benchmarks reach the same code.
//!
//! Modules in workflow order: `cli` (arguments), `algorithms` (names the engine accepts),
//! `pki` (hierarchies), `tls` (context, server, client), `record` (the JSON Lines schema),
//! `cpu` (thread clocks, pinning), `primitives` (timed cryptographic operations), `reference` (the host-speed workload), `info` (build
//! facts).

pub mod algorithms;
pub mod cli;
pub mod cpu;
pub mod info;
pub mod ossl;
pub mod pki;
pub mod primitives;
pub mod record;
pub mod reference;
pub mod tls;
