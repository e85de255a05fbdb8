//! `load`: the open-loop load generator. One record per scheduled attempt, then one record
//! of the generator itself.
//!
//! The schedule is fixed before the first attempt: `--rate` attempts per second for
//! `--duration-ms`, exactly 1/rate apart (`constant`) or with exponential gaps from `--seed`
//! (`poisson`). `--max-in-flight` connection slots (one thread each, each a `handshake`
//! client of the engine's stack: fresh TCP connection, full or resumed TLS 1.3 handshake,
//! close) take attempts as they come due. The scheduling thread sleeps until each intended
//! start and hands the attempt to a free slot; when every slot holds an open connection the
//! attempt is recorded as failed with `generator_saturated` and never started, so overload
//! is recorded, never hidden by slowing down (wrk2's open loop).
//!
//! Latency is measured from the intended start (`latency_ns` = `sched_lag_ns` + `total_ns`),
//! so a stalled server cannot hide behind a generator that fell behind: an attempt that
//! waited for a slot waited on the server's account (coordinated omission, as wrk2 and
//! HdrHistogram describe it). Nothing is retried.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::slot::Slot;
use crate::args::{Arrivals, LoadArgs};
use crate::cpu::{self, ThreadCpu};
use crate::ns_between;
use crate::observed::ClientIdentity;
use crate::record::{ClientRecord, GeneratorRecord, RecordWriter, SCHEMA};

/// Most attempts one run may schedule: a bound on the records file and on memory (the
/// schedule is computed before the first attempt). 2 million is e.g. 10,000/s for 200 s.
const MAX_ATTEMPTS: f64 = 2_000_000.0;

/// Most connection slots: each is a thread with a TLS connection's buffers.
const MAX_IN_FLIGHT: usize = 4096;

/// The schedule starts this long after the slots are started, so no attempt is late
/// because its slot's thread was still being created.
const START_LEAD: Duration = Duration::from_millis(20);

/// An attempt handed to a slot.
struct Job {
    seq: u64,
    /// Intended start, as an instant and as an offset from the schedule's start.
    due: Instant,
    intended_ns: u64,
}

/// Runs the schedule over `--max-in-flight` slots made by `make_slot` (one per thread, and
/// one for the warm-ups). `who` names the records of attempts that never started.
pub fn load<S, F>(args: &LoadArgs, who: ClientIdentity, make_slot: F) -> anyhow::Result<()>
where
    S: Slot,
    F: Fn() -> anyhow::Result<S> + Sync,
{
    if args.client.mtc_retry {
        bail!("--mtc-retry: handshake only (a load slot never retries)");
    }
    let offsets = schedule(args)?;
    if args.max_in_flight == 0 || args.max_in_flight > MAX_IN_FLIGHT {
        bail!(
            "--max-in-flight {}: allowed 1 to {MAX_IN_FLIGHT}",
            args.max_in_flight
        );
    }
    let cpus = args
        .client
        .cpus
        .as_deref()
        .map(cpu::parse_cpu_list)
        .transpose()?;
    let writer = Mutex::new(RecordWriter::open(&args.client.records)?);
    let write = |record: &ClientRecord| -> anyhow::Result<()> {
        writer
            .lock()
            .map_err(|_| anyhow!("records writer poisoned by a panicked slot"))?
            .write(record)
    };

    // Warm-up, unscheduled and one at a time: the server's and this process's first
    // connections (page faults, lazy initialisation) stay out of the schedule.
    let mut seq = args.client.seq_start;
    {
        let mut slot = make_slot()?;
        for _ in 0..args.warmup {
            write(&slot.attempt(seq, true)?)?;
            seq += 1;
        }
    }

    let in_flight = AtomicUsize::new(0);
    let started = AtomicU64::new(0);
    let (tx, rx) = mpsc::channel::<Job>();
    let rx = Mutex::new(rx);
    let process_cpu_start = cpu::process_cpu_ns();
    let scheduler_cpu_start = ThreadCpu::now();
    let mut saturated = 0u64;
    let mut max_dispatch_lag_ns = 0u64;
    let mut t0 = Instant::now();
    let slot_results: Vec<anyhow::Result<()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..args.max_in_flight)
            .map(|_| {
                scope.spawn(|| {
                    let mut slot = make_slot()?;
                    loop {
                        // The lock is held only while waiting for the next job.
                        let job = match rx.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return Err(anyhow!("a connection slot panicked")),
                        };
                        let Ok(job) = job else {
                            return Ok(()); // the schedule is over
                        };
                        let lag = ns_between(job.due, Instant::now());
                        started.fetch_add(1, Ordering::SeqCst);
                        let result = slot.attempt(job.seq, false);
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                        let mut record = result?;
                        record.intended_ns = Some(job.intended_ns);
                        record.sched_lag_ns = Some(lag);
                        record.latency_ns = record.total_ns.map(|t| lag + t);
                        write(&record)?;
                    }
                })
            })
            .collect();

        t0 = Instant::now() + START_LEAD;
        let mut dispatch = || -> anyhow::Result<()> {
            for (i, &offset) in offsets.iter().enumerate() {
                let due = t0 + Duration::from_nanos(offset);
                let now = Instant::now();
                if due > now {
                    std::thread::sleep(due - now);
                }
                let job_seq = seq + i as u64;
                // A slot is free when fewer connections are open than there are slots; the
                // job may then wait a moment in the queue, on its own latency's account.
                if in_flight.load(Ordering::SeqCst) >= args.max_in_flight {
                    saturated += 1;
                    write(&ClientRecord::not_started(
                        who,
                        job_seq,
                        offset,
                        args.max_in_flight,
                    ))?;
                    continue;
                }
                in_flight.fetch_add(1, Ordering::SeqCst);
                max_dispatch_lag_ns = max_dispatch_lag_ns.max(ns_between(due, Instant::now()));
                tx.send(Job {
                    seq: job_seq,
                    due,
                    intended_ns: offset,
                })
                .map_err(|_| anyhow!("every connection slot has stopped"))?;
            }
            Ok(())
        };
        let dispatched = dispatch();
        drop(tx); // the slots finish the queue, then stop
        let mut results: Vec<anyhow::Result<()>> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("a connection slot panicked")))
            })
            .collect();
        results.push(dispatched);
        results
    });
    slot_results
        .into_iter()
        .collect::<anyhow::Result<Vec<()>>>()?;

    let generator = GeneratorRecord {
        schema: SCHEMA,
        side: "generator",
        rate: args.rate,
        arrivals: args.arrivals.name(),
        duration_ns: args.duration_ms * 1_000_000,
        max_in_flight: args.max_in_flight,
        cpus,
        scheduled: offsets.len() as u64,
        started: started.load(Ordering::SeqCst),
        saturated,
        wall_ns: ns_between(t0, Instant::now()),
        process_cpu_ns: cpu::process_cpu_ns().saturating_sub(process_cpu_start),
        scheduler_cpu_ns: ThreadCpu::now().since(scheduler_cpu_start).total_ns,
        max_dispatch_lag_ns,
    };
    let mut writer = writer
        .into_inner()
        .map_err(|_| anyhow!("records writer poisoned by a panicked slot"))?;
    writer.write(&generator)
}

/// Intended start offsets (ns from the schedule's start), increasing, all below the duration.
pub fn schedule(args: &LoadArgs) -> anyhow::Result<Vec<u64>> {
    let rate = args.rate;
    if !(rate.is_finite() && rate > 0.0) {
        bail!("--rate {rate}: allowed a positive number of attempts per second");
    }
    if args.duration_ms == 0 {
        bail!("--duration-ms 0: must be at least 1");
    }
    let duration_ns = args.duration_ms as f64 * 1e6;
    let expected = rate * args.duration_ms as f64 / 1e3;
    if expected > MAX_ATTEMPTS {
        bail!(
            "--rate {rate} for --duration-ms {} schedules {expected:.0} attempts; allowed at \
             most {MAX_ATTEMPTS:.0} per run",
            args.duration_ms
        );
    }
    let gap_ns = 1e9 / rate;
    let mut out = Vec::with_capacity(expected.ceil() as usize + 1);
    match args.arrivals {
        Arrivals::Constant => {
            let mut i = 0u64;
            loop {
                let t = i as f64 * gap_ns;
                if t >= duration_ns {
                    break;
                }
                out.push(t as u64);
                i += 1;
            }
        }
        Arrivals::Poisson => {
            let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
            let mut t = 0.0f64;
            loop {
                // Exponential gap by inversion: -ln(U)/rate with U in (0, 1].
                let u: f64 = 1.0 - rng.random::<f64>();
                t += -u.ln() * gap_ns;
                if t >= duration_ns || out.len() as f64 > MAX_ATTEMPTS {
                    break;
                }
                out.push(t as u64);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(extra: &[&str]) -> LoadArgs {
        #[derive(Parser)]
        struct Wrap {
            #[command(flatten)]
            load: LoadArgs,
        }
        let mut argv = vec!["x", "--connect", "127.0.0.1:1"];
        argv.extend_from_slice(extra);
        Wrap::parse_from(argv).load
    }

    #[test]
    fn constant_schedule_is_evenly_spaced_within_the_duration() {
        let s = schedule(&args(&["--rate", "100", "--duration-ms", "1000"])).unwrap();
        assert_eq!(s.len(), 100);
        assert_eq!(s[0], 0);
        assert!(s.windows(2).all(|w| w[1] - w[0] == 10_000_000));
    }

    #[test]
    fn poisson_schedule_is_seeded_and_has_about_rate_times_duration() {
        let a = args(&[
            "--rate",
            "1000",
            "--duration-ms",
            "10000",
            "--arrivals",
            "poisson",
        ]);
        let s = schedule(&a).unwrap();
        assert_eq!(s, schedule(&a).unwrap());
        // 10,000 expected; a Poisson count's sd is 100.
        assert!((9_500..=10_500).contains(&s.len()), "{}", s.len());
        assert!(s.windows(2).all(|w| w[1] >= w[0]) && *s.last().unwrap() < 10_000_000_000);
        let other = args(&[
            "--rate",
            "1000",
            "--duration-ms",
            "10000",
            "--arrivals",
            "poisson",
            "--seed",
            "2",
        ]);
        assert_ne!(s, schedule(&other).unwrap());
    }

    #[test]
    fn impossible_schedules_are_refused() {
        for extra in [
            &["--rate", "0", "--duration-ms", "100"][..],
            &["--rate=-5", "--duration-ms", "100"][..],
            &["--rate", "10", "--duration-ms", "0"][..],
            &["--rate", "1e9", "--duration-ms", "100000"][..],
        ] {
            assert!(schedule(&args(extra)).is_err(), "{extra:?}");
        }
    }
}
