// `info`: this engine's stack, versions and capabilities as JSON, the table
// chainlab/campaign/stacks.py keeps a copy of (a test compares the two).

package main

import (
	"encoding/json"
	"os"
	"runtime"
	"runtime/debug"
)

// signatureAlgorithms: what crypto/tls and crypto/x509 sign and verify (`pki --chain`
// names) and the TLS 1.3 scheme of each; SLH-DSA, liboqs' families and MTCs are not Go's.
var signatureAlgorithms = []struct{ algorithm, scheme string }{
	{"ML-DSA-44", "mldsa44"},
	{"ML-DSA-65", "mldsa65"},
	{"ML-DSA-87", "mldsa87"},
	{"ECDSA-P256", "ecdsa_secp256r1_sha256"},
	{"ECDSA-P384", "ecdsa_secp384r1_sha384"},
	{"Ed25519", "ed25519"},
	{"RSA-2048", "rsa_pss_rsae_sha256"},
	{"RSA-3072", "rsa_pss_rsae_sha256"},
}

// engineVersion is this engine's version, as the Rust engines' workspace version.
const engineVersion = "0.1.0"

// primitivesRevision is the revision of how the engines time a primitive, as the Rust
// engines' chainlab_record::primitives::METHOD_REVISION (tests/test_engine_options.py checks
// every stack prints the same): bump both when what a timed operation includes changes.
const primitivesRevision = 1

func runInfo() error {
	var sigs []map[string]string
	for _, s := range signatureAlgorithms {
		sigs = append(sigs, map[string]string{"algorithm": s.algorithm, "scheme": s.scheme, "implementation": "go"})
	}
	info := map[string]any{
		"stack":                          stackName,
		"engine_version":                 engineVersion,
		"record_schema":                  recordSchema,
		"option_rules":                   optionRules,
		"primitives_revision":            primitivesRevision,
		"build":                          map[string]string{"go": runtime.Version(), "quic-go": quicGoVersion()},
		"signature_algorithms":           sigs,
		"signature_implementations":      []string{"stack"},
		"groups":                         groupFlagNames(),
		"cert_compressions":              []string{},
		"max_handshake_message":          nil,
		"root_only_signature_algorithms": []string{},
		"features":                       features,
		"hardware_counters": map[string]any{
			"available": false,
			"reason":    "the go engine reads no hardware counter (records carry no instructions)",
		},
	}
	out, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(append(out, '\n'))
	return err
}

// quicGoVersion is the quic-go module this binary was built with (go.mod pins it).
func quicGoVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "github.com/quic-go/quic-go" {
				return d.Version
			}
		}
	}
	return "unknown"
}
