//! A mixed client population (`--population`): kinds of client, each offering its own
//! groups and signature schemes, drawn per attempt with their shares from a seed, so a
//! rollout's "70 % of clients are PQ-capable" is one client process whose attempts are.
//!
//! A kind is a whole client of its own (its own TLS context or configuration, built from the
//! shared arguments with its groups and schemes); `Population` picks one per attempt and
//! names the kind in the record.
//!
//! With Merkle Tree Certificates (`--mtc-trust`) a kind may also say which landmarks it
//! holds, a fourth field: `k`, the landmarks up to k intervals old (0: current;
//! `--mtc-landmark-lag`), or `none` (no landmarks: it takes the standalone certificate or
//! retries).

use anyhow::{bail, Context};
use rand::{Rng as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;

use super::slot::{Attempted, Slot};
use crate::args::{ClientArgs, HandshakeArgs};
use crate::record::ClientRecord;

/// How far the shares may miss 1 (they are decimal fractions a campaign wrote).
const SHARE_SLACK: f64 = 1e-6;

/// One kind of client: its name, its share, and the client arguments it runs with.
#[derive(Debug, Clone)]
pub struct Kind {
    pub name: String,
    pub share: f64,
    pub args: ClientArgs,
}

/// The kinds of `--population` (None without it), each with the shared arguments and its
/// own `--groups` and `--sigalgs`.
pub fn kinds(args: &ClientArgs) -> anyhow::Result<Option<Vec<Kind>>> {
    let Some(spec) = &args.population else {
        return Ok(None);
    };
    let mut out: Vec<Kind> = Vec::new();
    for part in spec.split(',') {
        let bad = || {
            format!(
                "--population {spec:?}: bad kind {part:?}; allowed: \
                 name=share/groups/sigalgs[/landmarks], e.g. \
                 pq=0.7/X25519MLKEM768/mldsa65:ecdsa_secp256r1_sha256, landmarks a lag in \
                 landmark intervals (0: current) or 'none'"
            )
        };
        let (name, rest) = part.split_once('=').with_context(bad)?;
        let mut fields = rest.splitn(4, '/');
        let (Some(share), Some(groups), Some(sigalgs)) =
            (fields.next(), fields.next(), fields.next())
        else {
            bail!(bad());
        };
        let landmarks = match fields.next() {
            None => None,
            Some("none") => Some(None),
            Some(k) => Some(Some(k.parse::<u64>().ok().with_context(bad)?)),
        };
        let share: f64 = share
            .parse()
            .ok()
            .filter(|s: &f64| (0.0..=1.0).contains(s))
            .with_context(bad)?;
        if name.is_empty()
            || groups.is_empty()
            || sigalgs.is_empty()
            || out.iter().any(|k| k.name == name)
        {
            bail!(bad());
        }
        let mut kind_args = args.clone();
        kind_args.population = None;
        kind_args.tls.groups = groups.to_owned();
        kind_args.tls.sigalgs = Some(sigalgs.to_owned());
        if let Some(lag) = landmarks {
            if args.mtc_trust.is_none() {
                bail!(
                    "--population {spec:?}: kind {name:?} says which landmarks it holds; \
                     allowed with --mtc-trust only"
                );
            }
            kind_args.mtc_landmarks = lag.is_some();
            kind_args.mtc_landmark_lag = lag.unwrap_or(0);
        }
        out.push(Kind {
            name: name.to_owned(),
            share,
            args: kind_args,
        });
    }
    let total: f64 = out.iter().map(|k| k.share).sum();
    if (total - 1.0).abs() > SHARE_SLACK {
        bail!("--population {spec:?}: the shares sum to {total}; allowed: a sum of 1");
    }
    Ok(Some(out))
}

/// `--population`'s attempts, as `drive::attempts` runs them: one context per kind
/// (`prepare`, with the kind's arguments), a slot on each (`slot`), every attempt drawing
/// its kind; None without `--population`.
pub fn attempts<C>(
    args: &HandshakeArgs,
    prepare: impl Fn(&ClientArgs) -> anyhow::Result<C>,
    slot: impl for<'a> Fn(&'a C, &'a ClientArgs) -> Box<dyn Slot + 'a>,
) -> anyhow::Result<Option<()>> {
    let Some(kinds) = kinds(&args.client)? else {
        return Ok(None);
    };
    let ctxs = kinds
        .iter()
        .map(|k| prepare(&k.args))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let slots = kinds
        .iter()
        .zip(&ctxs)
        .map(|(k, ctx)| slot(ctx, &k.args))
        .collect();
    let mut mixed = Population::new(&kinds, slots, args.client.population_seed);
    super::attempts(&mut mixed, args).map(Some)
}

/// Attempts of a mixed population: each draws its kind, runs that kind's slot and names it.
pub struct Population<S> {
    slots: Vec<(String, S)>,
    cumulative: Vec<f64>,
    draws: ChaCha8Rng,
}

impl<S> Population<S> {
    /// `slots` in the order of `kinds`; `seed` the draws' (`--population-seed`).
    pub fn new(kinds: &[Kind], slots: Vec<S>, seed: u64) -> Self {
        let mut acc = 0.0;
        let cumulative = kinds
            .iter()
            .map(|k| {
                acc += k.share;
                acc
            })
            .collect();
        Population {
            slots: kinds.iter().map(|k| k.name.clone()).zip(slots).collect(),
            cumulative,
            draws: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// The index of the next attempt's kind.
    fn draw(&mut self) -> usize {
        let u: f64 = self.draws.random();
        self.cumulative
            .iter()
            .position(|&c| u < c)
            .unwrap_or(self.cumulative.len() - 1)
    }
}

impl<S: Slot> Slot for Population<S> {
    fn attempt(&mut self, seq: u64, warmup: bool) -> anyhow::Result<ClientRecord> {
        let i = self.draw();
        let (name, slot) = &mut self.slots[i];
        let mut record = slot.attempt(seq, warmup)?;
        record.client_kind = Some(name.clone());
        Ok(record)
    }

    fn attempt_deferring_close(&mut self, seq: u64, warmup: bool) -> anyhow::Result<Attempted> {
        let i = self.draw();
        let (name, slot) = &mut self.slots[i];
        let kind = name.clone();
        let attempted = slot.attempt_deferring_close(seq, warmup)?;
        Ok(attempted.map(move |record| record.client_kind = Some(kind)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive::test_args as args;

    struct Nothing;
    impl Slot for Nothing {
        fn attempt(&mut self, seq: u64, warmup: bool) -> anyhow::Result<ClientRecord> {
            let who = crate::observed::ClientIdentity {
                stack: "test",
                transport: crate::record::Transport::Tcp,
                verify: false,
                instrument: false,
            };
            Ok(ClientRecord::observed(
                who,
                seq,
                warmup,
                0,
                Default::default(),
            ))
        }
    }

    #[test]
    fn kinds_take_their_groups_and_schemes_and_the_shares_must_add_up() {
        let a = args(&[
            "--population",
            "pq=0.7/X25519MLKEM768/mldsa65,classic=0.3/X25519/ed25519",
        ]);
        let k = kinds(&a).unwrap().unwrap();
        assert_eq!(
            (k[0].name.as_str(), k[0].args.tls.groups.as_str()),
            ("pq", "X25519MLKEM768")
        );
        assert_eq!(k[1].args.tls.sigalgs.as_deref(), Some("ed25519"));
        assert!(kinds(&args(&["--population", "a=0.5/X25519/ed25519"])).is_err());
        assert!(kinds(&args(&["--population", "a=0.5/X25519"])).is_err());
        assert!(kinds(&args(&["--population", "a=1.5/X25519/ed25519"])).is_err());
        assert!(kinds(&args(&[])).unwrap().is_none());
    }

    #[test]
    fn kinds_may_say_which_landmarks_they_hold() {
        let spec =
            "now=0.5/X25519/mldsa44/0,late=0.3/X25519/mldsa44/2,never=0.2/X25519/mldsa44/none";
        let a = args(&["--mtc-trust", "trust.json", "--population", spec]);
        let k = kinds(&a).unwrap().unwrap();
        let held: Vec<(bool, u64)> = k
            .iter()
            .map(|k| (k.args.mtc_landmarks, k.args.mtc_landmark_lag))
            .collect();
        assert_eq!(held, [(true, 0), (true, 2), (false, 0)]);
        assert!(
            kinds(&args(&["--population", spec])).is_err(),
            "landmarks without --mtc-trust"
        );
        let bad = "a=1/X25519/mldsa44/soon";
        assert!(kinds(&args(&["--mtc-trust", "t.json", "--population", bad])).is_err());
    }

    /// The draw: each kind's count within its binomial 99.9 % interval, and the same seed
    /// draws the same sequence.
    #[test]
    fn draws_follow_the_shares_and_the_seed() {
        let a = args(&[
            "--population",
            "pq=0.7/X25519MLKEM768/mldsa65,classic=0.3/X25519/ed25519",
        ]);
        let k = kinds(&a).unwrap().unwrap();
        let run = |seed| {
            let mut p = Population::new(&k, vec![Nothing, Nothing], seed);
            (0..10_000)
                .map(|i| p.attempt(i, false).unwrap().client_kind.unwrap())
                .collect::<Vec<_>>()
        };
        let first = run(7);
        assert_eq!(first, run(7));
        assert_ne!(first, run(8));
        let n = first.len() as f64;
        let pq = first.iter().filter(|k| *k == "pq").count() as f64;
        let sd = (n * 0.7 * 0.3).sqrt();
        assert!((pq - 0.7 * n).abs() < 3.29 * sd, "{pq} of {n}");
    }
}
