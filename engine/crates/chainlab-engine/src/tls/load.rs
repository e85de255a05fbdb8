//! `load`: the open-loop load generator over OpenSSL client slots. The schedule, the slots'
//! threads, coordinated-omission-correct latency and the generator's account of itself are
//! the scaffold's (`chainlab_record::drive::load`); a slot is this engine's `handshake`
//! client over the slot's transport.

use std::sync::atomic::{AtomicU64, Ordering};

use chainlab_record::drive::population;

use super::client::{self, Client};
use crate::cli::LoadArgs;

pub fn run(args: &LoadArgs) -> anyhow::Result<()> {
    if let Some(kinds) = population::kinds(&args.client)? {
        // Every connection slot draws its kinds from its own seed: --population-seed + the
        // slot's number, in the order the generator opens slots.
        let ctxs = kinds
            .iter()
            .map(|k| client::prepare(&k.args))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let who = Client::new(&ctxs[0], &kinds[0].args).identity();
        let next = AtomicU64::new(args.client.population_seed);
        return chainlab_record::drive::load(args, who, || {
            let slots = kinds
                .iter()
                .zip(&ctxs)
                .map(|(k, ctx)| Client::new(ctx, &k.args))
                .collect();
            let seed = next.fetch_add(1, Ordering::Relaxed);
            Ok(population::Population::new(&kinds, slots, seed))
        });
    }
    let ctx = client::prepare(&args.client)?;
    let who = Client::new(&ctx, &args.client).identity();
    chainlab_record::drive::load(args, who, || Ok(Client::new(&ctx, &args.client)))
}
