// CPU clocks and placement. Go runs goroutines over OS threads it chooses, and the runtime
// works for a connection on other threads than the one running its goroutine (the network
// poller handing it back, idle threads spinning for work, the garbage collector's workers),
// so no thread's CPU clock is one connection's. A connection's CPU is the whole process's
// CPU (CLOCK_PROCESS_CPUTIME_ID, getrusage(RUSAGE_SELF)) over its span, recorded only when
// no other connection of the process was in flight during that span (`alone`): exact for
// connections one at a time (a scenario's single-connection phase, `handshake`), null under
// concurrency, never a guess. docs/stacks.md says which figures are exact.

package main

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

const (
	clockProcessCPUTime = 2 // CLOCK_PROCESS_CPUTIME_ID
	clockThreadCPUTime  = 3 // CLOCK_THREAD_CPUTIME_ID
)

// threadCPU is the calling thread's CPU time in nanoseconds (user + system).
func threadCPU() uint64 { return clock(clockThreadCPUTime) }

// processCPU is the whole process's CPU time in nanoseconds (every thread).
func processCPU() uint64 { return clock(clockProcessCPUTime) }

func clock(id int) uint64 {
	var ts syscall.Timespec
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(id), uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return 0
	}
	return uint64(ts.Sec)*1e9 + uint64(ts.Nsec)
}

// processUsage is the process's user and system time in microseconds.
func processUsage() (user, sys uint64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return uint64(ru.Utime.Sec)*1e6 + uint64(ru.Utime.Usec), uint64(ru.Stime.Sec)*1e6 + uint64(ru.Stime.Usec)
}

// span is the process's clocks over one connection: wall, CPU, user and system time, and
// whether another connection was in flight at any moment of it.
type span struct {
	wall      time.Time
	cpu       uint64
	user, sys uint64
	gen       uint64
	alone     bool
	// When alone: the process's CPU when it last became idle (see `sinceIdle`).
	idleCPU uint64
}

// inFlight counts the process's connections in flight; gen counts their starts, so a span
// during which another started (and perhaps ended) is known not to have been alone.
// idleCPU is the process's CPU when it last had none in flight (its previous connection
// ended and was recorded, or the server became ready).
var inFlight struct {
	sync.Mutex
	n, gen  uint64
	idleCPU uint64
}

// markIdle notes the process's CPU now as the moment it had no connection in flight.
func markIdle() {
	inFlight.Lock()
	inFlight.idleCPU = processCPU()
	inFlight.Unlock()
}

func startSpan() span {
	u, s := processUsage()
	return startSpanAt(time.Now(), processCPU(), u, s)
}

// startSpanAt is startSpan from clocks read earlier (a QUIC server's connection starts at
// its first datagram, read before the connection exists).
func startSpanAt(wall time.Time, cpu, user, sys uint64) span {
	inFlight.Lock()
	alone := inFlight.n == 0
	inFlight.n++
	inFlight.gen++
	gen, idle := inFlight.gen, inFlight.idleCPU
	inFlight.Unlock()
	return span{wall: wall, cpu: cpu, user: user, sys: sys, gen: gen, alone: alone, idleCPU: min(idle, cpu)}
}

// sinceIdle is the process's CPU from the moment it last became idle to now, and whether
// the span was alone. It is what an arriving connection costs a Go server beyond its own
// span: the runtime's wake-up of the goroutine waiting in Accept (a parked goroutine, the
// scheduler, the network poller), which the other engines' threads pay inside the kernel's
// accept.
func (s span) sinceIdle() (uint64, bool) {
	cpu := processCPU()
	inFlight.Lock()
	alone := s.alone && inFlight.gen == s.gen
	inFlight.Unlock()
	return sat(cpu, s.idleCPU), alone
}

// since is (wall ns, cpu ns, user us, sys us, alone so far) from the span's start to now.
func (s span) since() (uint64, uint64, uint64, uint64, bool) {
	cpu := processCPU()
	u, sy := processUsage()
	inFlight.Lock()
	alone := s.alone && inFlight.gen == s.gen
	inFlight.Unlock()
	return uint64(time.Since(s.wall).Nanoseconds()), sat(cpu, s.cpu), sat(u, s.user), sat(sy, s.sys), alone
}

// end closes the span: the connection is no longer in flight (and its record written).
func (s span) end() {
	inFlight.Lock()
	inFlight.n--
	if inFlight.n == 0 {
		inFlight.idleCPU = processCPU()
	}
	inFlight.Unlock()
}

func sat(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// parseCPUs reads a CPU list such as "0", "0,2" or "0-3".
func parseCPUs(text string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(text, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("invalid value %q for '--cpus': a CPU list such as 0, 0,2 or 0-3", text)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("invalid value %q for '--cpus': a CPU list such as 0, 0,2 or 0-3", text)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

// pinProcess restricts every thread of the process, present and future, to cpus: the
// affinity of each existing thread is set (threads the runtime starts later inherit it
// from the thread that starts them).
func pinProcess(cpus []int) error {
	var mask [16]uint64
	for _, c := range cpus {
		if c >= len(mask)*64 {
			return fmt.Errorf("CPU %d is beyond this engine's mask", c)
		}
		mask[c/64] |= 1 << (c % 64)
	}
	tasks, err := listTasks()
	if err != nil {
		return err
	}
	for _, tid := range tasks {
		_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid), unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask)))
		if errno != 0 {
			return fmt.Errorf("cannot run on CPUs %v: %v", cpus, errno)
		}
	}
	return nil
}

func listTasks() ([]int, error) {
	entries, err := readDirNames("/proc/self/task")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e); err == nil {
			out = append(out, n)
		}
	}
	return out, nil
}
