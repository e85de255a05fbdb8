// chainlab-go: chainlab's measuring engine over Go's crypto/tls (Go 1.27: ML-DSA in
// crypto/x509 and crypto/tls). The first engine not built on chainlab-record: it writes the
// records of engine/crates/chainlab-record/records.schema.json with the same flags as the
// Rust engines (docs/engine-records.md, docs/stacks.md).

package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
)

const usage = `chainlab's measuring engine over Go's crypto/tls

Usage: chainlab-go <COMMAND> [OPTIONS]

Commands:
  serve       Run the TLS 1.3 server; one JSON record per accepted connection.
  handshake   Run the measuring client; one JSON record per handshake.
  load        Open-loop load: one JSON record per scheduled attempt, then the generator's.
  primitives  Time one ML-DSA signature operation (sign, verify) in-process: one JSON line each.
  info        Print this engine's stack, versions and capabilities as JSON.

Flags are the other engines' (chainlab-engine <COMMAND> --help); what crypto/tls cannot do is
refused in one line naming the missing capability.
`

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(argv []string) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "chainlab-go: error: no subcommand given; allowed: serve, handshake, load, primitives, info (see --help)")
		return 2
	}
	var err error
	switch argv[0] {
	case "-h", "--help", "help":
		fmt.Print(usage)
		return 0
	case "serve":
		var a *serveArgs
		if a, err = parseServe(argv[1:]); err == nil {
			err = serve(a)
		}
	case "handshake":
		var a *handshakeArgs
		if a, err = parseHandshake(argv[1:]); err == nil {
			err = runHandshake(a)
		}
	case "load":
		var a *loadArgs
		if a, err = parseLoad(argv[1:]); err == nil {
			err = runLoad(a)
		}
	case "primitives":
		var a *primitiveArgs
		if a, err = parsePrimitives(argv[1:]); err == nil {
			err = runPrimitives(a)
		}
	case "info":
		err = runInfo()
	default:
		err = fmt.Errorf("unrecognized subcommand '%s'; allowed: serve, handshake, load, primitives, info", argv[0])
	}
	if errors.Is(err, errHelp) {
		fmt.Print(usage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "chainlab-go: error: %s (see --help)\n", oneLine(err.Error()))
		return 2
	}
	return 0
}

func itoa(n int) string { return strconv.Itoa(n) }

func readDirNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out, nil
}
