// The measuring client: one attempt is one connection, start to finish, on a goroutine
// locked to its OS thread, so the thread's CPU clock is the attempt's CPU. `handshake` runs
// attempts one at a time; `load` (load.go) runs them from connection slots on a schedule.

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"time"
)

// client is what every attempt of one client process shares.
type client struct {
	args   *clientArgs
	config *tls.Config
	// resumption: a draw per attempt with --resume-ratio, from its own seed.
	draws *rand.Rand
}

func newClient(a *clientArgs) (*client, error) {
	groups, err := parseGroups(a.tls.groups)
	if err != nil {
		return nil, err
	}
	config := &tls.Config{
		MinVersion:       tls.VersionTLS13,
		MaxVersion:       tls.VersionTLS13,
		CurvePreferences: groups,
		ServerName:       a.servername,
	}
	if a.tls.transport == "quic" {
		config.NextProtos = []string{quicALPN}
	}
	if a.noVerify {
		config.InsecureSkipVerify = true
	} else {
		if a.ca == "" {
			return nil, errors.New("--ca is required unless --no-verify")
		}
		pool, err := certPool(a.ca)
		if err != nil {
			return nil, err
		}
		config.RootCAs = pool
	}
	if a.certPKI != "" {
		cred, err := loadCredential(pkiFile(a.certPKI, "chain-leaf+intermediates.pem"), pkiFile(a.certPKI, "leaf.key"))
		if err != nil {
			return nil, err
		}
		config.Certificates = []tls.Certificate{cred}
	}
	c := &client{args: a, config: config}
	if a.resumeRatioSet {
		c.draws = rand.New(rand.NewChaCha8(seedBytes(a.resumeSeed)))
	}
	return c, nil
}

// seedBytes is a ChaCha8 seed from a u64 (Go's own stream: the same seed draws the same
// sequence on this engine, not the Rust engines' sequence).
func seedBytes(seed uint64) [32]byte {
	var out [32]byte
	for i := 0; i < 8; i++ {
		out[i] = byte(seed >> (8 * i))
	}
	return out
}

// slot is one sequential client: its own kept session (each load slot keeps its own).
type slot struct {
	c     *client
	cache *keptSession
	// tally: where a `handshake` run counts its attempts (the load generator does not).
	tally *attemptTally
}

func (c *client) newSlot() *slot {
	s := &slot{c: c}
	if c.args.resume || c.args.resumeRatioSet {
		s.cache = &keptSession{}
	}
	return s
}

// keptSession is a client session cache of one session: every completed handshake's
// session replaces it, and an attempt offers it only when told to.
type keptSession struct {
	session *tls.ClientSessionState
	offer   bool
	// arrived, when set, hears of each session the server sends (the QUIC client waits for
	// one before it closes).
	arrived chan struct{}
}

func (k *keptSession) Get(string) (*tls.ClientSessionState, bool) {
	if !k.offer || k.session == nil {
		return nil, false
	}
	return k.session, true
}

func (k *keptSession) Put(_ string, cs *tls.ClientSessionState) {
	if cs != nil {
		k.session = cs
	}
	select {
	case k.arrived <- struct{}{}:
	default:
	}
}

// attempt makes one connection and returns its record (never an error: a failure is a
// record). Runs on the calling goroutine, which the caller has locked to its thread.
func (s *slot) attempt(seq uint64, warmup bool) clientRecord {
	a := s.c.args
	if a.tls.transport == "quic" {
		return s.attemptQUIC(seq, warmup)
	}
	rec := clientRecord{
		Schema: recordSchema, Side: "client", Stack: stackName, Transport: "tcp", Seq: seq,
		Warmup: warmup, Verify: !a.noVerify, Outcome: "ok",
	}
	return s.attemptTCP(rec, s.sessionConfig(&rec), time.Duration(a.timeoutMs)*time.Millisecond)
}

// sessionConfig is one attempt's TLS configuration: with resumption, the slot's kept
// session, offered or not (drawn with --resume-ratio, noted in the record).
func (s *slot) sessionConfig(rec *clientRecord) *tls.Config {
	a := s.c.args
	config := s.c.config
	if s.cache != nil {
		s.cache.offer = a.resume
		if a.resumeRatioSet {
			drawn := s.c.draws.Float64() < a.resumeRatio
			s.cache.offer = drawn && s.cache.session != nil
			rec.ResumeOffered = boolp(s.cache.offer)
		}
		config = config.Clone()
		config.ClientSessionCache = s.cache
	}
	return config
}

// The TCP attempt, after its configuration.
func (s *slot) attemptTCP(rec clientRecord, config *tls.Config, timeout time.Duration) clientRecord {
	a := s.c.args
	rec.StartUnixNs = uint64(time.Now().UnixNano())
	clock := startSpan()
	defer clock.end()
	raw, err := net.DialTimeout("tcp", a.connect, timeout)
	connectWall, _, _, _, _ := clock.since()
	rec.ConnectNs = u64p(connectWall)
	if err != nil {
		f := connectFailure(err)
		rec.TotalNs = u64p(connectWall)
		s.finishCPU(&rec, clock)
		return failed(rec, f)
	}
	if tcp, ok := raw.LocalAddr().(*net.TCPAddr); ok {
		port := uint16(tcp.Port)
		rec.LocalPort = &port
	}
	raw.(*net.TCPConn).SetNoDelay(true)
	cc := newCountingConn(raw)
	cc.SetDeadline(time.Now().Add(timeout))
	conn := tls.Client(cc, config)
	err = conn.HandshakeContext(context.Background())
	total, _, _, _, _ := clock.since()
	rec.HandshakeNs = u64p(sat(total, connectWall))
	rec.TotalNs = u64p(total)
	s.finishCPU(&rec, clock)
	rec.ConnID = helloID(cc.writtenHead)
	if err != nil {
		f := tlsFailure(err, false)
		s.afterFailure(conn, cc, &rec)
		raw.Close()
		return failed(rec, f)
	}
	st := conn.ConnectionState()
	hs := cc.counts()
	if a.instrument {
		rec.BytesRead, rec.BytesWritten = u64p(hs.read), u64p(hs.written)
		noteHandshake(&rec, st)
	}
	// close_notify both ways; a rejected client certificate arrives here, after the
	// client's Finished (TLS 1.3 lets the server refuse it only then).
	notify, closeErr := clientClose(conn, cc, timeout, a.certPKI != "")
	raw.Close()
	all := cc.counts()
	if a.instrument {
		rec.ConnBytesRead, rec.ConnBytesWritten = u64p(all.read), u64p(all.written)
		rec.PeerCloseNotify = &notify
	}
	if a.certPKI != "" && (closeErr != nil || !notify) {
		// TLS 1.3 lets a server refuse the client's certificate only after the client's
		// Finished: whatever ended the connection instead of a close_notify is that refusal
		// (its alert, when it arrived, in the detail), as on the OpenSSL engine.
		return failed(rec, refusal(closeErr))
	}
	return rec
}

// noteHandshake puts what the client saw of a completed handshake in its record: the
// group, whether it resumed, and for a full one the server's chain and the scheme its leaf
// signs with.
func noteHandshake(rec *clientRecord, st tls.ConnectionState) {
	rec.Group = groupName(st.CurveID)
	rec.Resumed = boolp(st.DidResume)
	if !st.DidResume {
		chain := observedChain(st.PeerCertificates)
		rec.PeerChain = &chain
		if len(st.PeerCertificates) > 0 {
			rec.Sigalg = onlyScheme(st.PeerCertificates[0].PublicKey)
		}
	}
}

func (s *slot) finishCPU(rec *clientRecord, clock span) {
	if !s.c.args.instrument {
		return
	}
	_, cpu, user, sys, alone := clock.since()
	if !alone {
		return
	}
	rec.CPUNs, rec.CPUUserUs, rec.CPUSysUs = u64p(cpu), u64p(user), u64p(sys)
}

// afterFailure: after a failure its own side detected (an alert is on its way), read until
// the server closes (bounded by the timeout), so the server receives the alert, not a reset.
func (s *slot) afterFailure(conn *tls.Conn, cc *countingConn, rec *clientRecord) {
	cc.SetDeadline(time.Now().Add(time.Duration(s.c.args.timeoutMs) * time.Millisecond))
	buf := make([]byte, 4096)
	for {
		if _, err := cc.Conn.Read(buf); err != nil {
			break
		}
	}
	if s.c.args.instrument {
		all := cc.counts()
		rec.ConnBytesRead, rec.ConnBytesWritten = u64p(all.read), u64p(all.written)
	}
}

// clientClose sends close_notify and reads until the server's (processing any session
// ticket on the way): (the server's close_notify arrived, the error that ended the read).
// With a client certificate it reads first, as the OpenSSL engine does: a server that
// refuses the certificate says so with an alert after the client's Finished, and a
// close_notify sent meanwhile would reach a closed socket, whose reset can overtake the
// alert; the engines' servers send their close_notify first after accepting.
func clientClose(conn *tls.Conn, cc *countingConn, timeout time.Duration, readFirst bool) (bool, error) {
	cc.SetDeadline(time.Now().Add(timeout))
	if readFirst {
		notify, err := readToClose(conn, cc)
		if err != nil || !notify {
			return notify, err
		}
		return true, conn.CloseWrite()
	}
	if err := conn.CloseWrite(); err != nil {
		return false, err
	}
	return readToClose(conn, cc)
}

// readToClose reads and discards until the peer's close_notify: (it arrived, the error
// that ended the connection otherwise; nil for a bare end of stream).
func readToClose(conn *tls.Conn, cc *countingConn) (bool, error) {
	buf := make([]byte, 512)
	for {
		_, err := conn.Read(buf)
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) && !cc.sawEOF {
			return true, nil
		}
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, err
	}
}

func failed(rec clientRecord, f failure) clientRecord {
	rec.Outcome = "failed"
	rec.ErrorCategory, rec.ErrorDetail = strp(f.category), strp(f.detail)
	rec.Group, rec.Sigalg, rec.Resumed, rec.PeerChain, rec.PeerCloseNotify = nil, nil, nil, nil, nil
	return rec
}

// runHandshake is `handshake`: warm-ups, then --count attempts or attempts for
// --duration-ms, one at a time, each record written as soon as its connection is closed.
func runHandshake(a *handshakeArgs) error {
	c, records, err := startClient(&a.client)
	if err != nil {
		return err
	}
	defer records.close()
	s := c.newSlot()
	var t attemptTally
	s.tally = &t
	seq, err := s.warmUp(records, a.client.seqStart, a.warmup)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(time.Duration(a.durationMs) * time.Millisecond)
	for i := uint64(0); ; i++ {
		if a.countSet && i >= a.count {
			break
		}
		if a.durSet && !time.Now().Before(deadline) {
			break
		}
		rec := s.attempt(seq, false)
		t.add(rec)
		if err := records.write(rec); err != nil {
			return fmt.Errorf("writing records: %v", err)
		}
		seq++
	}
	if line := t.noneSucceeded(); line != "" {
		fmt.Fprintln(os.Stderr, oneLine(line))
	}
	return nil
}

// attemptTally is what a `handshake` run's attempts came to: a run where none succeeded
// says so in one line on standard error (its records say why each failed), as the Rust
// engines' drive::attempts does.
type attemptTally struct {
	attempts, succeeded uint64
	firstFailure        string
}

func (t *attemptTally) add(rec clientRecord) {
	t.attempts++
	if rec.Outcome == "ok" {
		t.succeeded++
		return
	}
	if t.firstFailure == "" {
		t.firstFailure = "failed"
		if rec.ErrorCategory != nil {
			t.firstFailure = *rec.ErrorCategory
		}
		if rec.ErrorDetail != nil {
			t.firstFailure += ": " + *rec.ErrorDetail
		}
	}
}

func (t *attemptTally) noneSucceeded() string {
	if t.attempts == 0 || t.succeeded > 0 {
		return ""
	}
	return fmt.Sprintf("chainlab-go: handshake: none of %d attempt(s) succeeded; the first failed with %s (every attempt's record says why)", t.attempts, t.firstFailure)
}

// startClient is what `handshake` and `load` do first: the process pinned (--cpus), the
// client's TLS configuration, the records file.
func startClient(a *clientArgs) (*client, *recordWriter, error) {
	if a.cpus != nil {
		if err := pinProcess(a.cpus); err != nil {
			return nil, nil, err
		}
	}
	c, err := newClient(a)
	if err != nil {
		return nil, nil, err
	}
	records, err := openRecords(a.records)
	if err != nil {
		return nil, nil, err
	}
	return c, records, nil
}

// warmUp runs `count` unscheduled attempts one at a time from `seq` ("warmup": true) and
// returns the next sequence number.
func (s *slot) warmUp(records *recordWriter, seq, count uint64) (uint64, error) {
	for i := uint64(0); i < count; i++ {
		rec := s.attempt(seq, true)
		if s.tally != nil {
			s.tally.add(rec)
		}
		if err := records.write(rec); err != nil {
			return seq, err
		}
		seq++
	}
	return seq, nil
}
