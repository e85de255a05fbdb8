//! Per-thread CPU clocks. Each connection is handled start to finish on one thread, so the
//! thread's clocks attribute CPU to that connection alone.

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
}
