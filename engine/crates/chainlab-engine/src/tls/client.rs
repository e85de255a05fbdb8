use crate::cli::HandshakeArgs;

pub fn run(_args: &HandshakeArgs) -> anyhow::Result<()> {
    anyhow::bail!("handshake: not implemented yet")
}
