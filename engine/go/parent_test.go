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
