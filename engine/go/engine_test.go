package main

import (
	"bytes"
	"encoding/asn1"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// A peer that sent two records at once: the reader hands crypto/tls the first record only,
// header and body apart, so bytes after the handshake are never counted in it.
func TestReadsStopAtRecordBoundaries(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	first := append([]byte{22, 3, 3, 0, 3}, 1, 2, 3)
	second := append([]byte{23, 3, 3, 0, 2}, 9, 9)
	go func() { client.Write(append(first, second...)); client.Close() }()
	cc := newCountingConn(server)
	buf := make([]byte, 64)
	var got [][]byte
	for {
		n, err := cc.Read(buf)
		if n > 0 {
			got = append(got, append([]byte(nil), buf[:n]...))
		}
		if err != nil {
			break
		}
	}
	want := [][]byte{first[:5], first[5:], second[:5], second[5:]}
	if len(got) != len(want) {
		t.Fatalf("reads %v, want %v", got, want)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("read %d: %v, want %v", i, got[i], want[i])
		}
	}
	if cc.read != uint64(len(first)+len(second)) || !cc.sawEOF {
		t.Fatalf("counted %d, EOF %v", cc.read, cc.sawEOF)
	}
}

func TestTheConnectionIDIsTheClientHellosRandom(t *testing.T) {
	hello := []byte{22, 3, 1, 0, 200, 1, 0, 0, 196, 3, 3, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5}
	if id := helloID(keepHead(nil, hello)); id == nil || *id != "deadbeef01020304" {
		t.Fatalf("id %v", id)
	}
	if id := helloID([]byte{23, 3, 3}); id != nil {
		t.Fatalf("a short or non-hello stream has no id: %v", *id)
	}
}

// OpenSSL writes ML-DSA keys as seed and expanded key together; Go derives the key from
// the seed, so the seed is read from either form.
func TestAnMLDSAKeysSeedIsReadFromEveryForm(t *testing.T) {
	seed := bytes.Repeat([]byte{7}, 32)
	both, _ := asn1.Marshal(struct{ Seed, Expanded []byte }{seed, []byte{1, 2, 3}})
	only, _ := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, Bytes: seed})
	for name, form := range map[string][]byte{"both": both, "seed": only} {
		got, err := mldsaSeed(form)
		if err != nil || !bytes.Equal(got, seed) {
			t.Fatalf("%s: %v %v", name, got, err)
		}
	}
	expanded, _ := asn1.Marshal([]byte{1, 2, 3})
	if _, err := mldsaSeed(expanded); err == nil {
		t.Fatal("an expanded key alone has no seed")
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestFailuresFallIntoTheEnginesCategories(t *testing.T) {
	alert := func(text string) error {
		return &net.OpError{Op: "remote error", Err: errors.New("tls: " + text)}
	}
	for _, c := range []struct {
		err    error
		server bool
		want   string
	}{
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, false, "connect_refused"},
		{&net.OpError{Op: "dial", Err: syscall.ECONNRESET}, false, "connect_refused"},
		{io.EOF, false, "peer_closed"},
		{syscall.ECONNRESET, true, "peer_closed"},
		{timeoutErr{}, true, "handshake_timeout"},
		{alert("unknown certificate authority"), true, "tls_alert"},
		{alert("handshake failure"), false, "no_shared_group"},
		{errors.New("tls: client didn't provide a certificate"), true, "client_cert_rejected"},
		{errors.New("tls: no ECDHE curve supported by both client and server"), true, "no_shared_group"},
	} {
		var got string
		if c.want == "connect_refused" {
			got = connectFailure(c.err).category
		} else {
			got = tlsFailure(c.err, c.server).category
		}
		if got != c.want {
			t.Errorf("%v (server %v): %s, want %s", c.err, c.server, got, c.want)
		}
	}
	if f := tlsFailure(alert("unknown certificate authority"), true); f.detail != "received alert unknown_ca (48)" {
		t.Errorf("detail %q", f.detail)
	}
	// A client that sent its certificate: whatever ended the connection is the refusal.
	for _, err := range []error{alert("bad certificate"), io.EOF, nil} {
		if f := refusal(err); f.category != "client_cert_rejected" {
			t.Errorf("%v: %s", err, f.category)
		}
	}
	if f := refusal(alert("certificate required")); f.detail != "received alert certificate_required (116)" {
		t.Errorf("detail %q", f.detail)
	}
}

// A span is alone only when no other connection was in flight at any moment of it.
func TestASpanIsAloneOnlyWithoutOverlap(t *testing.T) {
	a := startSpan()
	if _, _, _, _, alone := a.since(); !alone {
		t.Fatal("a span by itself is alone")
	}
	b := startSpan()
	b.end()
	if _, alone := a.sinceIdle(); alone {
		t.Fatal("another connection started and ended within it")
	}
	a.end()
	c := startSpan()
	time.Sleep(time.Millisecond)
	if _, _, _, _, alone := c.since(); !alone {
		t.Fatal("after the others ended, a new span is alone again")
	}
	c.end()
}

func TestSchedulesAreFixedInAdvance(t *testing.T) {
	constant, _ := schedule(&loadArgs{rate: 100, durationMs: 50, arrivals: "constant"})
	if len(constant) != 5 || constant[1] != 10_000_000 {
		t.Fatalf("constant %v", constant)
	}
	a, _ := schedule(&loadArgs{rate: 1000, durationMs: 100, arrivals: "poisson", seed: 3})
	b, _ := schedule(&loadArgs{rate: 1000, durationMs: 100, arrivals: "poisson", seed: 3})
	if len(a) == 0 || len(a) != len(b) || a[len(a)-1] != b[len(b)-1] {
		t.Fatal("the same seed draws the same schedule")
	}
	if _, err := schedule(&loadArgs{rate: 1e9, durationMs: 10_000, arrivals: "constant"}); err == nil {
		t.Fatal("a schedule past the bound is refused")
	}
}

func TestAValueTheFlagPackageCannotParseIsSaidAsTheRustEnginesSayIt(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"--connect", "127.0.0.1:1", "--no-verify", "--rate", "10", "--duration-ms", "-1"},
			"invalid value '-1' for '--duration-ms'; allowed: a whole number (0 or more)"},
		{[]string{"--connect", "127.0.0.1:1", "--no-verify", "--rate", "lots"},
			"invalid value 'lots' for '--rate'; allowed: a positive number"},
		{[]string{"--connect", "127.0.0.1:1", "--no-verify", "--rate", "10", "--duration-ms", "5", "--warmup", "x"},
			"invalid value 'x' for '--warmup'; allowed: a whole number (0 or more)"},
		{[]string{"--connect", "127.0.0.1:1", "--no-verify", "--rate", "10", "--duration-ms", "99999999999999999999"},
			"invalid value '99999999999999999999' for '--duration-ms'; allowed: a whole number (0 or more) that fits its type"},
	} {
		_, err := parseLoad(c.argv)
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: got %v, want %q", c.argv, err, c.want)
		}
	}
}
