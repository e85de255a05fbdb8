//! `load`, the open-loop generator, against a real `serve` on 127.0.0.1: the schedule is
//! kept, latency counts from the intended start through a stalled server, overload is
//! recorded as failures, and the server's whole-connection CPU is recorded.
//!
//! Assertions are on the records (counts, intended times, lags), not on the wall clock of
//! the test; rates stay far below what this 2-core machine does, except where overload is
//! the point.

use chainlab_test_support::engine as common;

use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{engine, pki, read_records, wait_bounded, Server, TempDir, PROCESS_DEADLINE};
use serde_json::Value;

const ML: &str = "ML-DSA-65,ML-DSA-65";

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Runs `load` to completion; (client records, the generator record).
fn load(dir: &TempDir, addr: &str, ca: &str, args: &[&str]) -> (Vec<Value>, Value) {
    let records = dir.join("load.jsonl");
    let mut child = Command::new(engine())
        .args(["load", "--connect", addr, "--ca", ca, "--records"])
        .arg(&records)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_bounded(&mut child, PROCESS_DEADLINE);
    assert!(status.success(), "load failed: {status:?}");
    let mut all = read_records(&records);
    let generator = all.pop().expect("a generator record");
    assert_eq!(generator["side"], "generator", "{generator}");
    assert!(all.iter().all(|r| r["side"] == "client"));
    (all, generator)
}

fn unix_now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

#[test]
fn the_schedule_is_kept_below_capacity() {
    let dir = TempDir::new("load-schedule");
    let p = pki(&dir, "h", ML, "load");
    let server = Server::start(&dir, &p, &["--workers", "2"]);
    let ca = p.join("ca.pem");
    let (recs, g) = load(
        &dir,
        &server.addr,
        ca.to_str().unwrap(),
        &["--rate", "100", "--duration-ms", "3000", "--warmup", "2"],
    );
    // Records arrive in completion order (two slots finish in either order); the schedule
    // is read in intended order.
    let mut measured: Vec<&Value> = recs.iter().filter(|r| r["warmup"] == false).collect();
    measured.sort_by_key(|r| u(&r["intended_ns"]));
    assert_eq!(measured.len(), 300);
    assert_eq!(
        (u(&g["scheduled"]), u(&g["started"]), u(&g["saturated"])),
        (300, 300, 0)
    );
    assert!(
        measured.iter().all(|r| r["outcome"] == "ok"),
        "{:?}",
        measured[0]
    );
    // Intended starts are exactly 10 ms apart from 0, each scheduled once (seq = warm-up +
    // position). How closely the wall clock kept them is the host's affair: `chainlab bench
    // load` prints the achieved rate and scheduling lag instead of a test asserting them.
    for (i, r) in measured.iter().enumerate() {
        assert_eq!(u(&r["intended_ns"]), i as u64 * 10_000_000, "{r}");
        assert_eq!(u(&r["seq"]), 2 + i as u64, "{r}");
    }
    // Latency counts from the intended start: lag + handshake.
    for r in &measured {
        assert_eq!(
            u(&r["latency_ns"]),
            u(&r["sched_lag_ns"]) + u(&r["total_ns"])
        );
    }
    // The generator accounts for itself.
    assert!(u(&g["process_cpu_ns"]) > 0 && u(&g["wall_ns"]) >= 2_990_000_000);
    // The server records the whole connection beside the handshake.
    let (_, _, srv) = server.stop();
    let ok: Vec<&Value> = srv.iter().filter(|r| r["outcome"] == "ok").collect();
    assert_eq!(ok.len(), 302);
    for r in ok {
        assert!(u(&r["conn_cpu_ns"]) >= u(&r["cpu_ns"]), "{r}");
        assert!(u(&r["conn_ns"]) >= u(&r["handshake_ns"]), "{r}");
    }
}

#[test]
fn a_stalled_server_shows_in_latency_and_the_in_flight_cap_in_failures() {
    let dir = TempDir::new("load-stall");
    let p = pki(&dir, "h", ML, "load");
    let server = Server::start(&dir, &p, &["--workers", "4"]);
    let ca = p.join("ca.pem");
    let (rate, pause) = (100.0, Duration::from_millis(500));
    let ((recs, g), (stopped, resumed)) = std::thread::scope(|scope| {
        let pauser = scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(1000));
            let stopped = unix_now_ns();
            server.signal(libc::SIGSTOP);
            std::thread::sleep(pause);
            let resumed = unix_now_ns();
            server.signal(libc::SIGCONT);
            (stopped, resumed)
        });
        let out = load(
            &dir,
            &server.addr,
            ca.to_str().unwrap(),
            &[
                "--rate",
                "100",
                "--duration-ms",
                "2500",
                "--max-in-flight",
                "20",
            ],
        );
        (out, pauser.join().unwrap())
    });
    // The schedule's start on the wall clock: start = t0 + intended + lag for a started one.
    let mut t0s: Vec<i128> = recs
        .iter()
        .filter(|r| !r["sched_lag_ns"].is_null())
        .map(|r| {
            r["start_unix_ns"].as_u64().unwrap() as i128
                - u(&r["intended_ns"]) as i128
                - u(&r["sched_lag_ns"]) as i128
        })
        .collect();
    t0s.sort_unstable();
    let t0 = t0s[t0s.len() / 2];
    let (from, to) = (stopped as i128 - t0, resumed as i128 - t0);
    let saturated = |r: &Value| r["error_category"] == "generator_saturated";
    let during: Vec<&Value> = recs
        .iter()
        .filter(|r| (from..to).contains(&(u(&r["intended_ns"]) as i128)))
        .collect();
    // The pause as it happened (the pauser's sleep may overshoot on a busy host): attempts
    // are due every 10 ms, so it holds its length / 10 ms of them, give or take the edges
    // and the error of t0's estimate.
    let paused_s = (to - from) as f64 / 1e9;
    let due = rate * paused_s;
    assert!(
        (during.len() as f64 - due).abs() <= 3.0,
        "{} due in the pause of {paused_s:.3} s",
        during.len()
    );
    // Every attempt due while the server was stopped waited for it, or never started.
    for r in &during {
        if saturated(r) {
            assert!(r["latency_ns"].is_null() && r["total_ns"].is_null(), "{r}");
            continue;
        }
        let waited = to - u(&r["intended_ns"]) as i128;
        assert!(
            u(&r["latency_ns"]) as i128 >= waited - 30_000_000,
            "latency {} < the stall's remaining {waited} ns: {r}",
            r["latency_ns"]
        );
    }
    // 20 slots held 20 stalled connections; the rest of the pause's attempts saturated.
    let n_saturated = recs.iter().filter(|r| saturated(r)).count() as u64;
    assert_eq!(n_saturated, u(&g["saturated"]));
    assert!(n_saturated >= 20, "{n_saturated} saturated");
    let long = recs
        .iter()
        .filter(|r| r["latency_ns"].as_u64().is_some_and(|l| l >= 300_000_000))
        .count() as f64;
    let expected = due;
    let seen = long + n_saturated as f64;
    assert!(
        (0.8 * expected..=1.3 * expected).contains(&seen),
        "{long} slow + {n_saturated} saturated, expected about {expected}"
    );
}

#[test]
fn past_capacity_throughput_stops_growing_and_failures_are_recorded() {
    let dir = TempDir::new("load-saturate");
    let p = pki(&dir, "h", ML, "load");
    // One server core, the generator on the other: the server is the bottleneck.
    let server = Server::start(&dir, &p, &["--workers", "2", "--cpus", "0"]);
    let ca = p.join("ca.pem");
    let ok_rate = |recs: &[Value], g: &Value| {
        let ok = recs.iter().filter(|r| r["outcome"] == "ok").count() as f64;
        ok / (u(&g["wall_ns"]) as f64 / 1e9)
    };
    let median_latency = |recs: &[Value]| {
        let mut l: Vec<u64> = recs
            .iter()
            .filter_map(|r| r["latency_ns"].as_u64())
            .collect();
        l.sort_unstable();
        l[l.len() / 2]
    };
    let common = [
        "--duration-ms",
        "2000",
        "--cpus",
        "1",
        "--max-in-flight",
        "32",
    ];
    let (low, gl) = load(
        &dir,
        &server.addr,
        ca.to_str().unwrap(),
        &[&["--rate", "100"][..], &common[..]].concat(),
    );
    let (high, gh) = load(
        &dir,
        &server.addr,
        ca.to_str().unwrap(),
        &[&["--rate", "3000"][..], &common[..]].concat(),
    );
    // Far below capacity every attempt is started and succeeds (how closely the wall clock
    // kept the rate is `chainlab bench load`'s figure, not this test's).
    assert_eq!(u(&gl["saturated"]), 0);
    assert!(low.iter().all(|r| r["outcome"] == "ok"), "{:?}", low[0]);
    assert_eq!(low.len() as u64, u(&gl["scheduled"]));
    let achieved_high = ok_rate(&high, &gh);
    // Far past capacity: the achieved rate falls well short of the offered one ...
    assert!(achieved_high < 0.6 * 3000.0, "{achieved_high}/s at 3000/s");
    // ... latency grows, and the excess is recorded by category, never silently dropped.
    assert!(median_latency(&high) > 5 * median_latency(&low));
    let failed: Vec<&Value> = high.iter().filter(|r| r["outcome"] != "ok").collect();
    assert!(!failed.is_empty());
    assert!(failed.iter().all(|r| r["error_category"].is_string()));
    assert_eq!(high.len() as u64, u(&gh["scheduled"]));
}
