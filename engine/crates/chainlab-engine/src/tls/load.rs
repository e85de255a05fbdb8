//! `load`: the open-loop load generator over OpenSSL client slots. The schedule, the slots'
//! threads, coordinated-omission-correct latency and the generator's account of itself are
//! the scaffold's (`chainlab_record::drive::load`); a slot is this engine's `handshake`
//! client over the slot's transport.

use super::client::{self, Client};
use crate::cli::LoadArgs;

pub fn run(args: &LoadArgs) -> anyhow::Result<()> {
    let ctx = client::prepare(&args.client)?;
    let who = Client::new(&ctx, &args.client).identity();
    chainlab_record::drive::load(args, who, || Ok(Client::new(&ctx, &args.client)))
}
