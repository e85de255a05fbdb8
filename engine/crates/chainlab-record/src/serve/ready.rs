//! The one line a caller waits for before connecting (docs/engine-records.md): what every
//! engine says alike, then the stack's own facts (library version, served chain,
//! compression, client authentication).

use std::io::Write as _;
use std::net::SocketAddr;

use serde::Serialize;

use crate::args::ServerModel;
use crate::observed::ServerIdentity;
use crate::record::{Transport, SCHEMA};

#[derive(Serialize)]
struct Ready<'a, E: Serialize> {
    event: &'static str,
    addr: String,
    transport: Transport,
    pid: u32,
    stack: &'static str,
    server_model: ServerModel,
    workers: usize,
    record_schema: &'static str,
    #[serde(flatten)]
    engine: &'a E,
}

pub fn print_ready<E: Serialize>(
    addr: SocketAddr,
    who: ServerIdentity,
    workers: usize,
    engine: &E,
) -> anyhow::Result<()> {
    let ready = Ready {
        event: "ready",
        addr: addr.to_string(),
        transport: who.transport,
        pid: std::process::id(),
        stack: who.stack,
        server_model: who.model,
        workers,
        record_schema: SCHEMA,
        engine,
    };
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &ready)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}
