package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// The parent named must be this process's parent; a value that is not a pid is named.
func TestTheEngineEndsWhereTheChainlabThatStartedItIsGone(t *testing.T) {
	t.Setenv(parentPIDVar, strconv.Itoa(os.Getppid()))
	if err := dieWithParent(); err != nil {
		t.Fatalf("own parent refused: %v", err)
	}
	for value, want := range map[string]string{"1": "is gone (parent now", "abc": "not a process id; allowed:"} {
		t.Setenv(parentPIDVar, value)
		err := dieWithParent()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: got %v, want %q", value, err, want)
		}
	}
}

// A namespace named to the Go engine is refused, never silently ignored.
func TestANamespaceNamedToTheGoEngineIsRefused(t *testing.T) {
	if err := refuseNamespace(); err != nil {
		t.Fatalf("unset: %v", err)
	}
	t.Setenv(netnsVar, "/run/netns/x")
	if err := refuseNamespace(); err == nil || !strings.Contains(err.Error(), `"/run/netns/x": the Go engine cannot`) {
		t.Fatalf("got %v", err)
	}
}
