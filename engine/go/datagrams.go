// Bytes and datagrams at the UDP socket, as every engine counts them over QUIC: UDP payload
// bytes (QUIC packets), not UDP/IP headers, per peer address. quic-go is handed this
// wrapper as a plain net.PacketConn (not its *net.UDPConn), so every datagram goes through
// one ReadFrom or WriteTo call: no batched reads, no segmentation offload (GSO), no ECN,
// which would hide datagrams from the count (docs/stacks.md says so).

package main

import (
	"net"
	"sync"
	"syscall"
	"time"
)

// tally is one peer's datagrams each way, and when the last one arrived.
type tally struct {
	read, written                   uint64 // UDP payload bytes
	datagramsRead, datagramsWritten uint64
	// Datagrams written when the last datagram was read (the client's flight_datagrams).
	writtenAtLastRead uint64
}

// countingPacketConn counts datagrams per peer address. On a server, a datagram from an
// address it does not count yet that could start a connection (a client's first Initial)
// opens a pending tally, with the time and the process's clocks when it arrived, which
// `track` turns into the connection's once quic-go makes one of it.
type countingPacketConn struct {
	conn *net.UDPConn
	// connected: the client's socket, connected to the server (an ICMP port unreachable then
	// reaches it as ECONNREFUSED, which quic-go's error carries); WriteTo becomes Write.
	connected bool
	mu        sync.Mutex
	peers     map[string]*tally
	pending   map[string]*pendingPeer
	// beforeStart, when set, runs before a datagram that starts a connection is counted and
	// its clocks are read (outside the lock): the server's wait for connections closing.
	beforeStart func()
	// The first datagram written (the client's first Initial).
	firstWritten []byte
}

// pendingPeer is an address's datagrams before its connection exists: when the first
// arrived (wall clock and the process's clocks), that datagram, and the counts so far.
type pendingPeer struct {
	at        time.Time
	cpu       uint64
	user, sys uint64
	datagram  []byte
	tally     tally
}

func newCountingPacketConn(conn *net.UDPConn, connected bool) *countingPacketConn {
	return &countingPacketConn{
		conn: conn, connected: connected, peers: map[string]*tally{},
		pending: map[string]*pendingPeer{},
	}
}

func (c *countingPacketConn) ReadFrom(p []byte) (int, net.Addr, error) {
	n, addr, err := c.conn.ReadFrom(p)
	if err != nil {
		return n, addr, err
	}
	if c.connected {
		addr = c.conn.RemoteAddr()
	}
	key := addr.String()
	if c.beforeStart != nil && startsConnection(p[:n]) && !c.counting(key) {
		c.beforeStart()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.peers[key]
	if t == nil && !c.connected {
		if pp := c.pending[key]; pp != nil {
			t = &pp.tally
		} else if startsConnection(p[:n]) {
			user, sys := processUsage()
			pp := &pendingPeer{at: time.Now(), cpu: processCPU(), user: user, sys: sys, datagram: append([]byte(nil), p[:n]...)}
			c.pending[key] = pp
			t = &pp.tally
		}
	}
	if t != nil {
		t.read += uint64(n)
		t.datagramsRead++
		t.writtenAtLastRead = t.datagramsWritten
	}
	return n, addr, nil
}

// counting says whether an address's datagrams are counted already (or pending).
func (c *countingPacketConn) counting(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peers[key] != nil || c.pending[key] != nil
}

// startsConnection: a client's first Initial (long header, type Initial) in a datagram of
// at least 1200 bytes (RFC 9000 Section 14.1).
func startsConnection(p []byte) bool {
	return len(p) >= 1200 && p[0]&0xf0 == 0xc0
}

// track starts counting a peer's connection from what arrived before it existed, and
// returns that (nil when nothing did: a client's socket).
func (c *countingPacketConn) track(addr net.Addr) *pendingPeer {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := addr.String()
	pp := c.pending[key]
	delete(c.pending, key)
	if _, known := c.peers[key]; !known {
		t := &tally{}
		if pp != nil {
			*t = pp.tally
		}
		c.peers[key] = t
	}
	return pp
}

// drop forgets what arrived from an address whose connection was refused.
func (c *countingPacketConn) drop(addr net.Addr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, addr.String())
}

// forget stops counting a peer and returns its tally.
func (c *countingPacketConn) forget(addr net.Addr) tally {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.peers[addr.String()]
	delete(c.peers, addr.String())
	if t == nil {
		return tally{}
	}
	return *t
}

// tallyOf is a peer's counts so far.
func (c *countingPacketConn) tallyOf(addr net.Addr) tally {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.peers[addr.String()]; t != nil {
		return *t
	}
	return tally{}
}

func (c *countingPacketConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	var n int
	var err error
	if c.connected {
		n, err = c.conn.Write(p)
	} else {
		n, err = c.conn.WriteTo(p, addr)
	}
	if n > 0 {
		c.mu.Lock()
		if t := c.peers[addr.String()]; t != nil {
			t.written += uint64(n)
			t.datagramsWritten++
		}
		if c.firstWritten == nil {
			c.firstWritten = append([]byte(nil), p[:n]...)
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *countingPacketConn) Close() error                       { return c.conn.Close() }
func (c *countingPacketConn) LocalAddr() net.Addr                { return c.conn.LocalAddr() }
func (c *countingPacketConn) SetDeadline(t time.Time) error      { return c.conn.SetDeadline(t) }
func (c *countingPacketConn) SetReadDeadline(t time.Time) error  { return c.conn.SetReadDeadline(t) }
func (c *countingPacketConn) SetWriteDeadline(t time.Time) error { return c.conn.SetWriteDeadline(t) }

// The socket's buffers and options, which quic-go sets through these (the receive buffer
// it asks for, the Don't Fragment bit); reads and writes still go through ReadFrom/WriteTo.
func (c *countingPacketConn) SetReadBuffer(n int) error  { return c.conn.SetReadBuffer(n) }
func (c *countingPacketConn) SetWriteBuffer(n int) error { return c.conn.SetWriteBuffer(n) }
func (c *countingPacketConn) SyscallConn() (syscall.RawConn, error) {
	return c.conn.SyscallConn()
}
