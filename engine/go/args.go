// Command lines: the flags of `serve`, `handshake`, `load` and `primitives`, named as every
// engine names them (chainlab_record::args), so a campaign's commands run on this stack too.
// What crypto/tls cannot do is parsed and refused in one line naming the option and the
// missing capability (`info` lists them), never silently ignored.

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The engine features this engine has (`info`'s `features`), named as Python's capability
// table (chainlab/axes/stack.py) and the Rust engines' (chainlab_record::features) name them.
// What it lacks is refused in one line naming the option and the feature (`missing`); an
// option it does not define at all is refused as an unexpected argument.
var features = []string{
	"quic",
	"client_auth",
	"resumption_mix",
	"load",
	"workers",
}

func missing(option, capability string) error {
	return fmt.Errorf("%s: not supported by the go engine (missing capability: %s; `chainlab-go info` lists what it supports)", option, capability)
}

// tlsArgs: what both sides' TLS 1.3 contexts offer.
type tlsArgs struct {
	transport, groups, sigalgs, compression, signatureImpl string
	maxCertList                                            uint64
}

func (t *tlsArgs) define(fs *flag.FlagSet) {
	fs.StringVar(&t.transport, "transport", "tcp", "tcp or quic (QUIC v1 through quic-go)")
	fs.StringVar(&t.groups, "groups", "X25519MLKEM768", "key-exchange groups, colon-separated OpenSSL names")
	fs.StringVar(&t.sigalgs, "sigalgs", "", "signature schemes (crypto/tls cannot narrow them)")
	fs.StringVar(&t.compression, "cert-compression", "none", "certificate compression (none only)")
	fs.Uint64Var(&t.maxCertList, "max-cert-list", 1<<20, "largest Certificate message (crypto/tls keeps its own limit)")
	fs.StringVar(&t.signatureImpl, "signature-impl", "stack", "stack (Go's own ML-DSA)")
}

func (t *tlsArgs) check() error {
	switch {
	case t.transport != "tcp" && t.transport != "quic":
		return fmt.Errorf("invalid value %q for '--transport'; allowed: tcp, quic", t.transport)
	case t.sigalgs != "":
		return missing("--sigalgs", "client_sigalgs")
	case t.compression != "none":
		if t.compression == "zlib" || t.compression == "brotli" || t.compression == "zstd" {
			return fmt.Errorf("--cert-compression %s: not supported by the go engine (crypto/tls has no RFC 8879); allowed: none", t.compression)
		}
		return fmt.Errorf("invalid value %q for '--cert-compression'; allowed: none, zlib, brotli, zstd", t.compression)
	case t.signatureImpl == "liboqs":
		return missing("--signature-impl liboqs", "signature_impl_liboqs")
	case t.signatureImpl != "stack":
		return fmt.Errorf("invalid value %q for '--signature-impl'; allowed: stack, liboqs", t.signatureImpl)
	}
	_, err := parseGroups(t.groups)
	return err
}

type serveArgs struct {
	pki, listen, chain, records, model, clientCA, secondPKI, cpusText string
	chainOrder                                                        string
	tls                                                               tlsArgs
	tickets, workers, backlog                                         int
	ioTimeoutMs, maxConnections                                       uint64
	instrument                                                        bool
	cpus                                                              []int
}

func parseServe(argv []string) (*serveArgs, error) {
	a := &serveArgs{}
	fs := newFlagSet("serve")
	fs.StringVar(&a.pki, "pki", "", "hierarchy directory written by `pki`")
	fs.StringVar(&a.listen, "listen", "127.0.0.1:0", "address to listen on")
	fs.StringVar(&a.chain, "chain", "leaf+intermediates", "leaf, leaf+intermediates or full")
	a.tls.define(fs)
	fs.IntVar(&a.tickets, "tickets", 0, "session tickets per full handshake (0 or 1)")
	fs.StringVar(&a.records, "records", "-", "where records go")
	fs.StringVar(&a.model, "server-model", "threads", "threads or event")
	fs.IntVar(&a.workers, "workers", 1, "serving threads (threads) or GOMAXPROCS (event)")
	fs.Uint64Var(&a.ioTimeoutMs, "io-timeout-ms", 10_000, "give up on a stalled peer after this long")
	fs.Uint64Var(&a.maxConnections, "max-connections", 0, "stop after this many connections")
	fs.IntVar(&a.backlog, "listen-backlog", 4096, "listen(2) backlog")
	noInstrument := fs.Bool("no-instrument", false, "no CPU clocks")
	fs.StringVar(&a.cpusText, "cpus", "", "run on these CPUs only")
	fs.StringVar(&a.clientCA, "client-ca", "", "mutual TLS: the client trust anchors")
	fs.StringVar(&a.secondPKI, "second-pki", "", "dual-chain serving: a second hierarchy")
	fs.StringVar(&a.chainOrder, "chain-order", "client", "dual-chain serving: whose order picks the chain, client or server (post-quantum first)")
	refused := refusals(fs, map[string]string{"random-seed": "seeded_random"})
	for name, capability := range map[string]string{
		"mtc-retry-standalone": "mtc", "trust-anchor-ids": "trust_anchors",
		"prefer-server-groups": "server_group_preference",
	} {
		refused[name] = capability
		fs.Bool(name, false, "not on this stack")
	}
	if err := parse(fs, argv, refused); err != nil {
		return nil, err
	}
	a.instrument = !*noInstrument
	if a.pki == "" {
		return nil, errors.New("the following required arguments were not provided: --pki <PKI>")
	}
	switch a.chain {
	case "leaf", "leaf+intermediates", "full":
	case "mtc-standalone", "mtc-landmark":
		return nil, missing("--chain "+a.chain, "mtc")
	default:
		return nil, fmt.Errorf("invalid value %q for '--chain'; allowed: leaf, leaf+intermediates, full, mtc-standalone, mtc-landmark", a.chain)
	}
	if a.model != "threads" && a.model != "event" {
		return nil, fmt.Errorf("invalid value %q for '--server-model'; allowed: threads, event", a.model)
	}
	if a.chainOrder != "client" && a.chainOrder != "server" {
		return nil, fmt.Errorf("invalid value %q for '--chain-order'; allowed: client, server", a.chainOrder)
	}
	if a.workers < 1 {
		return nil, fmt.Errorf("invalid value '%d' for '--workers': at least 1", a.workers)
	}
	if a.workers > 1 && a.tls.transport == "quic" {
		return nil, fmt.Errorf("invalid value '%d' for '--workers' with --transport quic: one UDP socket serves every connection; allowed: 1", a.workers)
	}
	if a.tickets < 0 || a.tickets > 1 {
		return nil, fmt.Errorf("invalid value '%d' for '--tickets': crypto/tls sends one session ticket per full handshake; allowed: 0, 1", a.tickets)
	}
	if a.backlog < 1 {
		return nil, fmt.Errorf("invalid value '%d' for '--listen-backlog': at least 1", a.backlog)
	}
	if a.cpusText != "" {
		cpus, err := parseCPUs(a.cpusText)
		if err != nil {
			return nil, err
		}
		a.cpus = cpus
	}
	return a, a.tls.check()
}

// clientArgs: what `handshake` and `load` share.
type clientArgs struct {
	connect, ca, certPKI, servername, records, population, cpusText string
	tls                                                             tlsArgs
	noVerify, resume, instrument                                    bool
	resumeRatio                                                     float64
	resumeRatioSet                                                  bool
	resumeSeed, populationSeed, timeoutMs, seqStart                 uint64
	cpus                                                            []int
}

func (c *clientArgs) define(fs *flag.FlagSet) *bool {
	fs.StringVar(&c.connect, "connect", "", "server address")
	fs.StringVar(&c.ca, "ca", "", "trust anchors")
	fs.StringVar(&c.certPKI, "cert-pki", "", "mutual TLS: the client's hierarchy")
	fs.BoolVar(&c.noVerify, "no-verify", false, "skip chain verification")
	fs.StringVar(&c.servername, "servername", "localhost", "SNI and the name checked")
	c.tls.define(fs)
	fs.BoolVar(&c.resume, "resume", false, "offer the last ticket")
	fs.Func("resume-ratio", "offer the kept ticket with this probability", func(v string) error {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r < 0 || r > 1 {
			return fmt.Errorf("a probability from 0 to 1")
		}
		c.resumeRatio, c.resumeRatioSet = r, true
		return nil
	})
	fs.Uint64Var(&c.resumeSeed, "resume-seed", 1, "seed of the resumption draws")
	fs.StringVar(&c.population, "population", "", "a mixed client population")
	fs.Uint64Var(&c.populationSeed, "population-seed", 1, "seed of the population draws")
	fs.Uint64Var(&c.timeoutMs, "timeout-ms", 10_000, "connect and handshake timeout")
	fs.StringVar(&c.records, "records", "-", "where records go")
	fs.Uint64Var(&c.seqStart, "seq-start", 0, "first sequence number")
	noInstrument := fs.Bool("no-instrument", false, "latency only")
	fs.StringVar(&c.cpusText, "cpus", "", "run on these CPUs only")
	return noInstrument
}

var clientRefusals = map[string]string{
	"untrusted": "untrusted_intermediates", "mtc-trust": "mtc", "mtc-cosigners-required": "mtc",
	"mtc-landmark-lag": "mtc",
	"trust-anchors":    "trust_anchors", "trust-anchors-filler": "trust_anchors",
	"client-profile": "client_profile",
}
var clientFlagRefusals = map[string]string{
	"partial-chain": "partial_chain", "mtc-landmarks": "mtc", "mtc-retry": "mtc",
	"trust-anchor-retry": "trust_anchors", "trust-anchors-own": "trust_anchors",
}

// ... and `handshake`'s alone: each connection's close is read before the next handshake
// (the Rust engines' --defer-close reads it after).
var handshakeFlagRefusals = map[string]string{"defer-close": "deferred_close"}

// refuseFlags declares each boolean flag of `flags` as one this stack refuses, naming its
// capability.
func refuseFlags(fs *flag.FlagSet, refused map[string]string, flags map[string]string) {
	for name, capability := range flags {
		refused[name] = capability
		fs.Bool(name, false, "not on this stack")
	}
}

func (c *clientArgs) check(noInstrument bool) error {
	c.instrument = !noInstrument
	if c.connect == "" {
		return errors.New("the following required arguments were not provided: --connect <CONNECT>")
	}
	if c.population != "" {
		// Every kind of a population offers its own signature schemes.
		return missing("--population", "client_sigalgs")
	}
	// Checked whatever else is given: --no-verify does not drop a bad --ca.
	if c.ca != "" {
		text, err := os.ReadFile(c.ca)
		if err != nil {
			return fmt.Errorf("--ca %s: cannot read it (%v)", c.ca, err)
		}
		if !strings.Contains(string(text), "-----BEGIN CERTIFICATE-----") {
			return fmt.Errorf("--ca %s: holds no PEM certificate (-----BEGIN CERTIFICATE-----)", c.ca)
		}
	}
	if c.cpusText != "" {
		cpus, err := parseCPUs(c.cpusText)
		if err != nil {
			return err
		}
		c.cpus = cpus
	}
	return c.tls.check()
}

type handshakeArgs struct {
	client            clientArgs
	count, durationMs uint64
	countSet, durSet  bool
	warmup            uint64
}

func parseHandshake(argv []string) (*handshakeArgs, error) {
	a := &handshakeArgs{}
	fs := newFlagSet("handshake")
	noInstrument := a.client.define(fs)
	fs.Func("count", "measured handshakes", func(v string) (err error) {
		a.count, err = strconv.ParseUint(v, 10, 64)
		a.countSet = true
		return err
	})
	fs.Func("duration-ms", "measured handshakes for this long", func(v string) (err error) {
		a.durationMs, err = strconv.ParseUint(v, 10, 64)
		a.durSet = true
		return err
	})
	fs.Uint64Var(&a.warmup, "warmup", 0, "warm-up handshakes")
	refused := refusals(fs, clientRefusals, map[string]string{"random-seed": "seeded_random"})
	refuseFlags(fs, refused, clientFlagRefusals)
	refuseFlags(fs, refused, handshakeFlagRefusals)
	if err := parse(fs, argv, refused); err != nil {
		return nil, err
	}
	if !a.countSet && !a.durSet {
		a.count, a.countSet = 1, true
	}
	return a, a.client.check(*noInstrument)
}

type loadArgs struct {
	client                   clientArgs
	rate                     float64
	arrivals                 string
	durationMs, seed, warmup uint64
	maxInFlight              int
	durationSet, rateSet     bool
}

func parseLoad(argv []string) (*loadArgs, error) {
	a := &loadArgs{}
	fs := newFlagSet("load")
	noInstrument := a.client.define(fs)
	fs.Func("rate", "attempts per second", func(v string) error {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || !(r > 0) {
			return fmt.Errorf("a positive number")
		}
		a.rate, a.rateSet = r, true
		return nil
	})
	fs.StringVar(&a.arrivals, "arrivals", "constant", "constant or poisson")
	fs.Func("duration-ms", "length of the schedule", func(v string) (err error) {
		a.durationMs, err = strconv.ParseUint(v, 10, 64)
		a.durationSet = true
		return err
	})
	fs.IntVar(&a.maxInFlight, "max-in-flight", 64, "connections in flight at most")
	fs.Uint64Var(&a.seed, "seed", 1, "seed of the Poisson schedule")
	fs.Uint64Var(&a.warmup, "warmup", 0, "warm-up handshakes")
	refused := refusals(fs, clientRefusals)
	refuseFlags(fs, refused, clientFlagRefusals)
	if err := parse(fs, argv, refused); err != nil {
		return nil, err
	}
	if !a.rateSet || !a.durationSet {
		return nil, errors.New("the following required arguments were not provided: --rate <RATE> --duration-ms <DURATION_MS>")
	}
	if a.arrivals != "constant" && a.arrivals != "poisson" {
		return nil, fmt.Errorf("invalid value %q for '--arrivals'; allowed: constant, poisson", a.arrivals)
	}
	if a.maxInFlight < 1 {
		return nil, fmt.Errorf("invalid value '%d' for '--max-in-flight': at least 1", a.maxInFlight)
	}
	return a, a.client.check(*noInstrument)
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// refusals defines options this stack takes only to refuse (string-valued and boolean),
// returning option -> capability.
func refusals(fs *flag.FlagSet, valued ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range valued {
		for name, capability := range m {
			fs.String(name, "", "not on this stack")
			out[name] = capability
		}
	}
	return out
}

// parse reads argv, then refuses any option of `refused` that was given.
func parse(fs *flag.FlagSet, argv []string, refused map[string]string) error {
	if err := fs.Parse(argv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
			return fmt.Errorf("unexpected argument '--%s' found", strings.TrimLeft(name, "-"))
		}
		if line := badValue(fs, msg); line != "" {
			return errors.New(line)
		}
		return errors.New(msg)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument '%s' found", fs.Arg(0))
	}
	if line := brokenRule(fs); line != "" {
		return errors.New(line)
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		if capability, ok := refused[f.Name]; ok && err == nil {
			err = missing("--"+f.Name, capability)
		}
	})
	return err
}

var errHelp = errors.New("help")

// badValueRE reads the flag package's `invalid value "V" for flag -NAME: why`.
var badValueRE = regexp.MustCompile(`^invalid value "(.*)" for flag -([a-z0-9-]+): (.*)$`)

// badValue says a value the flag package could not parse as the Rust engines do (the option,
// the value, what it allows) instead of Go's parser's words (`strconv.ParseUint: parsing
// "-1": invalid syntax`); "" for any other error. A flag's own check that says what it
// allows (a `fs.Func` returning "a positive number") is kept as its words.
func badValue(fs *flag.FlagSet, msg string) string {
	m := badValueRE.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	why := m[3]
	what := why
	switch {
	case strings.HasPrefix(why, "strconv.ParseUint"):
		what = "a whole number (0 or more)"
	case strings.HasPrefix(why, "strconv.ParseInt"), strings.HasPrefix(why, "strconv.Atoi"):
		what = "an integer"
	case strings.HasPrefix(why, "strconv.ParseFloat"):
		what = "a number"
	case why == "parse error" || why == "value out of range":
		// A typed flag (Uint64Var, IntVar, ...): what its type holds.
		what = "a value of its type"
		if f := fs.Lookup(m[2]); f != nil {
			if g, ok := f.Value.(flag.Getter); ok {
				switch g.Get().(type) {
				case uint, uint64:
					what = "a whole number (0 or more)"
				case int, int64:
					what = "an integer"
				case float64:
					what = "a number"
				case bool:
					what = "true or false"
				case time.Duration:
					what = "a duration such as 500ms or 2s"
				}
			}
		}
	}
	if strings.Contains(why, "out of range") {
		// A number of the right kind, too large for the option's type: not the kind's fault.
		what += " that fits its type"
	}
	return fmt.Sprintf("invalid value '%s' for '--%s'; allowed: %s", m[1], m[2], what)
}

// optionRule is one rule between two options of the named subcommands, as the Rust engines'
// chainlab_record::args::OPTION_RULES says it (the same table, this language's copy; `info`
// prints it and tests/test_engine_options.py holds every stack to it): "needs" the other
// given too, "needs_value" the other's value (given or default) to be `value`, "conflicts"
// the other not given.
type optionRule struct {
	Subcommands []string `json:"subcommands"`
	Option      string   `json:"option"`
	Rule        string   `json:"rule"`
	Other       string   `json:"other"`
	Value       string   `json:"value,omitempty"`
}

var clientSubcommands = []string{"handshake", "load"}

var optionRules = []optionRule{
	{clientSubcommands, "mtc-trust", "conflicts", "ca", ""},
	{clientSubcommands, "mtc-trust", "conflicts", "no-verify", ""},
	{clientSubcommands, "mtc-trust", "conflicts", "untrusted", ""},
	{clientSubcommands, "mtc-trust", "conflicts", "partial-chain", ""},
	{clientSubcommands, "mtc-landmarks", "needs", "mtc-trust", ""},
	{clientSubcommands, "mtc-landmark-lag", "needs", "mtc-landmarks", ""},
	{clientSubcommands, "trust-anchors-own", "needs", "mtc-trust", ""},
	{clientSubcommands, "trust-anchors-own", "needs", "trust-anchors", ""},
	{clientSubcommands, "mtc-cosigners-required", "needs", "mtc-trust", ""},
	{clientSubcommands, "mtc-retry", "needs", "mtc-trust", ""},
	{clientSubcommands, "trust-anchors", "conflicts", "untrusted", ""},
	{clientSubcommands, "trust-anchors-filler", "needs", "trust-anchors", ""},
	{clientSubcommands, "trust-anchor-retry", "needs", "trust-anchors", ""},
	{clientSubcommands, "trust-anchor-retry", "needs", "mtc-trust", ""},
	{clientSubcommands, "resume-ratio", "conflicts", "resume", ""},
	{clientSubcommands, "resume-seed", "needs", "resume-ratio", ""},
	{clientSubcommands, "population-seed", "needs", "population", ""},
	{[]string{"handshake"}, "count", "conflicts", "duration-ms", ""},
	{[]string{"handshake"}, "random-seed", "needs_value", "transport", "tcp"},
	{[]string{"serve"}, "random-seed", "needs_value", "transport", "tcp"},
	{[]string{"serve"}, "random-seed", "needs_value", "workers", "1"},
	{[]string{"serve"}, "chain-order", "needs", "second-pki", ""},
	{[]string{"serve"}, "mtc-retry-standalone", "needs_value", "chain", "mtc-landmark"},
}

// brokenRule is the first rule of optionRules the flag set's command line breaks, as its
// one line, or "".
func brokenRule(fs *flag.FlagSet) string {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, r := range optionRules {
		if !slices.Contains(r.Subcommands, fs.Name()) || !given[r.Option] {
			continue
		}
		switch r.Rule {
		case "needs":
			if !given[r.Other] {
				return fmt.Sprintf("--%s needs --%s", r.Option, r.Other)
			}
		case "needs_value":
			has := ""
			if f := fs.Lookup(r.Other); f != nil {
				has = f.Value.String()
			}
			if has != r.Value {
				return fmt.Sprintf("--%s needs --%s %s (it is %s)", r.Option, r.Other, r.Value, has)
			}
		case "conflicts":
			if given[r.Other] {
				return fmt.Sprintf("--%s and --%s cannot be given together", r.Option, r.Other)
			}
		}
	}
	return ""
}
