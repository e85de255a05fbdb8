// `serve`: the TLS 1.3 server, one record per accepted connection.
//
// Thread per connection (`--server-model threads`): `--workers` goroutines, each locked to
// its own OS thread for its life, accept on the shared listener and serve one connection at
// a time, so the thread's CPU clock is the connection's CPU (exact, as on the other engines).
// Event-driven (`--server-model event`): the Go way, a goroutine per connection multiplexed
// by the runtime's network poller over GOMAXPROCS = `--workers` threads; a thread's CPU then
// belongs to many connections, so the per-connection CPU fields are null (never guessed) and
// the server's CPU is the process's, which the runner reads from /proc.

package main

import (
	"context"
	cryptorand "crypto/rand"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// drainGrace is how long in-flight connections may finish after SIGTERM/SIGINT before they
// are cut (recorded as io_error, "abandoned: ..."), as on the other engines.
const drainGrace = 500 * time.Millisecond

type server struct {
	args     *serveArgs
	config   *tls.Config
	creds    []tls.Certificate
	records  *recordWriter
	listener net.Listener
	seq      atomic.Uint64
	done     atomic.Uint64 // connections recorded
	stopping atomic.Bool
	// Client trust anchors loaded from --client-ca (the ready line's client_auth).
	clientAnchors int
	// The recorded connections' CPU, summed (the process record's conn_cpu_ns).
	connCPU atomic.Uint64
	wg      sync.WaitGroup
}

func serve(a *serveArgs) error {
	s := &server{args: a}
	if err := s.build(); err != nil {
		return err
	}
	records, err := openRecords(a.records)
	if err != nil {
		return err
	}
	s.records = records
	defer records.close()
	if a.cpus != nil {
		if err := pinProcess(a.cpus); err != nil {
			return err
		}
	}
	// The threads running goroutines: the event model's loops (--workers), else the cores
	// the server is pinned to (Go counts every CPU of the machine when it starts).
	if a.model == "event" || a.tls.transport == "quic" {
		// Over QUIC, one socket serves every connection (--workers is 1): one thread runs
		// Go code, as the OpenSSL engine's one listener thread.
		runtime.GOMAXPROCS(a.workers)
	} else if a.cpus != nil {
		runtime.GOMAXPROCS(len(a.cpus))
	}
	if a.tls.transport == "quic" {
		return s.serveQUIC()
	}
	ln, err := net.Listen("tcp", a.listen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %v", a.listen, oneLine(err.Error()))
	}
	if err := setBacklog(ln, a.backlog); err != nil {
		return err
	}
	s.listener = ln
	life, lifeCPU := time.Now(), processCPU()
	if err := s.printReady(ln.Addr(), "tcp"); err != nil {
		return err
	}
	markIdle()
	s.serveUntilStopped(func() {
		if a.model == "threads" {
			s.runThreads()
		} else {
			s.runEvent()
		}
	}, func() { ln.Close() }, abandonAll)
	return s.account(life, lifeCPU)
}

// serveUntilStopped runs `serve` until it returns or SIGTERM/SIGINT arrives; then the
// listener closes (`closeListener`), connections in flight get drainGrace to finish before
// `cut` ends them (each recorded as such), and it returns once every one is recorded.
func (s *server) serveUntilStopped(serve, closeListener, cut func()) {
	stop := stopSignals()
	finished := make(chan struct{})
	go func() {
		serve()
		close(finished)
	}()
	select {
	case <-stop:
	case <-finished:
	}
	s.stopping.Store(true)
	closeListener()
	waited := make(chan struct{})
	go func() { s.wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(drainGrace):
		cut()
		<-waited
	}
	<-finished
}

// stopSignals is where SIGTERM and SIGINT (the runner's stop, Ctrl-C) arrive.
func stopSignals() chan os.Signal {
	stop := make(chan os.Signal, 2)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	return stop
}

// account writes the server's one account for the whole process (goroutines have no CPU
// clock of their own): its CPU since `life`, of it the recorded connections', and the
// rest, which belongs to no recorded connection.
func (s *server) account(life time.Time, lifeCPU uint64) error {
	a := s.args
	cpu := sat(processCPU(), lifeCPU)
	conn := s.connCPU.Load()
	return s.records.write(serverThreadRecord{
		Schema: recordSchema, Side: "server_thread", Stack: stackName, ServerModel: a.model,
		Thread: 0, CPU: nil, Connections: s.done.Load(), WallNs: uint64(time.Since(life).Nanoseconds()),
		CPUNs: cpu, ConnCPUNs: conn, WaitCPUNs: sat(cpu, conn),
	})
}

// setBacklog is listen(2) again with `--listen-backlog` (Linux takes a new backlog on a
// listening socket; Go listens with net.core.somaxconn).
func setBacklog(ln net.Listener, backlog int) error {
	raw, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := raw.Control(func(fd uintptr) { lerr = syscall.Listen(int(fd), backlog) }); err != nil {
		return err
	}
	return lerr
}

func (s *server) printReady(addr net.Addr, transport string) error {
	ready := map[string]any{
		"event": "ready", "addr": addr.String(), "transport": transport,
		"pid": os.Getpid(), "stack": stackName, "server_model": s.args.model,
		"workers": s.args.workers, "record_schema": recordSchema,
		"go": runtime.Version(),
		"served_chain": map[string]any{
			"policy": s.args.chain, "certificates": len(s.creds[0].Certificate),
			"der_bytes": derBytes(s.creds[0].Certificate),
		},
		// crypto/tls has no RFC 8879: the chain always goes uncompressed.
		"cert_compression": map[string]any{
			"algorithm": "none", "uncompressed_bytes": nil, "compressed_bytes": nil,
			"installed": false,
		},
	}
	if s.args.clientCA != "" {
		ready["client_auth"] = map[string]any{"anchors": s.clientAnchors, "required": true}
	} else {
		ready["client_auth"] = nil
	}
	line, err := json.Marshal(ready)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(append(line, '\n'))
	return err
}

func derBytes(ders [][]byte) int {
	n := 0
	for _, d := range ders {
		n += len(d)
	}
	return n
}

// takeSlot says whether one more connection may be accepted under --max-connections.
func (s *server) takeSlot() (uint64, bool) {
	seq := s.seq.Add(1) - 1
	if s.args.maxConnections > 0 && seq >= s.args.maxConnections {
		return seq, false
	}
	return seq, true
}

func (s *server) runThreads() {
	var workers sync.WaitGroup
	for i := 0; i < s.args.workers; i++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			s.worker()
		}()
	}
	workers.Wait()
}

// worker serves one connection at a time: accept, serve, record, until the listener closes.
func (s *server) worker() {
	for {
		c, err := s.listener.Accept()
		if err != nil {
			return
		}
		seq, ok := s.takeSlot()
		if !ok {
			c.Close()
			return
		}
		s.wg.Add(1)
		s.serveConn(c, seq)
		s.wg.Done()
		if done := s.done.Add(1); s.args.maxConnections > 0 && done >= s.args.maxConnections {
			s.listener.Close()
		}
	}
}

func (s *server) runEvent() {
	var conns sync.WaitGroup
	for {
		c, err := s.listener.Accept()
		if err != nil {
			break
		}
		seq, ok := s.takeSlot()
		if !ok {
			c.Close()
			break
		}
		s.wg.Add(1)
		conns.Add(1)
		go func() {
			defer conns.Done()
			defer s.wg.Done()
			s.serveConn(c, seq)
			if done := s.done.Add(1); s.args.maxConnections > 0 && done >= s.args.maxConnections {
				s.listener.Close()
			}
		}()
	}
	conns.Wait()
}

// live connections, so a stopping server can cut the ones still running.
var live sync.Map

func abandonAll() {
	live.Range(func(k, _ any) bool {
		k.(*countingConn).abandon()
		return true
	})
}

// serveConn runs one connection start to finish and records it.
func (s *server) serveConn(raw net.Conn, seq uint64) {
	accepted := time.Now()
	clock := startSpan()
	defer clock.end()
	rec := serverRecord{
		Schema: recordSchema, Side: "server", Stack: stackName, Transport: "tcp",
		ServerModel: s.args.model, Seq: seq, AcceptUnixNs: uint64(accepted.UnixNano()),
		Outcome: "ok",
	}
	if tcp, ok := raw.RemoteAddr().(*net.TCPAddr); ok {
		port := uint16(tcp.Port)
		rec.PeerPort = &port
	}
	cc := newCountingConn(raw)
	live.Store(cc, nil)
	defer live.Delete(cc)
	conn := tls.Server(cc, s.config)
	timeout := time.Duration(s.args.ioTimeoutMs) * time.Millisecond
	cc.SetDeadline(time.Now().Add(timeout))
	err := conn.HandshakeContext(context.Background())
	handshakeWall, handshakeCPU, user, sys, alone := clock.since()
	rec.HandshakeNs = u64p(handshakeWall)
	if s.args.instrument && alone {
		rec.CPUNs, rec.CPUUserUs, rec.CPUSysUs = u64p(handshakeCPU), u64p(user), u64p(sys)
	}
	rec.ConnID = helloID(cc.readHead)
	st := conn.ConnectionState()
	if err == nil {
		hs := cc.counts()
		rec.BytesRead, rec.BytesWritten = u64p(hs.read), u64p(hs.written)
		rec.Group = groupName(st.CurveID)
		rec.Resumed = boolp(st.DidResume)
		if !st.DidResume && cc.choice.scheme != "" {
			rec.Sigalg = strp(cc.choice.scheme)
		}
		if len(s.creds) > 1 {
			rec.ChainIndex.Present = true
			if !st.DidResume && cc.choice.chosen >= 0 {
				chosen := cc.choice.chosen
				rec.ChainIndex.Value = &chosen
			}
		}
		if s.args.clientCA != "" {
			rec.PeerChain.Present = true
			if len(st.PeerCertificates) > 0 {
				chain := observedChain(st.PeerCertificates)
				rec.PeerChain.Value = &chain
			}
		}
		notify := closeExchange(conn, cc, timeout)
		rec.PeerCloseNotify = &notify
	} else {
		f := tlsFailure(err, true)
		if cc.abandoned.Load() {
			f = failure{"io_error", "abandoned: the server was stopping"}
		}
		rec.Outcome, rec.ErrorCategory, rec.ErrorDetail = "failed", strp(f.category), strp(f.detail)
		if st.CurveID != 0 {
			rec.Group = groupName(st.CurveID)
		}
		if s.args.clientCA != "" {
			rec.PeerChain.Present = true
		}
		if len(s.creds) > 1 {
			rec.ChainIndex.Present = true
		}
		// The alert is on its way: let the client read it rather than a reset (what it
		// still sends, e.g. its close_notify after a Finished the server refused, would
		// reset a closed socket), until the client closes (bounded by the timeout).
		drain(cc, timeout)
	}
	raw.Close()
	connWall, _, _, _, _ := clock.since()
	connCPU, alone := clock.sinceIdle()
	rec.ConnNs = u64p(connWall)
	all := cc.counts()
	rec.ConnBytesRead, rec.ConnBytesWritten = u64p(all.read), u64p(all.written)
	if s.args.instrument && alone {
		rec.ConnCPUNs = u64p(connCPU)
		s.connCPU.Add(connCPU)
	}
	s.records.write(rec)
}

// drain stops writing and reads until the peer closes or the timeout passes.
func drain(cc *countingConn, timeout time.Duration) {
	if tcp, ok := cc.Conn.(*net.TCPConn); ok {
		tcp.CloseWrite()
	}
	cc.SetDeadline(time.Now().Add(timeout))
	buf := make([]byte, 4096)
	for {
		if _, err := cc.Conn.Read(buf); err != nil {
			return
		}
	}
}

// closeExchange sends close_notify and reads until the peer's (bounded by the timeout);
// true when the peer's close_notify arrived, false on EOF, a reset or a timeout.
func closeExchange(conn *tls.Conn, cc *countingConn, timeout time.Duration) bool {
	cc.SetDeadline(time.Now().Add(timeout))
	if err := conn.CloseWrite(); err != nil {
		return false
	}
	buf := make([]byte, 512)
	for {
		_, err := conn.Read(buf)
		if err == nil {
			continue
		}
		// crypto/tls says io.EOF both for close_notify and for a bare end of stream; the
		// record-aligned reader tells them apart: after close_notify the socket's own EOF
		// has not been read.
		return errors.Is(err, io.EOF) && !cc.sawEOF
	}
}

// build loads the server's credentials and its TLS 1.3 configuration.
func (s *server) build() error {
	a := s.args
	chainFile := map[string]string{
		"leaf": "chain-leaf.pem", "leaf+intermediates": "chain-leaf+intermediates.pem",
		"full": "chain-full.pem",
	}[a.chain]
	dirs := []string{a.pki}
	if a.secondPKI != "" {
		dirs = append(dirs, a.secondPKI)
	}
	for _, dir := range dirs {
		cred, err := loadCredential(pkiFile(dir, chainFile), pkiFile(dir, "leaf.key"))
		if err != nil {
			return err
		}
		if len(keySchemes(cred.Leaf.PublicKey)) == 0 {
			return fmt.Errorf("%s: crypto/tls cannot sign with a %s key", dir, keyAlgorithm(cred.Leaf.PublicKey))
		}
		s.creds = append(s.creds, cred)
	}
	if len(s.creds) == 2 && keyAlgorithm(s.creds[0].Leaf.PublicKey) == keyAlgorithm(s.creds[1].Leaf.PublicKey) {
		return fmt.Errorf("--second-pki %s: its leaf has the key type of --pki's (%s); allowed: two leaves of different key types", a.secondPKI, keyAlgorithm(s.creds[0].Leaf.PublicKey))
	}
	groups, err := parseGroups(a.tls.groups)
	if err != nil {
		return err
	}
	config := &tls.Config{
		MinVersion:             tls.VersionTLS13,
		MaxVersion:             tls.VersionTLS13,
		CurvePreferences:       groups,
		SessionTicketsDisabled: a.tickets == 0,
		GetCertificate:         certificateFor(s.creds, s.args.chainOrder, tcpChoice),
	}
	if a.tickets > 0 {
		var key [32]byte
		if _, err := cryptorand.Read(key[:]); err != nil {
			return err
		}
		config.SetSessionTicketKeys([][32]byte{key})
	}
	if a.clientCA != "" {
		ders, err := readPEM(a.clientCA, "CERTIFICATE")
		if err != nil {
			return err
		}
		pool, err := certPool(a.clientCA)
		if err != nil {
			return err
		}
		config.ClientAuth = tls.RequireAndVerifyClientCert
		config.ClientCAs = pool
		s.clientAnchors = len(ders)
	}
	s.config = config
	return nil
}
