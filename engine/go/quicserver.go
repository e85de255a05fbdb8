// `serve --transport quic`: QUIC v1 through quic-go (v0.65.0, on crypto/tls's QUIC API, so
// the same TLS 1.3 configuration as over TCP: ML-DSA, the groups, two chains, tickets,
// client certificates). One UDP socket serves every connection; quic-go runs each on its own
// goroutines, so a connection's CPU is the process's over a span that ran alone, as over
// TCP (cpu.go). A connection starts at its first datagram, completes its handshake when
// quic-go says so (its qlog event, recorded as it happens), and ends when the client's
// CONNECTION_CLOSE is processed (or the idle timeout, `--io-timeout-ms`, passes).

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"
)

// quicALPN is the application protocol both sides offer over QUIC (QUIC requires one), as
// the OpenSSL engine does.
const quicALPN = "chainlab"

// quicPeer is one QUIC connection on the server, keyed by the client's address.
type quicPeer struct {
	s    *quicServer
	addr net.Addr
	// Its first datagram: when it arrived, the process's clocks then, the datagram.
	first *pendingPeer
	clock span
	seq   uint64
	// choice: the chain GetCertificate chose and the scheme it signed with.
	choice chainChoice
	// At handshake completion (quic-go's qlog event, on the connection's own goroutine).
	mu sync.Mutex
	hs handshakeAt
	// over: the connection has ended (quic-go closed it); its record is being written.
	over bool
	// The TLS state, once the listener hands the connection over (closed `accepted`).
	accepted chan struct{}
	state    tls.ConnectionState
	// Closed once the connection is recorded and its span ended.
	ended chan struct{}
}

// closingWait bounds how long a new connection's first datagram waits for connections
// whose clients have closed them (a datagram after the handshake) to be recorded. quic-go
// processes each connection on its own goroutine, so a client's CONNECTION_CLOSE, read
// before its next connection's Initial, can be processed after it; without the wait the
// two spans overlap and neither is alone. Closing takes tens of microseconds; 5 ms only
// bounds a connection that sent something else.
const closingWait = 5 * time.Millisecond

type quicServer struct {
	*server
	udp *countingPacketConn
	ln  *quic.Listener
	mu  sync.Mutex
	// The connections, by the client's address.
	peers map[string]*quicPeer
}

type peerKey struct{}

func (s *server) serveQUIC() error {
	a := s.args
	// quic-go asks for a 7 MB receive buffer and warns on stderr when the system's limit is
	// lower; the buffer is not what a handshake's few datagrams need.
	if os.Getenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING") == "" {
		os.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true")
	}
	addr, err := net.ResolveUDPAddr("udp", a.listen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %v", a.listen, oneLine(err.Error()))
	}
	sock, err := net.ListenUDP("udp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %v", a.listen, oneLine(err.Error()))
	}
	q := &quicServer{
		server: s, udp: newCountingPacketConn(sock, false),
		peers: map[string]*quicPeer{},
	}
	if a.instrument {
		q.udp.beforeStart = q.awaitClosing
	}
	config := s.config.Clone()
	config.NextProtos = []string{quicALPN}
	config.GetCertificate = certificateFor(s.creds, s.args.chainOrder, q.choiceOf)
	timeout := time.Duration(a.ioTimeoutMs) * time.Millisecond
	tr := &quic.Transport{Conn: q.udp, ConnContext: q.connContext}
	ln, err := tr.Listen(config, &quic.Config{
		HandshakeIdleTimeout: timeout,
		MaxIdleTimeout:       timeout,
		// Path MTU probes after the handshake would add datagrams the client, closing at
		// once, may never read.
		DisablePathMTUDiscovery: true,
		Tracer: func(ctx context.Context, _ bool, _ quic.ConnectionID) qlogwriter.Trace {
			p, _ := ctx.Value(peerKey{}).(*quicPeer)
			if p == nil {
				return nil
			}
			return p
		},
	})
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %v", a.listen, oneLine(err.Error()))
	}
	q.ln = ln
	life, lifeCPU := time.Now(), processCPU()
	if err := s.printReady(sock.LocalAddr(), "quic"); err != nil {
		return err
	}
	markIdle()
	// Connections still open after the grace are cut: closing the transport ends each with
	// an error its record carries.
	s.serveUntilStopped(q.acceptAll, func() { ln.Close() }, func() { tr.Close() })
	tr.Close()
	return s.account(life, lifeCPU)
}

// connContext is quic-go's call for each new connection: the span starts (from its first
// datagram), the socket counts its datagrams, and a goroutine waits for its end.
func (q *quicServer) connContext(ctx context.Context, info *quic.ClientInfo) (context.Context, error) {
	key := info.RemoteAddr.String()
	if q.stopping.Load() {
		q.udp.drop(info.RemoteAddr)
		return nil, errors.New("the server is stopping")
	}
	seq, take := q.takeSlot()
	if !take {
		q.udp.drop(info.RemoteAddr)
		return nil, errors.New("--max-connections reached")
	}
	first := q.udp.track(info.RemoteAddr)
	if first == nil {
		user, sys := processUsage()
		first = &pendingPeer{at: time.Now(), cpu: processCPU(), user: user, sys: sys}
	}
	p := &quicPeer{
		s: q, addr: info.RemoteAddr, first: first, seq: seq,
		choice: chainChoice{chosen: -1}, accepted: make(chan struct{}), ended: make(chan struct{}),
	}
	p.clock = startSpanAt(first.at, first.cpu, first.user, first.sys)
	q.mu.Lock()
	q.peers[key] = p
	q.mu.Unlock()
	q.wg.Add(1)
	go q.watch(ctx, p)
	return context.WithValue(ctx, peerKey{}, p), nil
}

// awaitClosing waits (at most closingWait) while every connection in flight is closing:
// ended, or its handshake completed and its client heard from since. The connection about
// to start is then alone once they are recorded, as on an engine that serves datagrams in
// the order they arrive. With a connection still handshaking it returns at once.
func (q *quicServer) awaitClosing() {
	deadline := time.NewTimer(closingWait)
	defer deadline.Stop()
	for {
		var closing chan struct{}
		q.mu.Lock()
		for _, p := range q.peers {
			p.mu.Lock()
			hs, over := p.hs, p.over
			p.mu.Unlock()
			heard := hs.completed && q.udp.tallyOf(p.addr).datagramsRead > hs.tally.datagramsRead
			if !over && !heard {
				q.mu.Unlock()
				return
			}
			closing = p.ended
		}
		q.mu.Unlock()
		if closing == nil {
			return
		}
		select {
		case <-closing:
		case <-deadline.C:
			return
		}
	}
}

func (q *quicServer) peerAt(addr net.Addr) *quicPeer {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.peers[addr.String()]
}

func (q *quicServer) choiceOf(c net.Conn) *chainChoice {
	if p := q.peerAt(c.RemoteAddr()); p != nil {
		return &p.choice
	}
	return nil
}

// acceptAll takes each connection whose handshake completed (quic-go hands them over only
// then) and passes its TLS state to the goroutine recording it.
func (q *quicServer) acceptAll() {
	for {
		conn, err := q.ln.Accept(context.Background())
		if err != nil {
			return
		}
		if p := q.peerAt(conn.RemoteAddr()); p != nil {
			p.state = conn.ConnectionState().TLS
			close(p.accepted)
		}
	}
}

// The qlog recorder quic-go reports each connection's events to: only its handshake's
// completion is kept (the moment the client's Finished was processed).
func (p *quicPeer) AddProducer() qlogwriter.Recorder { return p }
func (p *quicPeer) Close() error                     { return nil }
func (p *quicPeer) RecordEvent(ev qlogwriter.Event) {
	if e, ok := ev.(qlog.ConnectionStateUpdated); !ok || e.State != qlog.ConnectionStateHandshakeComplete {
		return
	}
	at := handshakeNow(p.clock, p.s.udp, p.addr)
	p.mu.Lock()
	p.hs = at
	p.mu.Unlock()
}

// watch waits for the connection's end and records it.
func (q *quicServer) watch(ctx context.Context, p *quicPeer) {
	defer q.wg.Done()
	defer func() {
		p.clock.end()
		q.mu.Lock()
		delete(q.peers, p.addr.String())
		q.mu.Unlock()
		close(p.ended)
	}()
	<-ctx.Done()
	p.mu.Lock()
	p.over = true
	p.mu.Unlock()
	cause := context.Cause(ctx)
	connWall, _, _, _, _ := p.clock.since()
	connCPU, alone := p.clock.sinceIdle()
	all := q.udp.forget(p.addr)
	p.mu.Lock()
	hs := p.hs
	p.mu.Unlock()
	completed := hs.completed
	tlsKnown := false
	if completed {
		select {
		case <-p.accepted:
			tlsKnown = true
		case <-time.After(time.Duration(q.args.ioTimeoutMs) * time.Millisecond):
		}
	}
	rec := serverRecord{
		Schema: recordSchema, Side: "server", Stack: stackName, Transport: "quic",
		ServerModel: q.args.model, Seq: p.seq, AcceptUnixNs: uint64(p.first.at.UnixNano()),
		Outcome: "ok", ConnID: initialHelloID(p.first.datagram),
	}
	if udp, ok := p.addr.(*net.UDPAddr); ok {
		port := uint16(udp.Port)
		rec.PeerPort = &port
	}
	instrument := q.args.instrument
	if q.args.clientCA != "" {
		rec.PeerChain.Present = true
	}
	if len(q.creds) > 1 {
		rec.ChainIndex.Present = true
	}
	rec.ConnNs = u64p(connWall)
	rec.ConnBytesRead, rec.ConnBytesWritten = u64p(all.read), u64p(all.written)
	rec.ConnDatagramsRead, rec.ConnDatagramsWritten = u64p(all.datagramsRead), u64p(all.datagramsWritten)
	if instrument && alone {
		rec.ConnCPUNs = u64p(connCPU)
		q.connCPU.Add(connCPU)
	}
	if !completed {
		f := quicFailure(cause, true, true)
		if q.stopping.Load() && !isPeerClose(cause) {
			f = failure{"io_error", "abandoned: the server was stopping"}
		}
		rec.Outcome, rec.ErrorCategory, rec.ErrorDetail = "failed", strp(f.category), strp(f.detail)
		rec.HandshakeNs = u64p(connWall)
		q.records.write(rec)
		q.recorded()
		return
	}
	rec.HandshakeNs = u64p(hs.wall)
	if instrument && hs.alone {
		rec.CPUNs, rec.CPUUserUs, rec.CPUSysUs = u64p(hs.cpu), u64p(hs.user), u64p(hs.sys)
	}
	rec.BytesRead, rec.BytesWritten = u64p(hs.tally.read), u64p(hs.tally.written)
	rec.DatagramsRead, rec.DatagramsWritten = u64p(hs.tally.datagramsRead), u64p(hs.tally.datagramsWritten)
	notify := isPeerClose(cause)
	rec.PeerCloseNotify = &notify
	if tlsKnown {
		st := p.state
		rec.Group = groupName(st.CurveID)
		rec.Resumed = boolp(st.DidResume)
		if !st.DidResume && p.choice.scheme != "" {
			rec.Sigalg = strp(p.choice.scheme)
		}
		if len(q.creds) > 1 && !st.DidResume && p.choice.chosen >= 0 {
			chosen := p.choice.chosen
			rec.ChainIndex.Value = &chosen
		}
		if q.args.clientCA != "" && len(st.PeerCertificates) > 0 {
			chain := observedChain(st.PeerCertificates)
			rec.PeerChain.Value = &chain
		}
	}
	q.records.write(rec)
	q.recorded()
}

// recorded counts a recorded connection; at --max-connections the listener closes.
func (q *quicServer) recorded() {
	if done := q.done.Add(1); q.args.maxConnections > 0 && done >= q.args.maxConnections {
		q.ln.Close()
	}
}

// isPeerClose: the client closed the connection with CONNECTION_CLOSE, application error 0
// (QUIC's counterpart of close_notify).
func isPeerClose(err error) bool {
	var app *quic.ApplicationError
	return errors.As(err, &app) && app.Remote && app.ErrorCode == 0
}
