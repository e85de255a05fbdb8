package main

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/hex"
	"testing"
)

// RFC 9001 Appendix A.1: the client's Initial keys for Destination Connection ID
// 0x8394c8f03e515708.
func TestClientInitialKeysAreRFC9001s(t *testing.T) {
	dcid, _ := hex.DecodeString("8394c8f03e515708")
	key, iv, hp := clientInitialKeys(dcid)
	for _, c := range []struct{ name, got, want string }{
		{"key", hex.EncodeToString(key), "1f369613dd76d5467730efcbe3b1a22d"},
		{"iv", hex.EncodeToString(iv), "fa044b2f42a3fd3b46fb255c"},
		{"hp", hex.EncodeToString(hp), "9f50449e04a0e810283a1e9933adedd2"},
	} {
		if c.got != c.want {
			t.Errorf("%s %s, want %s", c.name, c.got, c.want)
		}
	}
}

// A client Initial protected as RFC 9001 Section 5 says (AEAD, then header protection),
// with PADDING before a CRYPTO frame holding a ClientHello: the id is the random's first 8
// bytes; a datagram that is not a v1 client Initial has none.
func TestConnIDIsReadFromTheProtectedInitial(t *testing.T) {
	dcid, _ := hex.DecodeString("8394c8f03e515708")
	random, _ := hex.DecodeString("0123456789abcdef" + "00112233445566778899aabbccddeeff0011223344556677")
	hello := append([]byte{1, 0, 0, 40, 3, 3}, random...)
	frames := append([]byte{0, 0, 0x06, 0x00, byte(len(hello))}, hello...)
	frames = append(frames, make([]byte, 1100)...) // PADDING
	pn := []byte{0x00, 0x02}                       // 2-byte packet number 2
	length := len(pn) + len(frames) + 16
	header := []byte{0xc1, 0, 0, 0, 1, byte(len(dcid))}
	header = append(header, dcid...)
	header = append(header, 0, 0)                                             // SCID length 0, token length 0
	header = append(header, 0x40|byte(length>>8), byte(length), pn[0], pn[1]) // 2-byte varint length
	key, iv, hp := clientInitialKeys(dcid)
	block, _ := aes.NewCipher(key)
	aead, _ := cipher.NewGCM(block)
	nonce := append([]byte(nil), iv...)
	nonce[len(nonce)-1] ^= 2
	packet := aead.Seal(append([]byte(nil), header...), nonce, frames, header)
	pnOffset := len(header) - len(pn)
	hpBlock, _ := aes.NewCipher(hp)
	var mask [16]byte
	hpBlock.Encrypt(mask[:], packet[pnOffset+4:pnOffset+20])
	packet[0] ^= mask[0] & 0x0f
	packet[pnOffset] ^= mask[1]
	packet[pnOffset+1] ^= mask[2]

	id := initialHelloID(packet)
	if id == nil || *id != "0123456789abcdef" {
		t.Fatalf("conn_id %v, want 0123456789abcdef", id)
	}
	tampered := append([]byte(nil), packet...)
	tampered[len(tampered)-1] ^= 1
	for name, p := range map[string][]byte{"tampered": tampered, "short header": {0x40, 1, 2, 3}, "empty": nil} {
		if got := initialHelloID(p); got != nil {
			t.Errorf("%s: conn_id %v, want none", name, *got)
		}
	}
}
