// Certificates and keys from the files `pki` writes, and a chain as a record's peer_chain
// holds it: the same strings the other engines record (OpenSSL's long names for signature
// algorithms, `pki --chain` names for key types), so chains compare field by field.

package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/mldsa"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
)

// mldsaOIDs: id-ml-dsa-44/65/87 (NIST CSOR), with their parameters.
var mldsaOIDs = map[string]func() mldsa.Parameters{
	"2.16.840.1.101.3.4.3.17": mldsa.MLDSA44,
	"2.16.840.1.101.3.4.3.18": mldsa.MLDSA65,
	"2.16.840.1.101.3.4.3.19": mldsa.MLDSA87,
}

// sigAlgNames: a certificate's signature algorithm as OpenSSL's long name.
var sigAlgNames = map[x509.SignatureAlgorithm]string{
	x509.ECDSAWithSHA256:  "ecdsa-with-SHA256",
	x509.ECDSAWithSHA384:  "ecdsa-with-SHA384",
	x509.ECDSAWithSHA512:  "ecdsa-with-SHA512",
	x509.PureEd25519:      "ED25519",
	x509.SHA256WithRSA:    "sha256WithRSAEncryption",
	x509.SHA384WithRSA:    "sha384WithRSAEncryption",
	x509.SHA512WithRSA:    "sha512WithRSAEncryption",
	x509.SHA256WithRSAPSS: "rsassaPss",
	x509.SHA384WithRSAPSS: "rsassaPss",
	x509.SHA512WithRSAPSS: "rsassaPss",
	x509.MLDSA44:          "ML-DSA-44",
	x509.MLDSA65:          "ML-DSA-65",
	x509.MLDSA87:          "ML-DSA-87",
}

// readPEM is every block of a PEM file of the given type.
func readPEM(path, kind string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", path, err)
	}
	var out [][]byte
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type == kind {
			out = append(out, block.Bytes)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no %s", path, kind)
	}
	return out, nil
}

// loadCredential is a chain file and its leaf's key as crypto/tls holds them.
func loadCredential(chainFile, keyFile string) (tls.Certificate, error) {
	ders, err := readPEM(chainFile, "CERTIFICATE")
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(ders[0])
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: Go cannot parse the leaf: %v", chainFile, err)
	}
	keys, err := readPEM(keyFile, "PRIVATE KEY")
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := parseKey(keys[0])
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: %v", keyFile, err)
	}
	return tls.Certificate{Certificate: ders, PrivateKey: key, Leaf: leaf}, nil
}

type pkcs8 struct {
	Version    int
	Algorithm  pkix.AlgorithmIdentifier
	PrivateKey []byte
}

// parseKey reads a PKCS#8 private key. crypto/x509 takes an ML-DSA key in its seed-only
// form; OpenSSL writes the seed and the expanded key together, so the seed is read here
// (FIPS 204 derives the same key from it) and the rest goes to crypto/x509.
func parseKey(der []byte) (crypto.Signer, error) {
	var info pkcs8
	if _, err := asn1.Unmarshal(der, &info); err != nil {
		return nil, fmt.Errorf("not a PKCS#8 private key: %v", err)
	}
	if params, ok := mldsaOIDs[info.Algorithm.Algorithm.String()]; ok {
		seed, err := mldsaSeed(info.PrivateKey)
		if err != nil {
			return nil, err
		}
		return mldsa.NewPrivateKey(params(), seed)
	}
	if name, ok := compositeOIDs[info.Algorithm.Algorithm.String()]; ok {
		return nil, fmt.Errorf("a composite %s key: the go stack cannot sign with it; composite ML-DSA is the rustls stack's (docs/stacks.md)", name)
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("Go cannot use this key: %v", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("a %T cannot sign", key)
	}
	return signer, nil
}

// compositeOIDs are the composite ML-DSA keys chainlab issues (chainlab-composite's
// table): Go 1.27 has no composite signatures, so such a key is named and refused.
var compositeOIDs = map[string]string{
	"1.3.6.1.5.5.7.6.40": "MLDSA44-ECDSA-P256-SHA256",
	"1.3.6.1.5.5.7.6.45": "MLDSA65-ECDSA-P256-SHA512",
	"1.3.6.1.5.5.7.6.48": "MLDSA65-Ed25519-SHA512",
	"1.3.6.1.5.5.7.6.49": "MLDSA87-ECDSA-P384-SHA512",
}

// mldsaSeed is the 32-byte seed of an ML-DSA private key (RFC 9881's CHOICE: seed [0],
// expandedKey, or both as a SEQUENCE of the two).
func mldsaSeed(inner []byte) ([]byte, error) {
	var raw asn1.RawValue
	if _, err := asn1.Unmarshal(inner, &raw); err != nil {
		return nil, fmt.Errorf("an ML-DSA private key that does not parse: %v", err)
	}
	switch {
	case raw.Class == asn1.ClassContextSpecific && raw.Tag == 0:
		return raw.Bytes, nil
	case raw.Class == asn1.ClassUniversal && raw.Tag == asn1.TagSequence:
		var both struct {
			Seed     []byte
			Expanded []byte
		}
		if _, err := asn1.Unmarshal(inner, &both); err != nil {
			return nil, fmt.Errorf("an ML-DSA private key that does not parse: %v", err)
		}
		return both.Seed, nil
	default:
		return nil, fmt.Errorf("an ML-DSA private key with no seed (expanded key only): Go derives its keys from the seed")
	}
}

// certPool is every certificate of a PEM file.
func certPool(path string) (*x509.CertPool, error) {
	ders, err := readPEM(path, "CERTIFICATE")
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	for _, der := range ders {
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, fmt.Errorf("%s: Go cannot parse a certificate: %v", path, err)
		}
		pool.AddCert(cert)
	}
	return pool, nil
}

// observedChain is a chain as a record holds it, leaf first.
func observedChain(certs []*x509.Certificate) []observedCert {
	out := make([]observedCert, 0, len(certs))
	for _, c := range certs {
		out = append(out, observedCert{
			DerBytes: len(c.Raw),
			Subject:  subjectLine(c.Subject),
			SigAlg:   sigAlgName(c.SignatureAlgorithm),
			KeyAlg:   keyAlgorithm(c.PublicKey),
		})
	}
	return out
}

func sigAlgName(a x509.SignatureAlgorithm) string {
	if name, ok := sigAlgNames[a]; ok {
		return name
	}
	return a.String()
}

// subjectLine is a name on one line, RDNs in the certificate's order, OpenSSL's short keys.
func subjectLine(name pkix.Name) string {
	short := map[string]string{"2.5.4.3": "CN", "2.5.4.10": "O", "2.5.4.11": "OU", "2.5.4.6": "C", "2.5.4.8": "ST", "2.5.4.7": "L"}
	var parts []string
	for _, atv := range name.Names {
		key, ok := short[atv.Type.String()]
		if !ok {
			key = atv.Type.String()
		}
		parts = append(parts, fmt.Sprintf("%s=%v", key, atv.Value))
	}
	return strings.Join(parts, ", ")
}

// keyAlgorithm is a public key's type in `pki --chain` names.
func keyAlgorithm(key any) string {
	switch k := key.(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return "ECDSA-P256"
		case elliptic.P384():
			return "ECDSA-P384"
		case elliptic.P521():
			return "ECDSA-P521"
		}
		return "ECDSA"
	case ed25519.PublicKey:
		return "Ed25519"
	case *rsa.PublicKey:
		return fmt.Sprintf("RSA-%d", k.N.BitLen())
	case *mldsa.PublicKey:
		return "ML-DSA-" + strings.TrimPrefix(k.Parameters().String(), "ML-DSA-")
	}
	return fmt.Sprintf("%T", key)
}
