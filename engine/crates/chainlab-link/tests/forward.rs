//! The real forwarder between two namespaces this test creates (needs root; skipped, with the
//! reason printed, otherwise). Traffic flows only between 10.77.0.1 and 10.77.0.2, addresses
//! that exist only inside those two namespaces.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Namespaces {
    names: [String; 2],
}

impl Namespaces {
    fn create(tag: &str) -> Self {
        let pid = std::process::id();
        let names = [
            format!("clink-test-{pid}-{tag}-a"),
            format!("clink-test-{pid}-{tag}-b"),
        ];
        for ns in &names {
            ip(&["netns", "add", ns]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
            // No IPv6 chatter: every packet on the link is one the test sent.
            let status = Command::new("ip")
                .args(["netns", "exec", ns, "sh", "-c"])
                .arg(concat!(
                    "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6 && ",
                    "echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6"
                ))
                .status();
            assert!(status.is_ok_and(|s| s.success()), "disable IPv6 in {ns}");
        }
        Namespaces { names }
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.names {
            let _ = Command::new("ip").args(["netns", "delete", ns]).status();
        }
    }
}

struct Forwarder {
    child: Child,
    lines: BufReader<std::process::ChildStdout>,
    ready: serde_json::Value,
}

impl Forwarder {
    fn start(ns: &Namespaces, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_chainlab-link"))
            .args(["--a-netns", &ns.names[0], "--b-netns", &ns.names[1]])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut fwd = Forwarder {
            child,
            lines: BufReader::new(stdout),
            ready: serde_json::Value::Null,
        };
        fwd.ready = fwd.line();
        assert_eq!(fwd.ready["event"], "ready", "{}", fwd.ready);
        for (ns, local, peer) in [
            (&ns.names[0], "10.77.0.1", "10.77.0.2"),
            (&ns.names[1], "10.77.0.2", "10.77.0.1"),
        ] {
            ip(&["-n", ns, "link", "set", "chainlab0", "up"]);
            let local = format!("{local}/32");
            let peer = format!("{peer}/32");
            ip(&[
                "-n",
                ns,
                "addr",
                "add",
                &local,
                "peer",
                &peer,
                "dev",
                "chainlab0",
            ]);
        }
        fwd
    }

    fn line(&mut self) -> serde_json::Value {
        let mut line = String::new();
        self.lines.read_line(&mut line).expect("stdout readable");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }

    fn stop(mut self) -> serde_json::Value {
        // SAFETY: plain kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let stats = self.line();
        let status = self.child.wait().expect("child waits");
        assert!(status.success(), "{status:?}");
        stats
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ip(args: &[&str]) {
    let status = Command::new("ip").args(args).status().expect("ip runs");
    assert!(status.success(), "ip {args:?}");
}

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Run `make` with this thread inside namespace `ns` (a socket stays in the namespace it
/// was created in), then return to the thread's own namespace.
fn inside<T>(ns: &str, make: impl FnOnce() -> T) -> T {
    let home = File::open("/proc/thread-self/ns/net").expect("own namespace");
    let target = File::open(format!("/run/netns/{ns}")).expect("namespace file");
    // SAFETY: setns on valid descriptors; we return home right after.
    assert_eq!(
        unsafe { libc::setns(target.as_raw_fd(), libc::CLONE_NEWNET) },
        0
    );
    let made = make();
    // SAFETY: as above.
    assert_eq!(
        unsafe { libc::setns(home.as_raw_fd(), libc::CLONE_NEWNET) },
        0
    );
    made
}

/// A UDP socket created inside namespace `ns` (a socket stays in the namespace it was
/// created in), bound to `addr`.
fn socket_in(ns: &str, addr: &str) -> UdpSocket {
    let home = File::open("/proc/thread-self/ns/net").expect("own namespace");
    let target = File::open(format!("/run/netns/{ns}")).expect("namespace file");
    // SAFETY: setns on valid descriptors; we return home right after.
    assert_eq!(
        unsafe { libc::setns(target.as_raw_fd(), libc::CLONE_NEWNET) },
        0
    );
    let sock = UdpSocket::bind(addr);
    // SAFETY: as above.
    assert_eq!(
        unsafe { libc::setns(home.as_raw_fd(), libc::CLONE_NEWNET) },
        0
    );
    let sock = sock.expect("bind inside the namespace");
    // No test link delays a packet by more than 100 ms: a datagram not back by then is lost.
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .expect("timeout");
    sock
}

/// What came back from `echo`: the round-trip times (ms) of echoes that returned while
/// their probe was the latest, and the sequence numbers of every echo that returned at all
/// (on a loaded machine an echo can arrive after its read timeout).
struct Echoes {
    rtts: Vec<f64>,
    returned: HashSet<u32>,
}

/// Send `count` datagrams from A to B, echo each back.
fn echo(ns: &Namespaces, count: usize, gap: Duration) -> Echoes {
    let a = socket_in(&ns.names[0], "10.77.0.1:0");
    let b = socket_in(&ns.names[1], "10.77.0.2:0");
    let b_addr = b.local_addr().expect("bound");
    let done = Arc::new(AtomicBool::new(false));
    let echo_done = Arc::clone(&done);
    let echo = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        // The flag, checked after every read timeout, ends the loop (a "stop" datagram could
        // itself be lost).
        while !echo_done.load(Ordering::Relaxed) {
            if let Ok((n, from)) = b.recv_from(&mut buf) {
                let _ = b.send_to(&buf[..n], from);
            }
        }
    });
    let mut out = Echoes {
        rtts: Vec::new(),
        returned: HashSet::new(),
    };
    let mut buf = [0u8; 2048];
    for i in 0..count as u32 {
        let start = Instant::now();
        a.send_to(&i.to_be_bytes(), b_addr).expect("send");
        while let Ok((4, _)) = a.recv_from(&mut buf) {
            let seq = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
            out.returned.insert(seq);
            if seq == i {
                out.rtts.push(start.elapsed().as_secs_f64() * 1e3);
                break;
            }
        }
        std::thread::sleep(gap);
    }
    // Late echoes: read until the socket stays quiet for a read timeout.
    while let Ok((4, _)) = a.recv_from(&mut buf) {
        out.returned
            .insert(u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]));
    }
    done.store(true, Ordering::Relaxed);
    echo.join().expect("echo thread");
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn delay_is_applied_in_both_directions_and_devices_vanish_on_exit() {
    if !is_root() {
        eprintln!("SKIPPED: needs root to create network namespaces");
        return;
    }
    let ns = Namespaces::create("delay");
    let fwd = Forwarder::start(
        &ns,
        &[
            "--delay-ms",
            "15",
            "--exit-with-parent",
            "--realtime-priority",
            "5",
        ],
    );
    assert_eq!(fwd.ready["scheduler"]["policy"], "fifo", "{}", fwd.ready);
    let echoes = echo(&ns, 20, Duration::from_millis(5));
    assert_eq!(echoes.returned.len(), 20);
    let rtt = median(echoes.rtts);
    assert!(
        (30.0..32.0).contains(&rtt),
        "median RTT {rtt} ms for 2 x 15 ms"
    );
    let stats = fwd.stop();
    assert_eq!(stats["event"], "stats");
    assert_eq!(stats["final"], true);
    // Every echo waited 15 ms in each direction: one timer wake-up per released packet at
    // most, each recorded with how late it fired.
    let wakeups = stats["timer"]["wakeups"].as_u64().expect("a count");
    assert!((1..=40).contains(&wakeups), "{stats}");
    // 20 probes one way, 20 echoes back.
    assert_eq!(stats["a_to_b"]["forwarded"], 20, "{stats}");
    assert_eq!(stats["b_to_a"]["forwarded"], 20, "{stats}");
    // The devices were not persistent: gone with the forwarder.
    for name in &ns.names {
        let out = Command::new("ip")
            .args(["-n", name, "link", "show", "chainlab0"])
            .output()
            .expect("ip runs");
        assert!(!out.status.success(), "chainlab0 still in {name}");
    }
}

#[test]
fn seeded_loss_is_reproducible_through_the_real_link() {
    if !is_root() {
        eprintln!("SKIPPED: needs root to create network namespaces");
        return;
    }
    let run = || {
        let ns = Namespaces::create("loss");
        let fwd = Forwarder::start(&ns, &["--loss", "0.2", "--seed", "77"]);
        let echoes = echo(&ns, 100, Duration::from_micros(200));
        let stats = fwd.stop();
        (echoes.returned, stats["a_to_b"]["dropped_loss"].clone())
    };
    let (first_ok, first_dropped) = run();
    let (second_ok, second_dropped) = run();
    // Same seed, same packet sequence: the same probes and echoes die.
    assert_eq!(first_ok, second_ok);
    assert_eq!(first_dropped, second_dropped);
    // 100 round trips survive with probability 0.8^2 = 0.64: 64 expected, sd 4.8.
    let n = first_ok.len();
    assert!((45..=83).contains(&n), "{n} of 100 came back");
}

#[test]
fn offload_passes_multi_segment_tcp_frames_intact() {
    if !is_root() {
        eprintln!("SKIPPED: needs root to create network namespaces");
        return;
    }
    let ns = Namespaces::create("offload");
    let fwd = Forwarder::start(&ns, &["--delay-ms", "1", "--offload"]);
    assert_eq!(fwd.ready["offload"], true);
    let listener = inside(&ns.names[1], || TcpListener::bind("10.77.0.2:0")).expect("listen");
    let addr = listener.local_addr().expect("bound");
    // 4 MB of a byte pattern, checked on arrival: a frame mangled on the way would fail the
    // TCP checksum, stall the transfer and fail the read timeout.
    const BYTES: usize = 4 << 20;
    let receiver = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().expect("accept");
        conn.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        let mut got = vec![0u8; BYTES];
        conn.read_exact(&mut got).expect("all bytes arrive");
        got.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8)
    });
    let mut conn = inside(&ns.names[0], || TcpStream::connect(addr)).expect("connect");
    let data: Vec<u8> = (0..BYTES).map(|i| (i % 251) as u8).collect();
    conn.write_all(&data).expect("send");
    assert!(
        receiver.join().expect("receiver"),
        "bytes changed on the way"
    );
    let stats = fwd.stop();
    // The kernel handed the forwarder frames of several segments, and the MTU held for each.
    let multi = stats["a_to_b"]["multi_segment"].as_u64().expect("a count");
    assert!(multi > 0, "{stats}");
    assert_eq!(stats["a_to_b"]["dropped_oversize"], 0, "{stats}");
    assert_eq!(stats["a_to_b"]["write_errors"], 0, "{stats}");
    // Both counts are of IP packets, without the virtio-net header in front of each frame:
    // equal once every packet in has gone out (a packet still held at the stop is not out).
    for dir in ["a_to_b", "b_to_a"] {
        let (fwd_bytes, in_bytes) = (&stats[dir]["bytes_forwarded"], &stats[dir]["bytes_in"]);
        if stats[dir]["forwarded"] == stats[dir]["packets_in"] {
            assert_eq!(fwd_bytes, in_bytes, "{stats}");
        } else {
            assert!(fwd_bytes.as_u64() < in_bytes.as_u64(), "{stats}");
        }
    }
    assert_eq!(
        stats["a_to_b"]["forwarded"], stats["a_to_b"]["packets_in"],
        "{stats}"
    );
}
