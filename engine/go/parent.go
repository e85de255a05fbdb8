package main

// An engine started by chainlab dies with it, as the Rust engines do
// (engine/crates/chainlab-record/src/parent.rs): with CHAINLAB_PARENT_PID set, the
// parent-death signal is asked for first, then the parent checked to be that process still.
// Set in init, which runs on the main OS thread (the runtime locks the main goroutine to it
// during initialisation): the signal is that thread's, and it lives as long as the process.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

const parentPIDVar = "CHAINLAB_PARENT_PID"

// The network namespace a Rust engine enters itself (engine/crates/chainlab-record/src/
// netns.rs). This engine cannot: its runtime has started threads before init runs, and a
// namespace entered here would be one thread's. chainlab wraps it in `ip netns exec`
// instead; the variable set is refused rather than ignored.
const netnsVar = "CHAINLAB_NETNS"

func init() {
	err := dieWithParent()
	if err == nil {
		err = refuseNamespace()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "chainlab-go: error: %v\n", err)
		os.Exit(2)
	}
}

func dieWithParent() error {
	value, ok := os.LookupEnv(parentPIDVar)
	if !ok {
		return nil
	}
	parent, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("%s=%q: not a process id; allowed: the pid of the chainlab process that starts the engine, or unset", parentPIDVar, value)
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0); errno != 0 {
		return fmt.Errorf("cannot set the parent-death signal: %v", errno)
	}
	if now := os.Getppid(); now != parent {
		return fmt.Errorf("the chainlab process that started this engine (pid %d) is gone (parent now %d)", parent, now)
	}
	return nil
}

func refuseNamespace() error {
	if value, ok := os.LookupEnv(netnsVar); ok {
		return fmt.Errorf("%s=%q: the Go engine cannot enter a network namespace itself (its runtime's threads start first); allowed: unset, with the engine run under `ip netns exec`", netnsVar, value)
	}
	return nil
}
