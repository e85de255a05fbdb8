//! CPU clocks and placement. Per-thread clocks: each connection is handled start to finish
//! on one thread, so the thread's clocks attribute CPU to that connection alone. The
//! process clock gives a whole program's CPU (the load generator's own use). `pin` keeps a
//! process on a set of cores.

use anyhow::{bail, Context};

/// A reading of the calling thread's CPU clocks.
#[derive(Debug, Clone, Copy)]
pub struct ThreadCpu {
    /// `CLOCK_THREAD_CPUTIME_ID`: user + system, nanosecond resolution.
    pub total_ns: u64,
    /// `getrusage(RUSAGE_THREAD)`: split into user and system, microsecond resolution.
    pub user_us: u64,
    pub sys_us: u64,
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
        }
    }

    /// CPU spent since `earlier` on this thread.
    pub fn since(self, earlier: ThreadCpu) -> ThreadCpu {
        ThreadCpu {
            total_ns: self.total_ns.saturating_sub(earlier.total_ns),
            user_us: self.user_us.saturating_sub(earlier.user_us),
            sys_us: self.sys_us.saturating_sub(earlier.sys_us),
        }
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
