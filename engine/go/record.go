// The records this engine writes: the fields, names and types of
// engine/crates/chainlab-record/records.schema.json (docs/engine-records.md says what each
// means). A pointer without omitempty is a field written as null when unknown; one with
// omitempty is a field the contract lets an engine leave out.

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

// recordSchema is the schema id every record carries.
const recordSchema = "chainlab.engine.record/1"

// stackName is the stack this engine is, in every record and in `info`.
const stackName = "go"

type observedCert struct {
	DerBytes int    `json:"der_bytes"`
	Subject  string `json:"subject"`
	SigAlg   string `json:"sig_alg"`
	KeyAlg   string `json:"key_alg"`
}

type clientRecord struct {
	Schema           string  `json:"schema"`
	Side             string  `json:"side"`
	Stack            string  `json:"stack"`
	Transport        string  `json:"transport"`
	Seq              uint64  `json:"seq"`
	Warmup           bool    `json:"warmup"`
	ConnID           *string `json:"conn_id"`
	LocalPort        *uint16 `json:"local_port"`
	StartUnixNs      uint64  `json:"start_unix_ns"`
	ConnectNs        *uint64 `json:"connect_ns"`
	HandshakeNs      *uint64 `json:"handshake_ns"`
	TotalNs          *uint64 `json:"total_ns"`
	CPUNs            *uint64 `json:"cpu_ns"`
	CPUUserUs        *uint64 `json:"cpu_user_us"`
	CPUSysUs         *uint64 `json:"cpu_sys_us"`
	BytesRead        *uint64 `json:"bytes_read"`
	BytesWritten     *uint64 `json:"bytes_written"`
	ConnBytesRead    *uint64 `json:"conn_bytes_read"`
	ConnBytesWritten *uint64 `json:"conn_bytes_written"`
	datagramCounts
	// QUIC only: the client's flight (datagrams).
	FlightDatagrams *uint64         `json:"flight_datagrams,omitempty"`
	PeerCloseNotify *bool           `json:"peer_close_notify"`
	Group           *string         `json:"group"`
	Sigalg          *string         `json:"sigalg"`
	Resumed         *bool           `json:"resumed"`
	ResumeOffered   *bool           `json:"resume_offered,omitempty"`
	Verify          bool            `json:"verify"`
	PeerChain       *[]observedCert `json:"peer_chain"`
	ClientKind      *string         `json:"client_kind,omitempty"`
	Outcome         string          `json:"outcome"`
	ErrorCategory   *string         `json:"error_category"`
	ErrorDetail     *string         `json:"error_detail"`
	IntendedNs      *uint64         `json:"intended_ns,omitempty"`
	SchedLagNs      *uint64         `json:"sched_lag_ns,omitempty"`
	LatencyNs       *uint64         `json:"latency_ns,omitempty"`
}

type serverRecord struct {
	Schema           string  `json:"schema"`
	Side             string  `json:"side"`
	Stack            string  `json:"stack"`
	Transport        string  `json:"transport"`
	ServerModel      string  `json:"server_model"`
	Seq              uint64  `json:"seq"`
	ConnID           *string `json:"conn_id"`
	PeerPort         *uint16 `json:"peer_port"`
	AcceptUnixNs     uint64  `json:"accept_unix_ns"`
	HandshakeNs      *uint64 `json:"handshake_ns"`
	CPUNs            *uint64 `json:"cpu_ns"`
	CPUUserUs        *uint64 `json:"cpu_user_us"`
	CPUSysUs         *uint64 `json:"cpu_sys_us"`
	ConnNs           *uint64 `json:"conn_ns"`
	ConnCPUNs        *uint64 `json:"conn_cpu_ns"`
	BytesRead        *uint64 `json:"bytes_read"`
	BytesWritten     *uint64 `json:"bytes_written"`
	ConnBytesRead    *uint64 `json:"conn_bytes_read"`
	ConnBytesWritten *uint64 `json:"conn_bytes_written"`
	datagramCounts
	PeerCloseNotify *bool   `json:"peer_close_notify"`
	Group           *string `json:"group"`
	Sigalg          *string `json:"sigalg"`
	Resumed         *bool   `json:"resumed"`
	// With --second-pki: present, null when no chain was sent.
	ChainIndex optionalIndex `json:"chain_index,omitzero"`
	// With --client-ca: present, null when no certificate arrived.
	PeerChain     optionalChain `json:"peer_chain,omitzero"`
	Outcome       string        `json:"outcome"`
	ErrorCategory *string       `json:"error_category"`
	ErrorDetail   *string       `json:"error_detail"`
}

// datagramCounts: QUIC only (absent over TCP), the datagrams each way over the handshake
// and over the connection; both records hold them (encoding/json writes an embedded
// struct's fields as the record's own).
type datagramCounts struct {
	DatagramsRead        *uint64 `json:"datagrams_read,omitempty"`
	DatagramsWritten     *uint64 `json:"datagrams_written,omitempty"`
	ConnDatagramsRead    *uint64 `json:"conn_datagrams_read,omitempty"`
	ConnDatagramsWritten *uint64 `json:"conn_datagrams_written,omitempty"`
}

// optionalIndex is a field that is absent, null or a number (Rust's Option<Option<u8>>).
type optionalIndex struct {
	Present bool
	Value   *int
}

func (o optionalIndex) IsZero() bool { return !o.Present }
func (o optionalIndex) MarshalJSON() ([]byte, error) {
	return json.Marshal(o.Value)
}

// optionalChain is a field that is absent, null or a chain.
type optionalChain struct {
	Present bool
	Value   *[]observedCert
}

func (o optionalChain) IsZero() bool { return !o.Present }
func (o optionalChain) MarshalJSON() ([]byte, error) {
	return json.Marshal(o.Value)
}

type generatorRecord struct {
	Schema           string  `json:"schema"`
	Side             string  `json:"side"`
	Rate             float64 `json:"rate"`
	Arrivals         string  `json:"arrivals"`
	DurationNs       uint64  `json:"duration_ns"`
	MaxInFlight      uint64  `json:"max_in_flight"`
	CPUs             *[]int  `json:"cpus"`
	Scheduled        uint64  `json:"scheduled"`
	Started          uint64  `json:"started"`
	Saturated        uint64  `json:"saturated"`
	WallNs           uint64  `json:"wall_ns"`
	ProcessCPUNs     uint64  `json:"process_cpu_ns"`
	SchedulerCPUNs   uint64  `json:"scheduler_cpu_ns"`
	MaxDispatchLagNs uint64  `json:"max_dispatch_lag_ns"`
}

type serverThreadRecord struct {
	Schema      string `json:"schema"`
	Side        string `json:"side"`
	Stack       string `json:"stack"`
	ServerModel string `json:"server_model"`
	Thread      uint64 `json:"thread"`
	CPU         *int   `json:"cpu"`
	Connections uint64 `json:"connections"`
	WallNs      uint64 `json:"wall_ns"`
	CPUNs       uint64 `json:"cpu_ns"`
	ConnCPUNs   uint64 `json:"conn_cpu_ns"`
	WaitCPUNs   uint64 `json:"wait_cpu_ns"`
}

// recordWriter writes one record per line, flushed, from any goroutine: a crash loses at
// most the record being written.
type recordWriter struct {
	mu  sync.Mutex
	out io.Writer
	f   *os.File
}

func openRecords(target string) (*recordWriter, error) {
	if target == "-" {
		return &recordWriter{out: os.Stdout}, nil
	}
	f, err := os.Create(target)
	if err != nil {
		return nil, fmt.Errorf("cannot create records file %q: %v", target, err)
	}
	return &recordWriter{out: f, f: f}, nil
}

func (w *recordWriter) write(record any) error {
	line, err := json.Marshal(record)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.out.Write(append(line, '\n'))
	return err
}

func (w *recordWriter) close() error {
	if w.f != nil {
		return w.f.Close()
	}
	return nil
}

func u64p(v uint64) *uint64 { return &v }
func strp(v string) *string { return &v }
func boolp(v bool) *bool    { return &v }
