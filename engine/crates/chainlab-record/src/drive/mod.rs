//! The client side's loops, whatever the stack: `handshake`'s warm-ups then a count or a
//! duration of attempts one after another (`attempts`), and `load`'s open-loop schedule
//! over connection slots (`load.rs`). A stack supplies a `Slot`: one connection attempt at
//! a time, each a fresh connection, its record built from what it observed.

mod attempt;
mod load;
pub mod population;
mod retry;
mod slot;

use std::time::{Duration, Instant};

use anyhow::bail;

use crate::args::HandshakeArgs;
use crate::record::{ClientRecord, RecordWriter};

pub use attempt::{server_name, timed_handshake, Resumption, Started};
pub use load::{load, schedule};
pub use retry::{mtc_retry_args, MtcRetry};
pub use slot::{drain_later, merged, Attempted, Closing, Drain, ReadClose, Slot};

use std::net::{SocketAddr, TcpStream};

use crate::counting::Counts;
use crate::cpu::ThreadCpu;
use crate::observed::ClientObserved;

/// `handshake`: the warm-ups, then `--count` attempts or as many as `--duration-ms` holds,
/// one record each, serialised and flushed after the attempt's timed span. With
/// `--defer-close`, each connection's close is read after the next attempt's timed span
/// (`Slot::attempt_deferring_close`), and its record written then.
pub fn attempts<S: Slot>(slot: &mut S, args: &HandshakeArgs) -> anyhow::Result<()> {
    if args.count.is_none() && args.duration_ms.is_none() {
        bail!("one of --count N or --duration-ms MS is required");
    }
    // Nothing to measure is a mistake, not an empty success.
    if args.count == Some(0) {
        bail!("--count 0: must be at least 1");
    }
    if args.duration_ms == Some(0) {
        bail!("--duration-ms 0: must be at least 1");
    }
    check_defer_close(args)?;
    let mut out = Written {
        writer: RecordWriter::open(&args.client.records)?,
        tally: Tally::default(),
        closing: None,
    };
    let mut seq = args.client.seq_start;
    let mut one = |slot: &mut S, out: &mut Written, warmup: bool| -> anyhow::Result<()> {
        // With --random-seed, the attempt's own stream.
        crate::random::begin_unit(seq);
        let attempted = crate::cpu::counted_span(|| {
            if args.defer_close {
                slot.attempt_deferring_close(seq, warmup)
            } else {
                slot.attempt(seq, warmup).map(Attempted::Done)
            }
        })?;
        out.take(attempted)?;
        seq += 1;
        Ok(())
    };
    for _ in 0..args.warmup {
        one(slot, &mut out, true)?;
    }
    if let Some(count) = args.count {
        for _ in 0..count {
            one(slot, &mut out, false)?;
        }
    } else if let Some(ms) = args.duration_ms {
        let end = Instant::now() + Duration::from_millis(ms);
        while Instant::now() < end {
            one(slot, &mut out, false)?;
        }
    }
    out.close_last()?;
    if let Some(line) = out.tally.none_succeeded() {
        eprintln!("{}", crate::output::one_line(&line));
    }
    Ok(())
}

/// `--defer-close` where nothing of the close is needed before the next attempt: not with
/// resumption (the next attempt offers the ticket the close reads), a client certificate
/// (the server's verdict comes with the close) or QUIC (whose close is its own).
fn check_defer_close(args: &HandshakeArgs) -> anyhow::Result<()> {
    if !args.defer_close {
        return Ok(());
    }
    let c = &args.client;
    let clash = [
        (c.resume, "--resume"),
        (c.resume_ratio.is_some(), "--resume-ratio"),
        (c.cert_pki.is_some(), "--cert-pki"),
        (
            c.tls.transport != crate::record::Transport::Tcp,
            "--transport quic",
        ),
    ];
    if let Some((_, option)) = clash.iter().find(|(given, _)| *given) {
        bail!(
            "--defer-close with {option}: the next attempt would need what this one's close \
             brings; allowed: --defer-close over TCP without resumption or a client certificate"
        );
    }
    Ok(())
}

/// Where a `handshake` run's records go: each written once made, in attempt order, the
/// one whose close was left for later (`--defer-close`) after the next attempt's timed
/// span.
struct Written {
    writer: RecordWriter,
    tally: Tally,
    closing: Option<Attempted>,
}

impl Written {
    /// An attempt just made: the one before it is finished (its close read) and written
    /// first; this one is written now or kept until the next.
    fn take(&mut self, attempted: Attempted) -> anyhow::Result<()> {
        self.close_last()?;
        match attempted {
            Attempted::Done(record) => self.write(&record),
            later => {
                self.closing = Some(later);
                Ok(())
            }
        }
    }

    /// The attempt kept until now, finished and written.
    fn close_last(&mut self) -> anyhow::Result<()> {
        match self.closing.take() {
            Some(closing) => self.write(&closing.finish()),
            None => Ok(()),
        }
    }

    fn write(&mut self, record: &ClientRecord) -> anyhow::Result<()> {
        self.tally.add(record);
        self.writer.write(record)
    }
}

/// What a `handshake` run's attempts came to: a run where none succeeded says so in one
/// line on standard error (its records say why each failed), so a script that reads no
/// records still learns it measured nothing.
#[derive(Default)]
struct Tally {
    attempts: u64,
    succeeded: u64,
    first_failure: Option<String>,
}

impl Tally {
    fn add(&mut self, record: &ClientRecord) {
        self.attempts += 1;
        if record.outcome == crate::record::Outcome::Ok {
            self.succeeded += 1;
        } else if self.first_failure.is_none() {
            let category = record
                .error_category
                .and_then(|c| serde_json::to_value(c).ok())
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| "failed".to_owned());
            self.first_failure = Some(match &record.error_detail {
                Some(detail) => format!("{category}: {detail}"),
                None => category,
            });
        }
    }

    fn none_succeeded(&self) -> Option<String> {
        (self.attempts > 0 && self.succeeded == 0).then(|| {
            let program = std::env::args_os()
                .next()
                .and_then(|p| {
                    std::path::Path::new(&p)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                })
                .unwrap_or_else(|| "engine".to_owned());
            format!(
                "{program}: handshake: none of {} attempt(s) succeeded; the first failed with \
                 {} (every attempt's record says why)",
                self.attempts,
                self.first_failure
                    .as_deref()
                    .unwrap_or("an unknown failure")
            )
        })
    }
}

/// What every client run checks first, whatever the stack: the timeout and the resumption
/// mix; then pins to `--cpus`.
pub fn check_client(args: &crate::args::ClientArgs) -> anyhow::Result<()> {
    if args.timeout_ms == 0 {
        bail!("--timeout-ms 0: must be at least 1");
    }
    if let Some(ratio) = args.resume_ratio {
        if !(0.0..=1.0).contains(&ratio) {
            bail!("--resume-ratio {ratio}: must be a probability from 0 to 1");
        }
    }
    // Files are checked whatever else is given: `--no-verify` does not drop a bad `--ca`.
    for (flag, file) in [("--ca", &args.ca), ("--untrusted", &args.untrusted)] {
        if let Some(path) = file {
            check_pem(flag, path)?;
        }
    }
    if let Some(cpus) = &args.cpus {
        crate::cpu::pin(cpus)?;
    }
    Ok(())
}

/// A file of PEM certificates, or the one line naming the option and the file.
fn check_pem(flag: &str, path: &std::path::Path) -> anyhow::Result<()> {
    let text = std::fs::read(path)
        .map_err(|e| anyhow::anyhow!("{flag} {}: cannot read it ({e})", path.display()))?;
    if !text
        .windows(b"-----BEGIN CERTIFICATE-----".len())
        .any(|w| w == b"-----BEGIN CERTIFICATE-----")
    {
        bail!(
            "{flag} {}: holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
            path.display()
        );
    }
    Ok(())
}

/// The start of every TCP attempt, whatever the stack: the clocks start, connect() within
/// `timeout`, the socket prepared (no Nagle delay on a flight; reads and writes bounded by
/// `timeout`, so a server that stops answering or reading is recorded as hung). `seen` gets
/// the connect time; a failed connect is recorded in it (its CPU, zero bytes, the failure)
/// and gives no stream.
pub fn connect_tcp(
    addr: &SocketAddr,
    timeout: Duration,
    instrument: bool,
    seen: &mut ClientObserved,
) -> (Started, Option<TcpStream>) {
    let start_unix_ns = crate::unix_ns();
    let cpu_start = instrument.then(ThreadCpu::now);
    let start = Instant::now();
    let connected = TcpStream::connect_timeout(addr, timeout).and_then(|s| {
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(timeout))?;
        s.set_write_timeout(Some(timeout))?;
        Ok(s)
    });
    let connect_end = Instant::now();
    seen.connect_ns = crate::ns_between(start, connect_end);
    let started = Started {
        start_unix_ns,
        cpu_start,
        connect_end,
    };
    match connected {
        Ok(stream) => (started, Some(stream)),
        Err(e) => {
            seen.cpu = cpu_start.map(|c| ThreadCpu::now().since(c));
            if instrument {
                seen.handshake_counts = Some(Counts::default());
                seen.conn_counts = Some(Counts::default());
            }
            seen.failure = Some(crate::failure::connect_failure(&e));
            (started, None)
        }
    }
}

/// A client's arguments as the command line gives them: `--connect` and `extra` (tests).
#[cfg(test)]
pub(crate) fn test_args(extra: &[&str]) -> crate::args::ClientArgs {
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        client: crate::args::ClientArgs,
    }
    let mut argv = vec!["t", "--connect", "127.0.0.1:1"];
    argv.extend_from_slice(extra);
    Cli::parse_from(argv).client
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// `handshake`'s arguments as the command line gives them, records to `records`.
    fn handshake_args(records: &std::path::Path, extra: &[&str]) -> HandshakeArgs {
        use clap::Parser;

        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            handshake: HandshakeArgs,
        }
        let records = records.to_str().expect("a UTF-8 path");
        let mut argv = vec!["t", "--connect", "127.0.0.1:1", "--records", records];
        argv.extend_from_slice(extra);
        Cli::parse_from(argv).handshake
    }

    /// A slot that writes down when each attempt's handshake and each close ran; its
    /// attempts leave their close for later where asked.
    struct Logged(Rc<RefCell<Vec<String>>>);

    fn record(seq: u64, warmup: bool) -> ClientRecord {
        let who = crate::observed::ClientIdentity {
            stack: "test",
            transport: crate::record::Transport::Tcp,
            verify: false,
            instrument: false,
        };
        ClientRecord::observed(who, seq, warmup, 0, Default::default())
    }

    impl Slot for Logged {
        fn attempt(&mut self, seq: u64, warmup: bool) -> anyhow::Result<ClientRecord> {
            self.0.borrow_mut().push(format!("whole {seq}"));
            Ok(record(seq, warmup))
        }

        fn attempt_deferring_close(&mut self, seq: u64, warmup: bool) -> anyhow::Result<Attempted> {
            self.0.borrow_mut().push(format!("handshake {seq}"));
            let log = Rc::clone(&self.0);
            Ok(Attempted::Closing(Box::new(move || {
                log.borrow_mut().push(format!("close {seq}"));
                record(seq, warmup)
            })))
        }
    }

    fn run(extra: &[&str]) -> (Vec<String>, Vec<serde_json::Value>) {
        let dir = std::env::temp_dir().join(format!("chainlab-drive-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("{}.jsonl", extra.join("_").replace('-', "")));
        let log = Rc::new(RefCell::new(Vec::new()));
        attempts(&mut Logged(Rc::clone(&log)), &handshake_args(&file, extra)).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let records = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let log = log.borrow().clone();
        (log, records)
    }

    #[test]
    fn a_deferred_close_is_read_after_the_next_handshake_and_records_keep_their_order() {
        let (log, records) = run(&["--count", "2", "--warmup", "1", "--defer-close"]);
        let expected = [
            "handshake 0",
            "handshake 1",
            "close 0",
            "handshake 2",
            "close 1",
            "close 2",
        ];
        assert_eq!(log, expected);
        let seqs: Vec<_> = records.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
        assert_eq!(seqs, [0, 1, 2]);
        let warm: Vec<_> = records
            .iter()
            .map(|r| r["warmup"].as_bool().unwrap())
            .collect();
        assert_eq!(warm, [true, false, false]);
        // Without the option every attempt closes before the next starts.
        let (log, records) = run(&["--count", "2", "--warmup", "1"]);
        assert_eq!(log, ["whole 0", "whole 1", "whole 2"]);
        assert_eq!(records.len(), 3);
    }

    /// A first connection that fails the MTC landmark check, closed at once.
    struct NoLandmark;

    impl Slot for NoLandmark {
        fn attempt(&mut self, seq: u64, warmup: bool) -> anyhow::Result<ClientRecord> {
            let landmark =
                chainlab_mtc::verify::failure_prefix(chainlab_mtc::verify::LANDMARK_CHECK);
            Ok(ClientRecord {
                error_detail: Some(format!("{landmark} not covered")),
                total_ns: Some(7),
                ..record(seq, warmup)
            })
        }
    }

    #[test]
    fn an_mtc_retry_leaves_its_close_for_later_and_is_one_record_with_its_first() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut slot: MtcRetry<Box<dyn Slot>> = MtcRetry {
            first: Box::new(NoLandmark),
            retry: Box::new(Logged(Rc::clone(&log))),
        };
        let attempted = slot.attempt_deferring_close(3, false).unwrap();
        assert!(matches!(attempted, Attempted::Closing(_)));
        assert_eq!(*log.borrow(), ["handshake 3"]); // the retry's close not yet read
        let merged = attempted.finish();
        assert_eq!(*log.borrow(), ["handshake 3", "close 3"]);
        assert!(merged
            .retry_first_detail
            .as_deref()
            .is_some_and(|d| d.ends_with("not covered")));
        assert_eq!(merged.seq, 3);
        // Closing at once: the retry's whole attempt, then the same record.
        let merged = slot.attempt(4, false).unwrap();
        assert_eq!(log.borrow().last().map(String::as_str), Some("whole 4"));
        assert!(merged.retry_first_detail.is_some());
    }

    /// A first connection that fails the MTC landmark check with the server still sending,
    /// its drain left for later (40 bytes more).
    struct NoLandmarkDraining(Rc<RefCell<Vec<String>>>);

    impl Slot for NoLandmarkDraining {
        fn attempt(&mut self, seq: u64, warmup: bool) -> anyhow::Result<ClientRecord> {
            NoLandmark.attempt(seq, warmup)
        }

        fn attempt_deferring_close(&mut self, seq: u64, warmup: bool) -> anyhow::Result<Attempted> {
            self.0.borrow_mut().push(format!("failed {seq}"));
            let log = Rc::clone(&self.0);
            let record = ClientRecord {
                conn_bytes_read: Some(100),
                ..NoLandmark.attempt(seq, warmup)?
            };
            let drain: Drain = Box::new(move || {
                log.borrow_mut().push(format!("drain {seq}"));
                40
            });
            // As an engine's own step after its attempt (a trust-anchor retry not taken):
            // the failure stays one the MTC retry sees.
            Attempted::Done(record)
                .draining(Some(drain))
                .then_done(|record| Ok(Attempted::Done(record)))
        }
    }

    /// A retry that succeeds, its close left for later (7 bytes read).
    struct Succeeds(Rc<RefCell<Vec<String>>>);

    impl Slot for Succeeds {
        fn attempt(&mut self, _: u64, _: bool) -> anyhow::Result<ClientRecord> {
            unreachable!("the loop defers every close here")
        }

        fn attempt_deferring_close(&mut self, seq: u64, warmup: bool) -> anyhow::Result<Attempted> {
            self.0.borrow_mut().push(format!("handshake {seq}"));
            let log = Rc::clone(&self.0);
            Ok(Attempted::Closing(Box::new(move || {
                log.borrow_mut().push(format!("close {seq}"));
                ClientRecord {
                    conn_bytes_read: Some(7),
                    ..record(seq, warmup)
                }
            })))
        }
    }

    #[test]
    fn a_failed_first_connection_is_retried_at_once_and_read_to_its_end_after_the_next_attempt() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut slot: MtcRetry<Box<dyn Slot>> = MtcRetry {
            first: Box::new(NoLandmarkDraining(Rc::clone(&log))),
            retry: Box::new(Succeeds(Rc::clone(&log))),
        };
        let file =
            std::env::temp_dir().join(format!("chainlab-drain-{}.jsonl", std::process::id()));
        let args = handshake_args(&file, &["--count", "2", "--defer-close"]);
        attempts(&mut slot, &args).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        let _ = std::fs::remove_file(&file);
        // The retry's handshake follows the failure at once; the failed connection's rest and
        // the retry's close are read after the next attempt's handshake.
        let expected = [
            "failed 0",
            "handshake 0",
            "failed 1",
            "handshake 1",
            "close 0",
            "drain 0",
            "close 1",
            "drain 1",
        ];
        assert_eq!(*log.borrow(), expected);
        let records: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(records.len(), 2);
        for (seq, r) in records.iter().enumerate() {
            assert_eq!(r["seq"].as_u64(), Some(seq as u64));
            // Both connections' bytes, the drained ones included.
            assert_eq!(r["conn_bytes_read"].as_u64(), Some(100 + 40 + 7), "{r}");
            assert!(r["retry_first_detail"]
                .as_str()
                .is_some_and(|d| d.ends_with("not covered")));
        }
    }

    #[test]
    fn a_deferred_close_is_refused_where_the_next_attempt_needs_the_close() {
        let file = std::env::temp_dir().join("chainlab-drive-refused.jsonl");
        for (extra, named) in [
            (&["--resume"][..], "--resume"),
            (&["--resume-ratio", "0.5"][..], "--resume-ratio"),
            (&["--cert-pki", "/nonexistent"][..], "--cert-pki"),
            (&["--transport", "quic"][..], "--transport quic"),
        ] {
            let mut argv = vec!["--count", "1", "--defer-close"];
            argv.extend_from_slice(extra);
            let err = check_defer_close(&handshake_args(&file, &argv)).unwrap_err();
            let text = err.to_string();
            assert!(
                text.starts_with(&format!("--defer-close with {named}:")),
                "{text}"
            );
            assert!(text.contains("allowed:"), "{text}");
            assert!(!text.contains('\n'), "{text}");
        }
        assert!(check_defer_close(&handshake_args(&file, &["--defer-close"])).is_ok());
    }
}
