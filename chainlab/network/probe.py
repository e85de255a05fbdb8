"""Calibration probes: a server and a client run inside the two namespaces of a link.

Standard library only, run as a script (`python probe.py serve|client ...`) so it starts
fast and needs nothing from the chainlab package inside `ip netns exec`.

  serve   binds TCP and UDP on --bind, prints {"event":"ready","tcp_port":..,"udp_port":..},
          answers the client's requests, exits on SIGTERM, after --lifetime-s, or (with
          --watch-stdin) when stdin reaches EOF, i.e. when the process that started it dies.
  client  runs the measurements against a serve and prints one JSON object:
          connects   N TCP connects, each timed from connect() to its return (one RTT: SYN out,
                     SYN-ACK back)
          pingpong   N 1-byte messages echoed on one TCP connection (TCP_NODELAY), each timed
                     from send to the echo's arrival
          bulk       a TCP bulk transfer of at most --bulk-bytes within --bulk-seconds; the
                     server times it from the moment the first quarter of the bytes had arrived
                     (slow start is over by then) to the last byte
          train      --train-packets back-to-back UDP datagrams of exactly one MTU; the
                     server's kernel receive timestamps of the first and last datagram and
                     their sequence numbers give the bottleneck rate (a datagram lost on the
                     wire in between still took its turn on the bottleneck, so it counts)
          loss       --loss-probes small UDP datagrams client -> server, paced, then as many
                     server -> client; each side counts what arrived

TCP requests are one JSON line; the server answers with one JSON line. A datagram carries a
4-byte phase number and a 4-byte sequence number.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import signal
import socket
import struct
import sys
import threading
import time

HEADER = struct.Struct("!II")  # phase, sequence
# IPv4 (20) + UDP (8) header bytes in front of a datagram's payload.
UDP_IP_OVERHEAD = 28
# Socket buffers for the UDP phases: a train of a few hundred MTU-sized datagrams must fit in
# the sender's and receiver's buffers, or the host, not the link, drops them. 8 MiB holds
# 500 datagrams of a 9000-byte MTU with room for the kernel's per-packet overhead.
UDP_BUFFER_BYTES = 8 << 20
# Bulk transfer write size: large enough that Python's per-call cost is negligible against
# the bytes moved.
BULK_CHUNK = 256 << 10
# The bulk rate is timed from when this fraction of the bytes had arrived, past slow start.
BULK_SKIP_FRACTION = 0.25


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="probe.py")
    sub = parser.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--bind", required=True)
    s.add_argument("--lifetime-s", type=float, default=300.0)
    s.add_argument("--watch-stdin", action="store_true", help="exit when stdin reaches EOF")
    c = sub.add_parser("client")
    c.add_argument("--connect", required=True)
    c.add_argument("--tcp-port", type=int, required=True)
    c.add_argument("--udp-port", type=int, required=True)
    c.add_argument("--bind", default="")
    c.add_argument("--connects", type=int, default=15)
    c.add_argument("--pingpong", type=int, default=0, help="1-byte round trips on one connection")
    c.add_argument("--connect-timeout-s", type=float, default=3.0)
    c.add_argument("--bulk-bytes", type=int, default=0)
    c.add_argument("--bulk-seconds", type=float, default=2.0)
    c.add_argument("--train-packets", type=int, default=0)
    c.add_argument("--mtu", type=int, default=1500)
    c.add_argument("--loss-probes", type=int, default=0)
    c.add_argument("--probe-interval-s", type=float, default=0.0005)
    c.add_argument("--settle-s", type=float, default=0.05)
    args = parser.parse_args(argv)
    if args.mode == "serve":
        return serve(args)
    json.dump(client(args), sys.stdout)
    sys.stdout.write("\n")
    return 0


# -- server -------------------------------------------------------------------------------


class _UdpLog:
    """What the server's UDP socket received, per phase: sequence numbers and the kernel
    receive timestamp (SO_TIMESTAMPNS) of the first and last datagram."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.lock = threading.Lock()
        self.phases: dict[int, dict] = {}
        self.peer = None

    def drain(self) -> None:
        while True:
            try:
                data, anc, _flags, addr = self.sock.recvmsg(65536, 64, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return
            self.record(data, anc, addr)

    def record(self, data: bytes, anc, addr) -> None:
        if len(data) < HEADER.size:
            return
        phase, seq = HEADER.unpack_from(data)
        stamp = None
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", payload[:16])
                stamp = sec * 1_000_000_000 + nsec
        if stamp is None:
            stamp = time.time_ns()
        with self.lock:
            self.peer = addr
            log = self.phases.setdefault(phase, {"seqs": set(), "size": len(data)})
            log["seqs"].add(seq)
            if "first" not in log or seq < log["first"][0]:
                log["first"] = (seq, stamp)
            if "last" not in log or seq > log["last"][0]:
                log["last"] = (seq, stamp)

    def report(self, phase: int) -> dict:
        self.drain()
        with self.lock:
            log = self.phases.pop(phase, None)
        if not log:
            return {"received": 0}
        out = {"received": len(log["seqs"]), "payload_bytes": log["size"]}
        (s0, t0), (s1, t1) = log["first"], log["last"]
        out.update(first_seq=s0, last_seq=s1, span_ns=t1 - t0)
        return out


SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def serve(args) -> int:
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind((args.bind, 0))
    tcp.listen(128)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    _big_buffers(udp)
    udp.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    udp.bind((args.bind, 0))
    udp.setblocking(False)
    log = _UdpLog(udp)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(
        json.dumps(
            {"event": "ready", "tcp_port": tcp.getsockname()[1], "udp_port": udp.getsockname()[1]}
        ),
        flush=True,
    )
    deadline = time.monotonic() + args.lifetime_s
    sel = selectors.DefaultSelector()
    sel.register(tcp, selectors.EVENT_READ, "tcp")
    sel.register(udp, selectors.EVENT_READ, "udp")
    if args.watch_stdin:
        sel.register(sys.stdin, selectors.EVENT_READ, "stdin")
    while not stop.is_set() and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=0.2):
            if key.data == "udp":
                log.drain()
            elif key.data == "stdin":
                if not os.read(sys.stdin.fileno(), 4096):
                    stop.set()
            else:
                conn, _addr = tcp.accept()
                with conn:
                    _serve_connection(conn, log, udp)
    return 0


def _serve_connection(conn: socket.socket, log: _UdpLog, udp: socket.socket) -> None:
    conn.settimeout(30.0)
    first = b""
    try:
        while b"\n" not in first:
            chunk = conn.recv(4096)
            if not chunk:
                return  # a connect probe: opened and closed without a request
            first += chunk
    except OSError:
        return
    line, rest = first.split(b"\n", 1)
    request = json.loads(line)
    if request["cmd"] == "echo":
        _echo(conn, rest)
        return
    if request["cmd"] == "bulk":
        reply = _receive_bulk(conn, len(rest))
    elif request["cmd"] == "udp_report":
        reply = log.report(request["phase"])
    elif request["cmd"] == "udp_send":
        reply = _send_probes(udp, log.peer, request)
    else:
        reply = {"error": f"unknown command {request['cmd']!r}"}
    conn.sendall(json.dumps(reply).encode() + b"\n")


def _echo(conn: socket.socket, pending: bytes) -> None:
    """Send back every byte received, until EOF (the ping-pong round-trip measurement)."""
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if pending:
        conn.sendall(pending)
    while True:
        data = conn.recv(65536)
        if not data:
            return
        conn.sendall(data)


def _receive_bulk(conn: socket.socket, already: int) -> dict:
    """Read to EOF; (time, cumulative bytes) after every read, then the rate past the skip."""
    samples = [(time.monotonic_ns(), already)]
    total = already
    buf = bytearray(BULK_CHUNK)
    while True:
        n = conn.recv_into(buf)
        if not n:
            break
        total += n
        samples.append((time.monotonic_ns(), total))
    skip = total * BULK_SKIP_FRACTION
    start = next(((t, b) for t, b in samples if b >= skip), samples[0])
    end = samples[-1]
    span = end[0] - start[0]
    return {
        "bytes": total,
        "timed_bytes": end[1] - start[1],
        "timed_ns": span,
        "rate_bps": (end[1] - start[1]) * 8e9 / span if span > 0 else None,
    }


def _send_probes(udp: socket.socket, peer, request: dict) -> dict:
    if peer is None:
        return {"sent": 0, "error": "no peer address (no datagram received yet)"}
    sent = _paced_datagrams(
        udp, (peer[0], request["port"]), request["phase"], request["count"],
        request["payload"], request["interval_s"],
    )  # fmt: skip
    return {"sent": sent}


# -- client -------------------------------------------------------------------------------


def client(args) -> dict:
    addr = args.connect
    out: dict = {}
    out["connect_ms"] = _connects(addr, args.tcp_port, args.connects, args.connect_timeout_s)
    if args.pingpong > 0:
        out["pingpong_ms"] = _pingpong(addr, args.tcp_port, args.pingpong)
    if args.bulk_bytes > 0:
        out["bulk"] = _bulk(addr, args.tcp_port, args.bulk_bytes, args.bulk_seconds)
    if args.train_packets > 0 or args.loss_probes > 0:
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        _big_buffers(udp)
        udp.bind((args.bind, 0))
        if args.train_packets > 0:
            out["train"] = _train(udp, addr, args)
        if args.loss_probes > 0:
            out["loss"] = _loss(udp, addr, args)
        udp.close()
    return out


def _connects(addr: str, port: int, count: int, timeout_s: float) -> list[float | None]:
    times: list[float | None] = []
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(timeout_s)
        t0 = time.perf_counter_ns()
        try:
            s.connect((addr, port))
            times.append((time.perf_counter_ns() - t0) / 1e6)
        except OSError:
            times.append(None)
        finally:
            s.close()
    return times


def _pingpong(addr: str, port: int, count: int) -> list[float]:
    """Round-trip times (ms) of `count` 1-byte messages echoed on one TCP connection."""
    with socket.create_connection((addr, port), timeout=30) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(b'{"cmd": "echo"}\n')
        times = []
        for _ in range(count):
            t0 = time.perf_counter_ns()
            s.sendall(b"x")
            if not s.recv(1):
                break
            times.append((time.perf_counter_ns() - t0) / 1e6)
        return times


def _bulk(addr: str, port: int, max_bytes: int, max_seconds: float) -> dict:
    s = socket.create_connection((addr, port), timeout=max_seconds + 30)
    mss = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
    s.sendall(b'{"cmd": "bulk"}\n')
    chunk = b"\0" * BULK_CHUNK
    sent = 0
    deadline = time.monotonic() + max_seconds
    while sent < max_bytes and time.monotonic() < deadline:
        n = s.send(chunk[: min(BULK_CHUNK, max_bytes - sent)])
        sent += n
    s.shutdown(socket.SHUT_WR)
    reply = _read_reply(s)
    s.close()
    reply["sent"] = sent
    reply["mss"] = mss
    return reply


def _train(udp: socket.socket, addr: str, args) -> dict:
    payload = args.mtu - UDP_IP_OVERHEAD
    phase = 1
    body = b"\0" * (payload - HEADER.size)
    for seq in range(args.train_packets):
        udp.sendto(HEADER.pack(phase, seq) + body, (addr, args.udp_port))
    time.sleep(args.settle_s)
    report = _request(addr, args.tcp_port, {"cmd": "udp_report", "phase": phase})
    report["sent"] = args.train_packets
    report["ip_bytes"] = args.mtu
    return report


def _loss(udp: socket.socket, addr: str, args) -> dict:
    phase, payload = 2, 64
    sent = _paced_datagrams(
        udp, (addr, args.udp_port), phase, args.loss_probes, payload, args.probe_interval_s
    )
    # The report request travels the same FIFO link after the probes, so every probe that
    # survived has reached the server's socket when the request does; settle_s covers links
    # that reorder (netem with jitter).
    time.sleep(args.settle_s)
    forward = _request(addr, args.tcp_port, {"cmd": "udp_report", "phase": phase})
    port = udp.getsockname()[1]
    phase = 3
    reply = _request(
        addr, args.tcp_port,
        {"cmd": "udp_send", "phase": phase, "count": args.loss_probes, "payload": payload,
         "interval_s": args.probe_interval_s, "port": port},
    )  # fmt: skip
    time.sleep(args.settle_s)
    got = set()
    while True:
        try:
            data = udp.recv(65536, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            break
        if len(data) >= HEADER.size:
            ph, seq = HEADER.unpack_from(data)
            if ph == phase:
                got.add(seq)
    return {
        "forward": {"sent": sent, "received": forward.get("received", 0)},
        "reverse": {"sent": reply.get("sent", 0), "received": len(got)},
    }


def _paced_datagrams(udp, dest, phase: int, count: int, payload: int, interval_s: float) -> int:
    body = b"\0" * max(0, payload - HEADER.size)
    start = time.perf_counter()
    for seq in range(count):
        due = start + seq * interval_s
        wait = due - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        udp.sendto(HEADER.pack(phase, seq) + body, dest)
    return count


def _request(addr: str, port: int, request: dict) -> dict:
    with socket.create_connection((addr, port), timeout=30) as s:
        s.sendall(json.dumps(request).encode() + b"\n")
        return _read_reply(s)


def _read_reply(s: socket.socket) -> dict:
    data = b""
    while b"\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return json.loads(data.split(b"\n", 1)[0]) if data.strip() else {}


def _big_buffers(sock: socket.socket) -> None:
    """Socket buffers of UDP_BUFFER_BYTES, past the sysctl caps when root (the *FORCE
    options), else as large as the caps allow."""
    # SO_SNDBUFFORCE = 32, SO_RCVBUFFORCE = 33 (asm-generic/socket.h).
    for force, plain in ((32, socket.SO_SNDBUF), (33, socket.SO_RCVBUF)):
        try:
            sock.setsockopt(socket.SOL_SOCKET, force, UDP_BUFFER_BYTES)
        except OSError:
            sock.setsockopt(socket.SOL_SOCKET, plain, UDP_BUFFER_BYTES)


if __name__ == "__main__":
    sys.exit(main())
