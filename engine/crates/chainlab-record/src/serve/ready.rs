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

/// The server's client-certificate policy, as the ready line reports it (`--client-ca`).
#[derive(Debug, Clone, Serialize)]
pub struct ClientAuth {
    /// Trust anchors loaded from `--client-ca`.
    pub anchors: usize,
    /// Always true: a client without a certificate is refused (`client_cert_rejected`).
    pub required: bool,
}

impl ClientAuth {
    /// Every client must present a certificate that chains to one of `anchors` anchors.
    pub fn required(anchors: usize) -> Self {
        ClientAuth {
            anchors,
            required: true,
        }
    }
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

/// The answer to a sync (SIGUSR1, `shared::supervise`): every connection accepted so far
/// (`connections`) is over and its record written.
pub(crate) fn print_synced(connections: u64) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(
        &mut out,
        &serde_json::json!({"event": "synced", "connections": connections}),
    )?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields every engine's ready line has are the schema's required ones
    /// (`records.schema.json`, `$defs.ready`) but for the two every stack adds itself
    /// (checked on each engine's real ready line by chainlab-test-support).
    #[test]
    fn every_engines_fields_are_the_schemas_required_ones() {
        #[derive(Serialize)]
        struct Nothing {}
        let ready = Ready {
            event: "ready",
            addr: "127.0.0.1:1".into(),
            transport: Transport::Tcp,
            pid: 1,
            stack: "rustls",
            server_model: ServerModel::Threads,
            workers: 1,
            record_schema: SCHEMA,
            engine: &Nothing {},
        };
        let written = serde_json::to_value(&ready).expect("serializable");
        let mut written: Vec<&String> = written.as_object().expect("an object").keys().collect();
        written.sort();
        let ready_def = crate::contract::definition("ready");
        let mut required: Vec<&str> = ready_def["required"]
            .as_array()
            .expect("required")
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        required.retain(|f| !["served_chain", "cert_compression"].contains(f));
        required.sort_unstable();
        assert_eq!(written, required);
    }
}
