// `load`: the open-loop generator. Every attempt's intended start is fixed before the first
// one (constant: exactly 1/rate apart; poisson: exponential gaps from --seed); --max-in-flight
// connection slots (goroutines, each locked to its own thread) take attempts as they come
// due, and an attempt due while every slot holds an open connection is recorded as
// generator_saturated and never started. Latency runs from the intended start (coordinated
// omission). Nothing is retried.

package main

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// maxAttempts bounds a schedule (a typo'd rate must not allocate without end).
const maxAttempts = 2_000_000

type job struct {
	seq      uint64
	due      time.Time
	intended uint64
}

// schedule is the attempts' offsets from the start, ns.
func schedule(a *loadArgs) ([]uint64, error) {
	duration := float64(a.durationMs) * 1e6
	if a.rate*float64(a.durationMs)/1e3 > maxAttempts {
		return nil, errors.New("--rate x --duration-ms schedules more than 2000000 attempts")
	}
	var out []uint64
	if a.arrivals == "constant" {
		gap := 1e9 / a.rate
		for i := 0; float64(i)*gap < duration; i++ {
			out = append(out, uint64(float64(i)*gap))
		}
		return out, nil
	}
	rng := rand.New(rand.NewChaCha8(seedBytes(a.seed)))
	t := 0.0
	for {
		t += -math.Log(1-rng.Float64()) * 1e9 / a.rate
		if t >= duration {
			return out, nil
		}
		out = append(out, uint64(t))
	}
}

func runLoad(a *loadArgs) error {
	offsets, err := schedule(a)
	if err != nil {
		return err
	}
	c, records, err := startClient(&a.client)
	if err != nil {
		return err
	}
	defer records.close()
	// The scheduler keeps its own thread, whose CPU clock is then its own.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	seq, err := c.newSlot().warmUp(records, a.client.seqStart, a.warmup)
	if err != nil {
		return err
	}
	jobs := make(chan job, len(offsets)+1)
	var inFlight atomic.Int64
	var started atomic.Uint64
	var slots sync.WaitGroup
	var writeErr atomic.Value
	for i := 0; i < a.maxInFlight; i++ {
		slots.Add(1)
		go func() {
			defer slots.Done()
			s := c.newSlot()
			for j := range jobs {
				lag := sat(uint64(time.Since(j.due).Nanoseconds()), 0)
				if time.Now().Before(j.due) {
					lag = 0
				}
				started.Add(1)
				rec := s.attempt(j.seq, false)
				inFlight.Add(-1)
				rec.IntendedNs = u64p(j.intended)
				rec.SchedLagNs = u64p(lag)
				if rec.TotalNs != nil {
					rec.LatencyNs = u64p(lag + *rec.TotalNs)
				}
				if err := records.write(rec); err != nil {
					writeErr.Store(err)
				}
			}
		}()
	}
	schedulerCPU := threadCPU()
	processStart := processCPU()
	start := time.Now()
	var saturated, maxLag uint64
	for _, offset := range offsets {
		due := start.Add(time.Duration(offset))
		if wait := time.Until(due); wait > 0 {
			time.Sleep(wait)
		}
		if inFlight.Load() >= int64(a.maxInFlight) {
			saturated++
			rec := clientRecord{
				Schema: recordSchema, Side: "client", Stack: stackName, Transport: "tcp",
				Seq: seq, StartUnixNs: uint64(time.Now().UnixNano()), Verify: !a.client.noVerify,
				IntendedNs: u64p(offset),
			}
			records.write(failed(rec, failure{"generator_saturated", "due while all " + itoa(a.maxInFlight) + " connection slots were open; not started"}))
			seq++
			continue
		}
		inFlight.Add(1)
		maxLag = max(maxLag, uint64(max(time.Since(due), 0).Nanoseconds()))
		jobs <- job{seq: seq, due: due, intended: offset}
		seq++
	}
	close(jobs)
	slots.Wait()
	wall := uint64(time.Since(start).Nanoseconds())
	if err, ok := writeErr.Load().(error); ok {
		return err
	}
	var cpus *[]int
	if a.client.cpus != nil {
		cpus = &a.client.cpus
	}
	return records.write(generatorRecord{
		Schema: recordSchema, Side: "generator", Rate: a.rate, Arrivals: a.arrivals,
		DurationNs: a.durationMs * 1_000_000, MaxInFlight: uint64(a.maxInFlight), CPUs: cpus,
		Scheduled: uint64(len(offsets)), Started: started.Load(), Saturated: saturated,
		WallNs: wall, ProcessCPUNs: sat(processCPU(), processStart),
		SchedulerCPUNs: sat(threadCPU(), schedulerCPU), MaxDispatchLagNs: maxLag,
	})
}
