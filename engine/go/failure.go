// Why a connection failed, in the categories every engine records
// (docs/engine-records.md "Error categories"), from crypto/tls's and the socket's errors.

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/quic-go/quic-go"
)

type failure struct {
	category string
	detail   string
}

// alertCodes: crypto/tls's text of an alert, its TLS name and code.
var alertCodes = map[string]struct {
	name string
	code int
}{
	"close notify":                    {"close_notify", 0},
	"unexpected message":              {"unexpected_message", 10},
	"bad record MAC":                  {"bad_record_mac", 20},
	"record overflow":                 {"record_overflow", 22},
	"handshake failure":               {"handshake_failure", 40},
	"bad certificate":                 {"bad_certificate", 42},
	"unsupported certificate":         {"unsupported_certificate", 43},
	"revoked certificate":             {"certificate_revoked", 44},
	"expired certificate":             {"certificate_expired", 45},
	"unknown certificate":             {"certificate_unknown", 46},
	"illegal parameter":               {"illegal_parameter", 47},
	"unknown certificate authority":   {"unknown_ca", 48},
	"access denied":                   {"access_denied", 49},
	"error decoding message":          {"decode_error", 50},
	"error decrypting message":        {"decrypt_error", 51},
	"protocol version not supported":  {"protocol_version", 70},
	"insufficient security level":     {"insufficient_security", 71},
	"internal error":                  {"internal_error", 80},
	"inappropriate fallback":          {"inappropriate_fallback", 86},
	"user canceled":                   {"user_canceled", 90},
	"missing extension":               {"missing_extension", 109},
	"unsupported extension":           {"unsupported_extension", 110},
	"unrecognized name":               {"unrecognized_name", 112},
	"bad certificate status response": {"bad_certificate_status_response", 113},
	"unknown PSK identity":            {"unknown_psk_identity", 115},
	"certificate required":            {"certificate_required", 116},
	"no application protocol":         {"no_application_protocol", 120},
}

// connectFailure classifies a failed TCP connect. A reset answering the connect is a
// refusal too: a listener that died between our SYN and its accept (a killed server) resets
// the connection instead.
func connectFailure(err error) failure {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET):
		return failure{"connect_refused", oneLine(err.Error())}
	case errors.As(err, &ne) && ne.Timeout():
		return failure{"connect_timeout", oneLine(err.Error())}
	}
	return failure{"io_error", oneLine(err.Error())}
}

// receivedAlert is the alert an error says the peer sent: its TLS name and code.
func receivedAlert(err error) (string, int, bool) {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" {
		return "", 0, false
	}
	text := strings.TrimPrefix(op.Err.Error(), "tls: ")
	if a, ok := alertCodes[text]; ok {
		return a.name, a.code, true
	}
	return text, -1, true
}

// tlsFailure classifies a failed handshake (or what followed it). `server` says which side
// saw the error: the categories are each side's own view, as on the other engines.
func tlsFailure(err error, server bool) failure {
	detail := oneLine(err.Error())
	if name, code, ok := receivedAlert(err); ok {
		said := fmt.Sprintf("received alert %s (%d)", name, code)
		switch {
		case !server && name == "handshake_failure":
			// The client always offers Go's default signature schemes (crypto/tls has no
			// way to narrow them), so a refusal of its ClientHello means no shared group.
			return failure{"no_shared_group", said + " (no shared group)"}
		}
		return failure{"tls_alert", said}
	}
	var verr *tls.CertificateVerificationError
	var ne net.Error
	switch {
	case errors.As(err, &verr):
		if server {
			return failure{"client_cert_rejected", detail}
		}
		return failure{"verify_failed", detail}
	case errors.As(err, &ne) && ne.Timeout():
		return failure{"handshake_timeout", detail}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return failure{"peer_closed", detail}
	case strings.Contains(detail, "no ECDHE curve supported") || strings.Contains(detail, "no mutually supported key exchange") || strings.Contains(detail, "CurvePreferences includes no supported") || strings.Contains(detail, "no key exchanges supported"):
		return failure{"no_shared_group", detail}
	case strings.Contains(detail, "signature algorithm") || strings.Contains(detail, "signature scheme") || strings.Contains(detail, "no certificate compatible") || strings.Contains(detail, "doesn't support any of the certificate's"):
		return failure{"no_shared_sigalg", detail}
	case server && (strings.Contains(detail, "client didn't provide a certificate") || strings.Contains(detail, "failed to verify certificate") || strings.Contains(detail, "client certificate")):
		return failure{"client_cert_rejected", detail}
	case !server && strings.Contains(detail, "failed to verify certificate"):
		return failure{"verify_failed", detail}
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return failure{"io_error", detail}
	}
	return failure{"tls_error", detail}
}

// refusal is how a client that sent its certificate records a connection the server
// ended without its close_notify: TLS 1.3 lets the server refuse a client certificate only
// after the client's Finished, so that is the refusal (its alert in the detail when one
// arrived, as on the OpenSSL engine).
func refusal(err error) failure {
	if err == nil {
		return failure{"client_cert_rejected", "the server closed the connection without a close_notify"}
	}
	if name, code, ok := receivedAlert(err); ok {
		return failure{"client_cert_rejected", fmt.Sprintf("received alert %s (%d)", name, code)}
	}
	return failure{"client_cert_rejected", oneLine(err.Error())}
}

// oneLine is a message on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// alertName is a TLS alert's name by its code.
func alertName(code int) string {
	for _, a := range alertCodes {
		if a.code == code {
			return a.name
		}
	}
	return fmt.Sprintf("alert_%d", code)
}

// quicFailure classifies how a QUIC connection ended before its handshake completed (or a
// client's wait after it), from quic-go's error. `answered`: a datagram came back from the
// peer (a handshake that timed out without one never reached a server).
func quicFailure(err error, server, answered bool) failure {
	detail := oneLine(err.Error())
	var te *quic.TransportError
	var app *quic.ApplicationError
	var hto *quic.HandshakeTimeoutError
	var ito *quic.IdleTimeoutError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return failure{"connect_refused", detail}
	case errors.As(err, &hto), errors.As(err, &ito), errors.Is(err, context.DeadlineExceeded):
		if !answered {
			return failure{"connect_timeout", detail}
		}
		return failure{"handshake_timeout", detail}
	case errors.As(err, &te) && te.ErrorCode.IsCryptoError() && te.Remote:
		// A TLS alert in the peer's CONNECTION_CLOSE (CRYPTO_ERROR 0x0100 + alert).
		code := int(te.ErrorCode - 0x100)
		name := alertName(code)
		said := fmt.Sprintf("received alert %s (%d)", name, code)
		if te.ErrorMessage != "" {
			said += ": " + oneLine(te.ErrorMessage)
		}
		if !server && name == "handshake_failure" {
			return failure{"no_shared_group", said + " (no shared group)"}
		}
		return failure{"tls_alert", said}
	case errors.As(err, &te) && te.ErrorCode.IsCryptoError():
		// Our own TLS stack's error (quic-go keeps it inside): as over TCP.
		return tlsFailure(err, server)
	case errors.As(err, &te) && te.Remote, errors.As(err, &app) && app.Remote:
		return failure{"peer_closed", detail}
	}
	return failure{"io_error", detail}
}
