//! CPU clocks and placement. Per-thread clocks: each connection is handled start to finish
//! on one thread, so the thread's clocks attribute CPU to that connection alone. The
//! process clock gives a whole program's CPU (the load generator's own use). `pin` keeps a
//! process on a set of cores.

use anyhow::{bail, Context};

/// The span of one counted unit: a server connection from accept to close, a client attempt
/// from connect to close, one `primitives` operation. Instruction counting under valgrind's
/// callgrind collects inside this function only and dumps as it returns
/// (`--toggle-collect=chainlab_record::cpu::counted_span` and `--dump-after=` the same name:
/// callgrind 3.19 matches `--dump-after` by the exact name, not a pattern), one profile per
/// unit; start-up, the accept loop and record writing stay outside. Natively it is a plain
/// call.
#[inline(never)]
pub fn counted_span<R>(span: impl FnOnce() -> R) -> R {
    std::hint::black_box(span())
}

/// A reading of the calling thread's CPU clocks.
#[derive(Debug, Clone, Copy)]
pub struct ThreadCpu {
    /// `CLOCK_THREAD_CPUTIME_ID`: user + system, nanosecond resolution.
    pub total_ns: u64,
    /// `getrusage(RUSAGE_THREAD)`: split into user and system, microsecond resolution.
    pub user_us: u64,
    pub sys_us: u64,
    /// User-mode instructions retired by the thread (a hardware counter through
    /// `perf_event_open`); None where the host exposes no such counter.
    pub instructions: Option<u64>,
}

impl ThreadCpu {
    pub fn now() -> Self {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid out-pointer; CLOCK_THREAD_CPUTIME_ID exists on every Linux.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        // SAFETY: rusage is plain old data, zeroed is a valid value, and the pointer is valid.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
        let us = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000 + tv.tv_usec as u64;
        ThreadCpu {
            total_ns: ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64,
            user_us: us(ru.ru_utime),
            sys_us: us(ru.ru_stime),
            instructions: INSTRUCTIONS.with(|counter| counter.as_ref().and_then(read_counter)),
        }
    }

    /// No CPU: the start of a sum of spans.
    pub const ZERO: ThreadCpu = ThreadCpu {
        total_ns: 0,
        user_us: 0,
        sys_us: 0,
        instructions: Some(0),
    };

    /// The sum of two spans of CPU (instructions only where both counted them).
    pub fn plus(self, other: ThreadCpu) -> ThreadCpu {
        ThreadCpu {
            total_ns: self.total_ns + other.total_ns,
            user_us: self.user_us + other.user_us,
            sys_us: self.sys_us + other.sys_us,
            instructions: match (self.instructions, other.instructions) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            },
        }
    }

    /// One of `n` equal parts of this span (for `n` = 0, the whole span): a readiness wait
    /// that woke a loop for several connections is each one's in equal parts.
    pub fn share(self, n: u64) -> ThreadCpu {
        let n = n.max(1);
        ThreadCpu {
            total_ns: self.total_ns / n,
            user_us: self.user_us / n,
            sys_us: self.sys_us / n,
            instructions: self.instructions.map(|i| i / n),
        }
    }

    /// CPU spent since `earlier` on this thread.
    pub fn since(self, earlier: ThreadCpu) -> ThreadCpu {
        ThreadCpu {
            total_ns: self.total_ns.saturating_sub(earlier.total_ns),
            user_us: self.user_us.saturating_sub(earlier.user_us),
            sys_us: self.sys_us.saturating_sub(earlier.sys_us),
            instructions: match (self.instructions, earlier.instructions) {
                (Some(now), Some(then)) => Some(now.saturating_sub(then)),
                _ => None,
            },
        }
    }
}

// -- hardware counters ----------------------------------------------------------------------

/// `struct perf_event_attr` (linux/perf_event.h), as far as this engine sets it; the kernel
/// accepts any size it knows (PERF_ATTR_SIZE_VER0 = 64 and up), the rest zero.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved: u16,
}

const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
/// `exclude_kernel` (bit 5) and `exclude_hv` (bit 6): user-mode only, which an unprivileged
/// process may count (perf_event_paranoid <= 2).
const PERF_FLAGS_USER_ONLY: u64 = (1 << 5) | (1 << 6);

thread_local! {
    /// The calling thread's instruction counter, opened on the thread's first reading.
    static INSTRUCTIONS: Option<std::fs::File> = open_instruction_counter().ok();
}

/// A counter of the calling thread's user-mode instructions, counting from now.
fn open_instruction_counter() -> std::io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    let attr = PerfEventAttr {
        kind: PERF_TYPE_HARDWARE,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config: PERF_COUNT_HW_INSTRUCTIONS,
        flags: PERF_FLAGS_USER_ONLY,
        ..Default::default()
    };
    // SAFETY: perf_event_open reads `attr` (valid, sized as declared); pid 0 / cpu -1 count
    // the calling thread on any CPU; group -1 and flags 0 open a standalone counter.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            0,
            -1,
            -1,
            0,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor owned by nobody else.
    Ok(unsafe { std::fs::File::from_raw_fd(fd as i32) })
}

fn read_counter(file: &std::fs::File) -> Option<u64> {
    use std::io::Read;
    let mut buf = [0u8; 8];
    (&*file).read_exact(&mut buf).ok()?;
    Some(u64::from_ne_bytes(buf))
}

/// Whether this host counts instructions per thread, and if not why (for `info`).
pub fn hardware_counters() -> serde_json::Value {
    match open_instruction_counter() {
        Ok(_) => serde_json::json!({"available": true, "counters": ["instructions"]}),
        Err(e) => serde_json::json!({
            "available": false,
            "reason": format!("perf_event_open(instructions): {e}"),
        }),
    }
}

/// The whole process's CPU (all threads, user + system) so far, in nanoseconds
/// (`getrusage(RUSAGE_SELF)`, microsecond resolution).
pub fn process_cpu_ns() -> u64 {
    // SAFETY: rusage is plain old data, zeroed is a valid value, and the pointer is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let us = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000 + tv.tv_usec as u64;
    (us(ru.ru_utime) + us(ru.ru_stime)) * 1_000
}

/// Parses a CPU list as taskset and /sys write them: "1", "0,2", "0-3", "0-1,4".
pub fn parse_cpu_list(list: &str) -> anyhow::Result<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in list.split(',') {
        let part = part.trim();
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let parse = |v: &str| {
            v.parse::<usize>()
                .with_context(|| format!("--cpus {list:?}: {v:?} is not a CPU number"))
        };
        let (lo, hi) = (parse(lo)?, parse(hi)?);
        if lo > hi || hi >= libc::CPU_SETSIZE as usize {
            bail!("--cpus {list:?}: bad range {part:?}; allowed: e.g. 0, 1, 0-3, 0,2");
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Restricts the calling thread, and every thread it starts afterwards, to `list`.
pub fn pin(list: &str) -> anyhow::Result<Vec<usize>> {
    let cpus = parse_cpu_list(list)?;
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET write within it (numbers checked
    // against CPU_SETSIZE above); sched_setaffinity reads it.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        for &cpu in &cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        bail!(
            "--cpus {list:?}: {} (this machine has {} CPUs)",
            std::io::Error::last_os_error(),
            std::thread::available_parallelism().map_or(0, |n| n.get())
        );
    }
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_loop_advances_the_thread_clock() {
        let start = ThreadCpu::now();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let spent = ThreadCpu::now().since(start);
        assert!(spent.total_ns > 100_000, "{spent:?}");
    }

    #[test]
    fn cpu_lists_parse_like_taskset() {
        assert_eq!(parse_cpu_list("1").unwrap(), vec![1]);
        assert_eq!(parse_cpu_list("0-2,5,1").unwrap(), vec![0, 1, 2, 5]);
        assert!(parse_cpu_list("2-1").is_err());
        assert!(parse_cpu_list("x").is_err());
        assert!(parse_cpu_list("").is_err());
    }
}
