package main

import "testing"

// Every group crypto/tls offers has its key-exchange operations, and only those.
func TestEveryGroupRunsItsKeyExchangeOperations(t *testing.T) {
	for _, g := range groupsByName {
		group, ok := kexGroups[g.flag]
		if !ok {
			t.Fatalf("%s: crypto/tls offers it, primitives cannot time it", g.flag)
		}
		valid := []string{"keygen", "derive"}
		invalid := []string{"encaps", "decaps", "sign"}
		if group.kem != 0 {
			valid, invalid = []string{"keygen", "encaps", "decaps"}, []string{"derive", "verify"}
		}
		for _, op := range valid {
			operation, err := group.prepare(op)
			if err != nil {
				t.Fatalf("%s %s: %v", g.flag, op, err)
			}
			if err := operation(); err != nil {
				t.Fatalf("%s %s: %v", g.flag, op, err)
			}
		}
		for _, op := range invalid {
			if _, err := group.prepare(op); err == nil {
				t.Fatalf("%s %s: not refused", g.flag, op)
			}
		}
	}
	if len(kexGroups) != len(groupsByName) {
		t.Fatalf("%d groups timed, %d offered", len(kexGroups), len(groupsByName))
	}
}
