use crate::cli::PkiArgs;

pub fn run(_args: &PkiArgs) -> anyhow::Result<()> {
    anyhow::bail!("pki: not implemented yet")
}
