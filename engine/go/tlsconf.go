// What the TLS 1.3 contexts offer: groups by the OpenSSL engine's names, the server's
// credentials and its choice between two chains, and the signature scheme each handshake
// signed with, observed at the signing call.

package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/mldsa"
	"crypto/rsa"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strings"
)

// groupsByName: `--groups` names (the OpenSSL engine's) and the record's name of each group
// crypto/tls has.
var groupsByName = []struct {
	flag, record string
	id           tls.CurveID
}{
	{"X25519MLKEM768", "X25519MLKEM768", tls.X25519MLKEM768},
	{"SecP256r1MLKEM768", "SecP256r1MLKEM768", tls.SecP256r1MLKEM768},
	{"SecP384r1MLKEM1024", "SecP384r1MLKEM1024", tls.SecP384r1MLKEM1024},
	{"MLKEM1024", "MLKEM1024", tls.MLKEM1024},
	{"X25519", "x25519", tls.X25519},
	{"P-256", "secp256r1", tls.CurveP256},
	{"P-384", "secp384r1", tls.CurveP384},
	{"P-521", "secp521r1", tls.CurveP521},
}

func groupFlagNames() []string {
	var out []string
	for _, g := range groupsByName {
		out = append(out, g.flag)
	}
	return out
}

// parseGroups reads `--groups` (colon-separated, the OpenSSL engine's names).
func parseGroups(text string) ([]tls.CurveID, error) {
	var out []tls.CurveID
	for _, name := range strings.Split(text, ":") {
		found := false
		for _, g := range groupsByName {
			if strings.EqualFold(g.flag, name) {
				out = append(out, g.id)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("invalid value %q for '--groups': crypto/tls has no group %q; allowed: %s", text, name, strings.Join(groupFlagNames(), ", "))
		}
	}
	return out, nil
}

func groupName(id tls.CurveID) *string {
	for _, g := range groupsByName {
		if g.id == id {
			return strp(g.record)
		}
	}
	if id == 0 {
		return nil
	}
	return strp(id.String())
}

// schemeNames: TLS 1.3 signature schemes by their TLS names, as records hold them.
var schemeNames = map[tls.SignatureScheme]string{
	tls.MLDSA44:                "mldsa44",
	tls.MLDSA65:                "mldsa65",
	tls.MLDSA87:                "mldsa87",
	tls.ECDSAWithP256AndSHA256: "ecdsa_secp256r1_sha256",
	tls.ECDSAWithP384AndSHA384: "ecdsa_secp384r1_sha384",
	tls.ECDSAWithP521AndSHA512: "ecdsa_secp521r1_sha512",
	tls.Ed25519:                "ed25519",
	tls.PSSWithSHA256:          "rsa_pss_rsae_sha256",
	tls.PSSWithSHA384:          "rsa_pss_rsae_sha384",
	tls.PSSWithSHA512:          "rsa_pss_rsae_sha512",
}

// keySchemes is the TLS 1.3 schemes a public key signs with.
func keySchemes(pub crypto.PublicKey) []tls.SignatureScheme {
	switch k := pub.(type) {
	case *mldsa.PublicKey:
		switch k.Parameters() {
		case mldsa.MLDSA44():
			return []tls.SignatureScheme{tls.MLDSA44}
		case mldsa.MLDSA65():
			return []tls.SignatureScheme{tls.MLDSA65}
		case mldsa.MLDSA87():
			return []tls.SignatureScheme{tls.MLDSA87}
		}
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return []tls.SignatureScheme{tls.ECDSAWithP256AndSHA256}
		case elliptic.P384():
			return []tls.SignatureScheme{tls.ECDSAWithP384AndSHA384}
		case elliptic.P521():
			return []tls.SignatureScheme{tls.ECDSAWithP521AndSHA512}
		}
	case ed25519.PublicKey:
		return []tls.SignatureScheme{tls.Ed25519}
	case *rsa.PublicKey:
		return []tls.SignatureScheme{tls.PSSWithSHA256, tls.PSSWithSHA384, tls.PSSWithSHA512}
	}
	return nil
}

// onlyScheme is the one TLS 1.3 scheme a key can sign a CertificateVerify with (RFC 8446
// binds ECDSA's curve to its hash; ML-DSA and Ed25519 have one each), or nil for RSA, whose
// hash the signer chooses.
func onlyScheme(pub crypto.PublicKey) *string {
	if s := keySchemes(pub); len(s) == 1 {
		return strp(schemeNames[s[0]])
	}
	return nil
}

// chooseCredential picks the chain a dual-chain server sends (chainlab_record::dual::choose
// in the Rust engines): by the client's order, the chain whose leaf signs the first of the
// client's offered schemes it can (libssl's own choice among its certificates); by the
// server's ("server"), the first post-quantum chain whose leaf signs a scheme the client
// offers, then the classical ones, each in the server's order (--pki's first).
func chooseCredential(creds []tls.Certificate, hello *tls.ClientHelloInfo, order string) (int, error) {
	signs := func(i int, offered tls.SignatureScheme) bool {
		return slices.Contains(keySchemes(creds[i].Leaf.PublicKey), offered)
	}
	if order == "server" {
		var pq, classical []int
		for i, c := range creds {
			if slices.ContainsFunc(keySchemes(c.Leaf.PublicKey), func(s tls.SignatureScheme) bool { return !isClassical(s) }) {
				pq = append(pq, i)
			} else {
				classical = append(classical, i)
			}
		}
		for _, i := range append(pq, classical...) {
			if slices.ContainsFunc(hello.SignatureSchemes, func(s tls.SignatureScheme) bool { return signs(i, s) }) {
				return i, nil
			}
		}
	} else {
		for _, offered := range hello.SignatureSchemes {
			for i := range creds {
				if signs(i, offered) {
					return i, nil
				}
			}
		}
	}
	return -1, fmt.Errorf("tls: the client offered no signature scheme any of the server's certificates signs with")
}

// isClassical says whether a scheme is ECDSA, RSA (PKCS#1 or PSS) or EdDSA (RFC 8446,
// 4.2.3); every other scheme a chainlab leaf signs is post-quantum.
func isClassical(s tls.SignatureScheme) bool {
	switch s {
	case 0x0201, 0x0203, 0x0401, 0x0403, 0x0501, 0x0503, 0x0601, 0x0603:
		return true
	}
	return s >= 0x0804 && s <= 0x080b
}

// chainChoice is what the server chose for one connection: the chain (-1: none) and the
// scheme its CertificateVerify is signed with.
type chainChoice struct {
	chosen int
	scheme string
}

// certificateFor is the server's GetCertificate: the chain chosen for this ClientHello
// (`chooseCredential`), noted in the connection's `chainChoice` (found by `choiceOf` from
// the ClientHello's connection) with the scheme its CertificateVerify is signed with (for
// RSA, read from the signing call: the hash is the signer's choice).
func certificateFor(creds []tls.Certificate, order string, choiceOf func(net.Conn) *chainChoice) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		i, err := chooseCredential(creds, hello, order)
		if err != nil {
			return nil, err
		}
		chosen := &creds[i]
		note := choiceOf(hello.Conn)
		if note == nil {
			return chosen, nil
		}
		note.chosen = i
		if scheme := onlyScheme(chosen.Leaf.PublicKey); scheme != nil {
			note.scheme = *scheme
			return chosen, nil
		}
		copied := *chosen
		copied.PrivateKey = schemeRecorder{Signer: chosen.PrivateKey.(crypto.Signer), scheme: &note.scheme}
		return &copied, nil
	}
}

// rsaPSS names an RSA-PSS signature by its hash.
func rsaPSS(opts crypto.SignerOpts) string {
	switch opts.HashFunc() {
	case crypto.SHA384:
		return "rsa_pss_rsae_sha384"
	case crypto.SHA512:
		return "rsa_pss_rsae_sha512"
	}
	return "rsa_pss_rsae_sha256"
}

// schemeRecorder wraps a key so that the RSA-PSS hash of its signatures is known.
type schemeRecorder struct {
	crypto.Signer
	scheme *string
}

func (r schemeRecorder) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	*r.scheme = rsaPSS(opts)
	return r.Signer.Sign(rand, digest, opts)
}

// pkiFile is a file of a hierarchy directory.
func pkiFile(dir, name string) string { return filepath.Join(dir, name) }
