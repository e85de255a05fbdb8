module chainlab/engine/go

// Go 1.27: crypto/mldsa and ML-DSA in crypto/x509 and crypto/tls. A machine's own go fetches
// it as a module when GOTOOLCHAIN=go1.27.3 is exported (the Makefile, .ci/run and the README
// do): a machine starts on its own Go and ignores a toolchain line here.
go 1.27

require github.com/quic-go/quic-go v0.65.0

require (
	golang.org/x/crypto v0.54.0 // indirect
	golang.org/x/net v0.56.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
