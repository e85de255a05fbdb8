use crate::cli::ServeArgs;

pub fn run(_args: &ServeArgs) -> anyhow::Result<()> {
    anyhow::bail!("serve: not implemented yet")
}
