// `handshake --transport quic` (and `load`): one attempt is one QUIC v1 connection through
// quic-go on its own connected UDP socket (a fresh port per attempt, as on the OpenSSL
// engine), so an ICMP port unreachable reaches it. The timed span runs from the dial, which
// sends the first Initial, to the handshake's completion (quic-go's qlog event, recorded as
// it happens); the client then waits for the server's HANDSHAKE_DONE (with resumption also
// a session ticket) and closes at once with CONNECTION_CLOSE, application error 0.

package main

import (
	"context"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"
)

// closeTimeout bounds the wait for HANDSHAKE_DONE (and a ticket) after the handshake, as on
// the OpenSSL engine: it only bounds a stuck peer.
const closeTimeout = 500 * time.Millisecond

// clientEvents is the qlog recorder of one client connection: its handshake's completion
// (clocks and counts at that moment) and the server's HANDSHAKE_DONE.
type clientEvents struct {
	clock     span
	udp       *countingPacketConn
	peer      net.Addr
	mu        sync.Mutex
	at        handshakeAt
	confirmed chan struct{}
}

// handshakeAt is a QUIC connection at its handshake's completion: the span's clocks so far
// and the socket's counts.
type handshakeAt struct {
	completed bool
	wall, cpu uint64
	user, sys uint64
	alone     bool
	tally     tally
}

// handshakeNow is the span's clocks and the peer's counts now.
func handshakeNow(clock span, udp *countingPacketConn, peer net.Addr) handshakeAt {
	wall, cpu, user, sys, alone := clock.since()
	return handshakeAt{true, wall, cpu, user, sys, alone, udp.tallyOf(peer)}
}

func (e *clientEvents) AddProducer() qlogwriter.Recorder { return e }
func (e *clientEvents) Close() error                     { return nil }
func (e *clientEvents) RecordEvent(ev qlogwriter.Event) {
	up, ok := ev.(qlog.ConnectionStateUpdated)
	if !ok {
		return
	}
	switch up.State {
	case qlog.ConnectionStateHandshakeComplete:
		at := handshakeNow(e.clock, e.udp, e.peer)
		e.mu.Lock()
		e.at = at
		e.mu.Unlock()
	case qlog.ConnectionStateHandshakeConfirmed:
		close(e.confirmed)
	}
}

// attemptQUIC is `attempt` over QUIC.
func (s *slot) attemptQUIC(seq uint64, warmup bool) clientRecord {
	a := s.c.args
	rec := clientRecord{
		Schema: recordSchema, Side: "client", Stack: stackName, Transport: "quic", Seq: seq,
		Warmup: warmup, Verify: !a.noVerify, Outcome: "ok",
	}
	config := s.sessionConfig(&rec)
	var ticket chan struct{}
	if s.cache != nil {
		ticket = make(chan struct{}, 1)
		s.cache.arrived = ticket
	}
	timeout := time.Duration(a.timeoutMs) * time.Millisecond
	raddr, err := net.ResolveUDPAddr("udp", a.connect)
	if err != nil {
		rec.StartUnixNs = uint64(time.Now().UnixNano())
		return failed(rec, failure{"io_error", oneLine(err.Error())})
	}
	sock, err := net.DialUDP("udp", nil, raddr)
	if err != nil {
		rec.StartUnixNs = uint64(time.Now().UnixNano())
		return failed(rec, failure{"io_error", oneLine(err.Error())})
	}
	defer sock.Close()
	if udp, ok := sock.LocalAddr().(*net.UDPAddr); ok {
		port := uint16(udp.Port)
		rec.LocalPort = &port
	}
	udp := newCountingPacketConn(sock, true)
	udp.track(raddr)
	events := &clientEvents{udp: udp, peer: raddr, confirmed: make(chan struct{})}
	tr := &quic.Transport{Conn: udp}
	defer tr.Close()
	qconf := &quic.Config{
		HandshakeIdleTimeout:    timeout,
		MaxIdleTimeout:          timeout,
		DisablePathMTUDiscovery: true,
		Tracer: func(context.Context, bool, quic.ConnectionID) qlogwriter.Trace {
			return events
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	rec.StartUnixNs = uint64(time.Now().UnixNano())
	events.clock = startSpan()
	defer events.clock.end()
	// Nothing goes on the wire before the first Initial (the socket's connect() is local).
	rec.ConnectNs = u64p(0)
	conn, err := tr.Dial(ctx, raddr, config, qconf)
	if err != nil {
		total, _, _, _, _ := events.clock.since()
		rec.HandshakeNs, rec.TotalNs = u64p(total), u64p(total)
		s.finishCPU(&rec, events.clock)
		f := quicFailure(err, false, udp.tallyOf(raddr).datagramsRead > 0)
		s.quicCounts(&rec, udp, raddr, nil)
		rec.ConnID = initialHelloID(udp.firstWritten)
		return failed(rec, f)
	}
	events.mu.Lock()
	hs := events.at
	events.mu.Unlock()
	rec.HandshakeNs, rec.TotalNs = u64p(hs.wall), u64p(hs.wall)
	if a.instrument && hs.alone {
		rec.CPUNs, rec.CPUUserUs, rec.CPUSysUs = u64p(hs.cpu), u64p(hs.user), u64p(hs.sys)
	}
	// The server's HANDSHAKE_DONE (and what travels with it), so that it sends nothing the
	// client never reads; TLS 1.3 lets a server refuse a client certificate only after the
	// client's Finished, and its CONNECTION_CLOSE then arrives instead.
	wait := time.NewTimer(closeTimeout)
	defer wait.Stop()
	var closed error
	select {
	case <-events.confirmed:
	case <-conn.Context().Done():
		closed = context.Cause(conn.Context())
	case <-wait.C:
	}
	if closed == nil && ticket != nil {
		select {
		case <-ticket:
		case <-conn.Context().Done():
			closed = context.Cause(conn.Context())
		case <-wait.C:
		}
	}
	st := conn.ConnectionState().TLS
	if closed == nil {
		conn.CloseWithError(0, "")
	}
	rec.ConnID = initialHelloID(udp.firstWritten)
	s.quicCounts(&rec, udp, raddr, &hs.tally)
	if closed != nil {
		f := quicFailure(closed, false, true)
		if a.certPKI != "" {
			// TLS 1.3 lets a server refuse a client certificate only after the client's
			// Finished: whatever closed the connection instead of HANDSHAKE_DONE is that
			// refusal (its alert, when one came, in the detail), as over TCP.
			f.category = "client_cert_rejected"
			f.detail = strings.TrimSuffix(f.detail, " (no shared group)")
		}
		return failed(rec, f)
	}
	if a.instrument {
		noteHandshake(&rec, st)
	}
	return rec
}

// quicCounts puts the socket's counts in the record: over the handshake (`hs`, nil when it
// did not complete) and over the connection.
func (s *slot) quicCounts(rec *clientRecord, udp *countingPacketConn, peer net.Addr, hs *tally) {
	if !s.c.args.instrument {
		return
	}
	all := udp.tallyOf(peer)
	rec.ConnBytesRead, rec.ConnBytesWritten = u64p(all.read), u64p(all.written)
	rec.ConnDatagramsRead, rec.ConnDatagramsWritten = u64p(all.datagramsRead), u64p(all.datagramsWritten)
	if hs != nil {
		rec.BytesRead, rec.BytesWritten = u64p(hs.read), u64p(hs.written)
		rec.DatagramsRead, rec.DatagramsWritten = u64p(hs.datagramsRead), u64p(hs.datagramsWritten)
		rec.FlightDatagrams = u64p(hs.writtenAtLastRead)
	}
}
