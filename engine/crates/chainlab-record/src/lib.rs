//! What every chainlab engine shares, whatever TLS stack it links: the command-line options
//! all take alike (`args`) and the rules between them and the parse of a whole command line
//! (`options`), the trust_anchors extension's lists and retry (`anchors`), the
//! per-connection records (`record`), their machine-readable contract (`contract`:
//! `records.schema.json`) and how a side's observations become a record (`observed`), the
//! server scaffold with its thread-per-connection and event-loop models, ready line and
//! stop signals (`serve`), the client's attempt loop and the open-loop load generator
//! (`drive`), the thread CPU clocks and CPU placement (`cpu`), byte counting at the socket
//! (`counting`), seeded random bytes for instruction counting (`random`), the failures all
//! classify alike (`failure`), the engine features each
//! stack has and the options that ask for one (`features`), the thread model's accept wait (`listen`), documents on
//! standard output that end quietly on a closed pipe (`output`), PEM certificate files
//! named on the command line (`pem`), the `primitives` record and the signature timing of
//! the engines that time signatures only (`primitives`), the command line and `main` of the
//! engines over other stacks (`stack_cli`) and the clocks of a record (`unix_ns`,
//! `ns_between`).
//!
//! The OpenSSL engine (`chainlab-engine`, linked against OpenSSL 3.5 or 4.0), the rustls
//! engine (`chainlab-rustls`) and the BoringSSL engine (`chainlab-boring`) write their
//! records through this crate, so everything downstream of an engine is the same whichever
//! stack produced a record.

pub mod anchors;
pub mod args;
pub mod contract;
pub mod counting;
pub mod cpu;
pub mod drive;
pub mod dual;
pub mod failure;
pub mod features;
pub mod listen;
pub mod mtc;
pub mod netns;
pub mod observed;
pub mod options;
pub mod output;
pub mod parent;
pub mod pem;
pub mod primitives;
pub mod random;
pub mod record;
pub mod serve;
pub mod stack_cli;

use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Wall-clock time as Unix nanoseconds: for ordering records, never for durations.
pub fn unix_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// Nanoseconds between two monotonic instants (saturating; a u64 holds 584 years).
pub fn ns_between(start: Instant, end: Instant) -> u64 {
    end.saturating_duration_since(start).as_nanos() as u64
}
