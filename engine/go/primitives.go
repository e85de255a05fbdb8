// `primitives`: one signature operation of a handshake (sign or verify the CertificateVerify
// content), or one key-exchange operation (primitives_kex.go), timed in-process through Go's
// own crypto, one JSON line each, as the other engines' `primitives` write them
// (chainlab_record::primitives), so Go's ML-DSA and ML-KEM stand beside OpenSSL's, aws-lc's,
// BoringSSL's and liboqs'.

package main

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/mldsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// The CertificateVerify content (RFC 8446, 4.4.3): 64 spaces, the server's context string,
// a zero byte, a 32-byte transcript hash: 130 bytes.
func cvMessage() []byte {
	m := bytes.Repeat([]byte{0x20}, 64)
	m = append(m, "TLS 1.3, server CertificateVerify"...)
	m = append(m, 0)
	return append(m, bytes.Repeat([]byte{0xab}, 32)...)
}

type primitiveArgs struct {
	subject, op, impl, cpusText string
	count, warmup               uint64
}

func parsePrimitives(argv []string) (*primitiveArgs, error) {
	a := &primitiveArgs{}
	fs := newFlagSet("primitives")
	fs.StringVar(&a.subject, "subject", "", "signature algorithm (`pki --chain` name) or key-exchange group (`--groups` name)")
	fs.StringVar(&a.op, "op", "", "sign or verify; keygen, encaps, decaps or derive for a group")
	fs.StringVar(&a.impl, "signature-impl", "stack", "stack (Go's own)")
	fs.Uint64Var(&a.count, "count", 10, "timed operations")
	fs.Uint64Var(&a.warmup, "warmup", 1, "operations before the timed ones")
	fs.StringVar(&a.cpusText, "cpus", "", "run on these CPUs only")
	if err := parse(fs, argv, nil); err != nil {
		return nil, err
	}
	var names []string
	for _, s := range signatureAlgorithms {
		names = append(names, s.algorithm)
	}
	_, group := kexGroups[a.subject]
	switch {
	case a.subject == "":
		return nil, errors.New("the following required arguments were not provided: --subject <SUBJECT> --op <OP>")
	case group && a.impl == "stack" && a.count > 0:
		if _, err := kexGroups[a.subject].prepare(a.op); err != nil {
			return nil, err
		}
		return a, nil
	case a.op != "sign" && a.op != "verify":
		return nil, fmt.Errorf("invalid value %q for '--op'; allowed: sign, verify", a.op)
	case a.impl == "liboqs":
		return nil, missing("--signature-impl liboqs", "signature_impl_liboqs")
	case a.impl != "stack":
		return nil, fmt.Errorf("invalid value %q for '--signature-impl'; allowed: stack, liboqs", a.impl)
	case a.count == 0:
		return nil, errors.New("--count 0: must be at least 1")
	}
	found := false
	for _, n := range names {
		found = found || n == a.subject
	}
	if !found {
		return nil, fmt.Errorf("--subject %q: Go has no such signature algorithm or group; allowed: %s, %s", a.subject, strings.Join(names, ", "), strings.Join(groupFlagNames(), ", "))
	}
	return a, nil
}

// signer is a fresh key of a `pki --chain` algorithm with the TLS 1.3 signing options of
// its scheme, and how to verify its signatures.
func signer(algorithm string) (crypto.Signer, crypto.SignerOpts, func(msg, sig []byte) bool, error) {
	digest := func(h crypto.Hash, msg []byte) []byte {
		if h == crypto.SHA384 {
			d := sha512.Sum384(msg)
			return d[:]
		}
		d := sha256.Sum256(msg)
		return d[:]
	}
	switch algorithm {
	case "ML-DSA-44", "ML-DSA-65", "ML-DSA-87":
		params := map[string]func() mldsa.Parameters{"ML-DSA-44": mldsa.MLDSA44, "ML-DSA-65": mldsa.MLDSA65, "ML-DSA-87": mldsa.MLDSA87}[algorithm]()
		key, err := mldsa.GenerateKey(params)
		if err != nil {
			return nil, nil, nil, err
		}
		return key, &mldsa.Options{}, func(msg, sig []byte) bool { return mldsa.Verify(key.PublicKey(), msg, sig, nil) == nil }, nil
	case "ECDSA-P256", "ECDSA-P384":
		curve, h := elliptic.P256(), crypto.SHA256
		if algorithm == "ECDSA-P384" {
			curve, h = elliptic.P384(), crypto.SHA384
		}
		key, err := ecdsa.GenerateKey(curve, rand.Reader)
		if err != nil {
			return nil, nil, nil, err
		}
		return hashing{key, h, digest}, h, func(msg, sig []byte) bool { return ecdsa.VerifyASN1(&key.PublicKey, digest(h, msg), sig) }, nil
	case "Ed25519":
		pub, key, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, nil, nil, err
		}
		return key, crypto.Hash(0), func(msg, sig []byte) bool { return ed25519.Verify(pub, msg, sig) }, nil
	case "RSA-2048", "RSA-3072":
		bits := map[string]int{"RSA-2048": 2048, "RSA-3072": 3072}[algorithm]
		key, err := rsa.GenerateKey(rand.Reader, bits)
		if err != nil {
			return nil, nil, nil, err
		}
		opts := &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: crypto.SHA256}
		return hashing{key, crypto.SHA256, digest}, opts, func(msg, sig []byte) bool {
			return rsa.VerifyPSS(&key.PublicKey, crypto.SHA256, digest(crypto.SHA256, msg), sig, opts) == nil
		}, nil
	}
	return nil, nil, nil, fmt.Errorf("no such algorithm %q", algorithm)
}

// hashing signs a message by hashing it first (ECDSA and RSA sign digests in Go, as TLS
// does: the hash is part of the timed operation, as in EVP_DigestSign).
type hashing struct {
	crypto.Signer
	h      crypto.Hash
	digest func(crypto.Hash, []byte) []byte
}

func (k hashing) Sign(r io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	return k.Signer.Sign(r, k.digest(k.h, msg), opts)
}

func runPrimitives(a *primitiveArgs) error {
	if a.cpusText != "" {
		cpus, err := parseCPUs(a.cpusText)
		if err != nil {
			return err
		}
		if err := pinProcess(cpus); err != nil {
			return err
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	enc := json.NewEncoder(os.Stdout)
	if g, ok := kexGroups[a.subject]; ok {
		for seq := uint64(0); seq < a.warmup+a.count; seq++ {
			operation, err := g.prepare(a.op)
			if err != nil {
				return err
			}
			if err := timeOne(enc, a, nil, seq, operation); err != nil {
				return err
			}
		}
		return nil
	}
	key, opts, verify, err := signer(a.subject)
	if err != nil {
		return err
	}
	message := cvMessage()
	signature, err := key.Sign(rand.Reader, message, opts)
	if err != nil {
		return err
	}
	if !verify(message, signature) {
		return fmt.Errorf("%s: Go did not verify its own signature", a.subject)
	}
	for seq := uint64(0); seq < a.warmup+a.count; seq++ {
		err := timeOne(enc, a, len(message), seq, func() error {
			if a.op == "sign" {
				_, err := key.Sign(rand.Reader, message, opts)
				return err
			}
			if !verify(message, signature) {
				return fmt.Errorf("%s: a signature did not verify", a.subject)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// timeOne runs operation number seq once, timed (wall and the thread's CPU), and writes its
// record (messageBytes nil: a key exchange).
func timeOne(enc *json.Encoder, a *primitiveArgs, messageBytes any, seq uint64, operation func() error) error {
	cpu := threadCPU()
	start := time.Now()
	if err := operation(); err != nil {
		return err
	}
	wall := uint64(time.Since(start).Nanoseconds())
	return enc.Encode(map[string]any{
		"event": "primitive", "subject": a.subject, "op": a.op,
		"message_bytes": messageBytes, "warmup": seq < a.warmup, "seq": seq,
		"wall_ns": wall, "cpu_ns": sat(threadCPU(), cpu),
	})
}
