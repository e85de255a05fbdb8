// The connection's id over QUIC: as over TCP, the first 8 bytes of the ClientHello's random
// (`conn_id`, the same on both sides and on every engine). Over QUIC the ClientHello travels
// in the client's first Initial packet, protected with keys anyone can derive from the
// packet's Destination Connection ID (RFC 9001 Section 5.2), so both sides read it from the
// first datagram the client sends, as a packet capture would: header protection removed,
// the payload opened with AES-128-GCM, the CRYPTO frame at offset 0 read.

package main

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
)

// initialSaltV1 is QUIC v1's Initial salt (RFC 9001 Section 5.2).
var initialSaltV1 = []byte{
	0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
	0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a,
}

// initialHelloID is the conn_id of a datagram that starts with a client's QUIC v1 Initial
// packet carrying the start of a ClientHello, or nil for any other datagram.
func initialHelloID(datagram []byte) *string {
	hello, err := openInitialCrypto(datagram)
	// The random follows the handshake header (4 bytes) and legacy_version (2).
	if err != nil || len(hello) < 6+8 || hello[0] != 1 {
		return nil
	}
	id := hex.EncodeToString(hello[6:14])
	return &id
}

// openInitialCrypto is the data of the CRYPTO frame at offset 0 in a client Initial.
func openInitialCrypto(p []byte) ([]byte, error) {
	short := errors.New("not a client Initial")
	// Long header, fixed bit, type Initial (0b00), version 1.
	if len(p) < 7 || p[0]&0xf0 != 0xc0 || binary.BigEndian.Uint32(p[1:5]) != 1 {
		return nil, short
	}
	pos := 5
	dcidLen := int(p[pos])
	pos++
	if dcidLen > 20 || len(p) < pos+dcidLen+1 {
		return nil, short
	}
	dcid := p[pos : pos+dcidLen]
	pos += dcidLen
	pos += 1 + int(p[pos]) // source connection id
	tokenLen, n := varint(p, pos)
	if n == 0 {
		return nil, short
	}
	pos += n + int(tokenLen)
	length, n := varint(p, pos)
	if n == 0 {
		return nil, short
	}
	pnOffset := pos + n
	if length < 20 || len(p) < pnOffset+int(length) {
		return nil, short
	}
	key, iv, hp := clientInitialKeys(dcid)
	block, err := aes.NewCipher(hp)
	if err != nil {
		return nil, err
	}
	var mask [16]byte
	block.Encrypt(mask[:], p[pnOffset+4:pnOffset+20])
	header := append([]byte(nil), p[:pnOffset+4]...)
	header[0] ^= mask[0] & 0x0f
	pnLen := int(header[0]&0x03) + 1
	header = header[:pnOffset+pnLen]
	var pn uint64
	for i := 0; i < pnLen; i++ {
		header[pnOffset+i] ^= mask[1+i]
		pn = pn<<8 | uint64(header[pnOffset+i])
	}
	nonce := append([]byte(nil), iv...)
	for i := 0; i < 8; i++ {
		nonce[len(nonce)-1-i] ^= byte(pn >> (8 * i))
	}
	aesKey, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(aesKey)
	if err != nil {
		return nil, err
	}
	payload, err := aead.Open(nil, nonce, p[pnOffset+pnLen:pnOffset+int(length)], header)
	if err != nil {
		return nil, err
	}
	return cryptoAtZero(payload)
}

// cryptoAtZero walks an Initial's frames (PADDING, PING, ACK, CRYPTO) to the CRYPTO frame
// at offset 0.
func cryptoAtZero(f []byte) ([]byte, error) {
	for pos := 0; pos < len(f); {
		switch f[pos] {
		case 0x00, 0x01: // PADDING, PING
			pos++
		case 0x06: // CRYPTO: offset, length, data
			offset, n := varint(f, pos+1)
			if n == 0 {
				return nil, errors.New("truncated CRYPTO frame")
			}
			length, m := varint(f, pos+1+n)
			start := pos + 1 + n + m
			if m == 0 || len(f) < start+int(length) {
				return nil, errors.New("truncated CRYPTO frame")
			}
			if offset == 0 {
				return f[start : start+int(length)], nil
			}
			pos = start + int(length)
		default:
			return nil, errors.New("no CRYPTO frame at offset 0 before another frame type")
		}
	}
	return nil, errors.New("no CRYPTO frame at offset 0")
}

// clientInitialKeys is the client's Initial key, IV and header-protection key.
func clientInitialKeys(dcid []byte) (key, iv, hp []byte) {
	initial, _ := hkdf.Extract(sha256.New, dcid, initialSaltV1)
	client := expandLabel(initial, "client in", 32)
	return expandLabel(client, "quic key", 16), expandLabel(client, "quic iv", 12), expandLabel(client, "quic hp", 16)
}

// expandLabel is TLS 1.3's HKDF-Expand-Label with an empty context (RFC 8446 Section 7.1).
func expandLabel(secret []byte, label string, length int) []byte {
	full := "tls13 " + label
	info := []byte{byte(length >> 8), byte(length), byte(len(full))}
	info = append(append(info, full...), 0)
	out, _ := hkdf.Expand(sha256.New, secret, string(info), length)
	return out
}

// varint reads a QUIC variable-length integer at pos: (value, bytes read; 0 when truncated).
func varint(b []byte, pos int) (uint64, int) {
	if pos >= len(b) {
		return 0, 0
	}
	n := 1 << (b[pos] >> 6)
	if pos+n > len(b) {
		return 0, 0
	}
	v := uint64(b[pos] & 0x3f)
	for i := 1; i < n; i++ {
		v = v<<8 | uint64(b[pos+i])
	}
	return v, n
}
