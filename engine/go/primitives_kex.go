// `primitives --subject <group> --op keygen|encaps|decaps|derive`: one key-exchange operation
// of a TLS 1.3 handshake through Go's own crypto, as crypto/tls composes it from crypto/ecdh
// and crypto/mlkem (a hybrid: its ML-KEM half and its ECDH half, in crypto/tls's order), one
// JSON line each, as `chainlab-engine primitives` times OpenSSL's:
//   - keygen: the client's key share (key generation and the share's bytes);
//   - encaps (a KEM or a hybrid): the server's part: parse the client's share, encapsulate to
//     it, and for a hybrid a key of its own and the ECDH with the client's;
//   - decaps: the client's part: decapsulate the ciphertext (and the hybrid's ECDH);
//   - derive (an ECDH group): the shared secret with the peer's public key.

package main

import (
	"crypto/ecdh"
	"crypto/mlkem"
	"crypto/rand"
	"fmt"
)

// kexGroup is a group's ECDH half (nil: none) and its ML-KEM size (0: none).
type kexGroup struct {
	curve ecdh.Curve
	kem   int
}

// kexGroups: every group of groupsByName (tlsconf.go), by its `--groups` name.
var kexGroups = map[string]kexGroup{
	"X25519MLKEM768":     {ecdh.X25519(), 768},
	"SecP256r1MLKEM768":  {ecdh.P256(), 768},
	"SecP384r1MLKEM1024": {ecdh.P384(), 1024},
	"MLKEM1024":          {nil, 1024},
	"X25519":             {ecdh.X25519(), 0},
	"P-256":              {ecdh.P256(), 0},
	"P-384":              {ecdh.P384(), 0},
	"P-521":              {ecdh.P521(), 0},
}

// kemKey is a decapsulation key of either size, and its encapsulation key's bytes.
type kemKey struct {
	decaps func(ciphertext []byte) ([]byte, error)
	public []byte
}

func (g kexGroup) kemKeygen() (kemKey, error) {
	if g.kem == 1024 {
		k, err := mlkem.GenerateKey1024()
		if err != nil {
			return kemKey{}, err
		}
		return kemKey{k.Decapsulate, k.EncapsulationKey().Bytes()}, nil
	}
	k, err := mlkem.GenerateKey768()
	if err != nil {
		return kemKey{}, err
	}
	return kemKey{k.Decapsulate, k.EncapsulationKey().Bytes()}, nil
}

// encapsulate parses the client's encapsulation key and encapsulates to it: the ciphertext.
func (g kexGroup) encapsulate(public []byte) ([]byte, error) {
	if g.kem == 1024 {
		ek, err := mlkem.NewEncapsulationKey1024(public)
		if err != nil {
			return nil, err
		}
		_, ct := ek.Encapsulate()
		return ct, nil
	}
	ek, err := mlkem.NewEncapsulationKey768(public)
	if err != nil {
		return nil, err
	}
	_, ct := ek.Encapsulate()
	return ct, nil
}

// ecdhShare is a fresh ECDH key and its public bytes.
func (g kexGroup) ecdhShare() (*ecdh.PrivateKey, []byte, error) {
	k, err := g.curve.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	return k, k.PublicKey().Bytes(), nil
}

func (g kexGroup) agree(own *ecdh.PrivateKey, peer []byte) error {
	pub, err := g.curve.NewPublicKey(peer)
	if err != nil {
		return err
	}
	_, err = own.ECDH(pub)
	return err
}

// prepare makes what one operation needs (untimed) and returns the operation alone.
func (g kexGroup) prepare(op string) (func() error, error) {
	switch {
	case op == "keygen":
		return func() error {
			if g.kem != 0 {
				if _, err := g.kemKeygen(); err != nil {
					return err
				}
			}
			if g.curve != nil {
				if _, _, err := g.ecdhShare(); err != nil {
					return err
				}
			}
			return nil
		}, nil
	case op == "derive" && g.kem == 0:
		own, _, err := g.ecdhShare()
		if err != nil {
			return nil, err
		}
		_, peer, err := g.ecdhShare()
		if err != nil {
			return nil, err
		}
		return func() error { return g.agree(own, peer) }, nil
	case op == "encaps" && g.kem != 0:
		client, err := g.kemKeygen()
		if err != nil {
			return nil, err
		}
		var clientECDH []byte
		if g.curve != nil {
			if _, clientECDH, err = g.ecdhShare(); err != nil {
				return nil, err
			}
		}
		return func() error {
			if _, err := g.encapsulate(client.public); err != nil {
				return err
			}
			if g.curve != nil {
				own, _, err := g.ecdhShare()
				if err != nil {
					return err
				}
				return g.agree(own, clientECDH)
			}
			return nil
		}, nil
	case op == "decaps" && g.kem != 0:
		client, err := g.kemKeygen()
		if err != nil {
			return nil, err
		}
		ct, err := g.encapsulate(client.public)
		if err != nil {
			return nil, err
		}
		var own *ecdh.PrivateKey
		var server []byte
		if g.curve != nil {
			if own, _, err = g.ecdhShare(); err != nil {
				return nil, err
			}
			if _, server, err = g.ecdhShare(); err != nil {
				return nil, err
			}
		}
		return func() error {
			if _, err := client.decaps(ct); err != nil {
				return err
			}
			if own != nil {
				return g.agree(own, server)
			}
			return nil
		}, nil
	}
	if g.kem != 0 {
		return nil, fmt.Errorf("invalid value %q for '--op' with a KEM group; allowed: keygen, encaps, decaps", op)
	}
	return nil, fmt.Errorf("invalid value %q for '--op' with a Diffie-Hellman group; allowed: keygen, derive", op)
}
