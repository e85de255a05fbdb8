//! chainlab's emulated network link, as a library so tests reach the same code as the binary.
//!
//! Modules top-down: `cli` (arguments and their validation), `forward` (the event loop),
//! `shaper` (what happens to each packet: a pure function of arrival times), `tun` (devices in
//! other namespaces), `rng` (the seeded generator), `sys` (checked Linux calls).

pub mod cli;
pub mod forward;
pub mod rng;
pub mod shaper;
mod sys;
mod tun;
