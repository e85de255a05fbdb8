// Bytes at the socket, as every engine counts them: TLS records with their 5-byte headers,
// not TCP/IP headers. Reads are cut at record boundaries, so crypto/tls (which would
// otherwise read ahead whatever the socket holds) reads exactly the records it needs, as
// OpenSSL does: what the peer sent after the handshake (session tickets, close_notify) is
// not counted in the handshake's bytes. The ClientHello's first 8 random bytes are the
// connection's id on both sides (`conn_id`).

package main

import (
	"encoding/hex"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

const recordHeader = 5

// helloPrefix is how much of a stream holds the ClientHello random's first 8 bytes: the
// record header (5), the handshake header (4), legacy_version (2), then the random.
const helloPrefix = 5 + 4 + 2 + 8

type countingConn struct {
	net.Conn
	read, written uint64
	// Where reading is in the current record: header bytes still to read (0..5), then body.
	headerLeft int
	header     [recordHeader]byte
	bodyLeft   int
	// The first bytes each way, for the ClientHello random.
	readHead, writtenHead []byte
	sawEOF                bool
	abandoned             atomic.Bool
	deadline              sync.Mutex
	// Server: the chain GetCertificate chose and the scheme it signs with.
	choice chainChoice
}

func newCountingConn(c net.Conn) *countingConn {
	return &countingConn{Conn: c, headerLeft: recordHeader, choice: chainChoice{chosen: -1}}
}

func (c *countingConn) Read(p []byte) (int, error) {
	want := len(p)
	if c.headerLeft > 0 {
		want = min(want, c.headerLeft)
	} else {
		want = min(want, c.bodyLeft)
	}
	n, err := c.Conn.Read(p[:want])
	if n > 0 {
		c.read += uint64(n)
		c.readHead = keepHead(c.readHead, p[:n])
		c.advance(p[:n])
	}
	if errors.Is(err, io.EOF) {
		c.sawEOF = true
	}
	return n, err
}

// advance moves the record position past b (at most the rest of a header or body).
func (c *countingConn) advance(b []byte) {
	if c.headerLeft > 0 {
		copy(c.header[recordHeader-c.headerLeft:], b)
		c.headerLeft -= len(b)
		if c.headerLeft == 0 {
			c.bodyLeft = int(c.header[3])<<8 | int(c.header[4])
			if c.bodyLeft == 0 {
				c.headerLeft = recordHeader
			}
		}
		return
	}
	c.bodyLeft -= len(b)
	if c.bodyLeft == 0 {
		c.headerLeft = recordHeader
	}
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written += uint64(n)
	c.writtenHead = keepHead(c.writtenHead, p[:n])
	return n, err
}

func keepHead(head, b []byte) []byte {
	if len(head) >= helloPrefix {
		return head
	}
	return append(head, b[:min(len(b), helloPrefix-len(head))]...)
}

// helloID is the conn_id of a stream that starts with a ClientHello, or nil.
func helloID(head []byte) *string {
	if len(head) < helloPrefix || head[0] != 22 || head[5] != 1 {
		return nil
	}
	id := hex.EncodeToString(head[11:helloPrefix])
	return &id
}

// counts is the bytes each way so far.
type counts struct{ read, written uint64 }

func (c *countingConn) counts() counts { return counts{c.read, c.written} }

// abandon cuts a connection a stopping server no longer waits for.
func (c *countingConn) abandon() {
	c.deadline.Lock()
	defer c.deadline.Unlock()
	c.abandoned.Store(true)
	c.Conn.SetDeadline(time.Now())
}

// SetDeadline sets the socket's deadline, unless the connection was abandoned: its deadline
// then stays passed, so no later step (the close exchange, draining after a failure) waits.
func (c *countingConn) SetDeadline(t time.Time) error {
	c.deadline.Lock()
	defer c.deadline.Unlock()
	if c.abandoned.Load() {
		return c.Conn.SetDeadline(time.Now())
	}
	return c.Conn.SetDeadline(t)
}

// tcpChoice is where a TCP connection notes the server's chain choice.
func tcpChoice(c net.Conn) *chainChoice {
	if cc, ok := c.(*countingConn); ok {
		return &cc.choice
	}
	return nil
}
