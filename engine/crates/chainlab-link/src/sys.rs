//! Thin, checked wrappers over the Linux calls the forwarder uses: epoll, timerfd, signalfd,
//! read/write, the monotonic clock and a few prctl settings. Each returns `io::Result` with
//! the errno of the failed call.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// CLOCK_MONOTONIC in nanoseconds: the clock every release time is expressed in (timerfd
/// alarms use the same clock, so no conversion sits between a decision and its alarm).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer; CLOCK_MONOTONIC exists on every Linux and cannot fail
    // with a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// An epoll instance; tokens are small integers chosen by the caller.
pub struct Epoll {
    fd: OwnedFd,
}

impl Epoll {
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain syscall; the result is checked before use.
        let fd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: fd was just returned by the kernel and is owned by nobody else.
        Ok(Epoll {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Watch `fd` for readability (level-triggered).
    pub fn add_readable(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut event = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: event is a valid pointer for the duration of the call.
        cvt(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut event) })?;
        Ok(())
    }

    /// Wait (without timeout: the timerfd bounds every wait) and return the ready tokens.
    pub fn wait(&self, events: &mut [libc::epoll_event]) -> io::Result<usize> {
        loop {
            // SAFETY: events is a valid buffer of events.len() entries.
            let n = unsafe {
                libc::epoll_wait(
                    self.fd.as_raw_fd(),
                    events.as_mut_ptr(),
                    events.len() as libc::c_int,
                    -1,
                )
            };
            match cvt(n) {
                Ok(n) => return Ok(n as usize),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// A CLOCK_MONOTONIC timerfd armed with absolute deadlines.
pub struct Timer {
    fd: OwnedFd,
    armed_ns: Option<u64>,
}

impl Timer {
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain syscall; the result is checked before use.
        let fd = cvt(unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        })?;
        // SAFETY: fd was just returned by the kernel and is owned by nobody else.
        Ok(Timer {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            armed_ns: None,
        })
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Arm for `deadline_ns` (absolute), or disarm with `None`. No syscall when unchanged.
    pub fn set(&mut self, deadline_ns: Option<u64>) -> io::Result<()> {
        if deadline_ns == self.armed_ns {
            return Ok(());
        }
        // A zero it_value disarms; an absolute deadline of 0 would too, so a deadline already
        // in the past is sent as 1 ns (fires at once).
        let value = deadline_ns.map_or(0, |ns| ns.max(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (value / 1_000_000_000) as libc::time_t,
                tv_nsec: (value % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: spec is valid for the call; the old-value pointer may be null.
        cvt(unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        })?;
        self.armed_ns = deadline_ns;
        Ok(())
    }

    /// The deadline the timer is armed for, if any.
    pub fn armed(&self) -> Option<u64> {
        self.armed_ns
    }

    /// Consume an expiry (so level-triggered epoll stops reporting it).
    pub fn acknowledge(&mut self) -> io::Result<()> {
        let mut expirations = [0u8; 8];
        match read(self.fd.as_raw_fd(), &mut expirations) {
            Ok(_) => {
                self.armed_ns = None;
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// Signals the forwarder handles: the stop signals and SIGUSR1 (print statistics).
pub struct Signals {
    fd: OwnedFd,
}

impl Signals {
    /// Block `signals` for this (single-threaded) process and receive them through a
    /// signalfd instead of asynchronous handlers.
    pub fn block(signals: &[libc::c_int]) -> io::Result<Self> {
        // SAFETY: sigset_t is plain data; sigemptyset initialises it before any other use.
        let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: set is a valid sigset_t for all of these calls.
        unsafe {
            libc::sigemptyset(&mut set);
            for &sig in signals {
                libc::sigaddset(&mut set, sig);
            }
        }
        // SAFETY: set is initialised; the old-set pointer may be null.
        cvt(unsafe { libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) })?;
        // SAFETY: set is initialised; -1 asks for a new descriptor.
        let fd = cvt(unsafe { libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC) })?;
        // SAFETY: fd was just returned by the kernel and is owned by nobody else.
        Ok(Signals {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The next pending signal number, if any.
    pub fn next(&self) -> io::Result<Option<libc::c_int>> {
        // SAFETY: signalfd_siginfo is plain data; all-zero is a valid value.
        let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::signalfd_siginfo>();
        // SAFETY: info is a valid, writable buffer of `size` bytes.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                (&mut info as *mut libc::signalfd_siginfo).cast(),
                size,
            )
        };
        match cvt(n as libc::c_int) {
            Ok(_) => Ok(Some(info.ssi_signo as libc::c_int)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// `read(2)` retrying on EINTR.
pub fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: buf is a valid, writable buffer of buf.len() bytes.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// `write(2)` retrying on EINTR. A TUN write takes the whole packet or fails.
pub fn write(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: buf is a valid buffer of buf.len() bytes.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Timer slack of this thread: 1 ns. The default 50 us slack lets the kernel fire a timerfd
/// up to 50 us late to batch wake-ups; that would be added, unevenly, to every emulated delay.
pub fn minimal_timer_slack() -> io::Result<()> {
    // SAFETY: plain prctl with integer arguments.
    cvt(unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) })?;
    Ok(())
}

/// Switch this process to SCHED_FIFO at `priority`. The loop blocks in epoll_wait whenever
/// it has nothing due, and the kernel's RT throttling (sched_rt_runtime_us) keeps a share of
/// every CPU for other tasks even if it did not.
pub fn realtime(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: param is valid for the call; pid 0 is this process.
    cvt(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) })?;
    Ok(())
}

/// Have the kernel send SIGTERM when the parent process exits; returns false if the parent is
/// already gone (the race the prctl cannot close on its own).
pub fn exit_with_parent(parent: libc::pid_t) -> io::Result<bool> {
    // SAFETY: plain prctl with integer arguments.
    cvt(unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGTERM as libc::c_ulong,
            0,
            0,
            0,
        )
    })?;
    // SAFETY: getppid cannot fail.
    Ok(unsafe { libc::getppid() } == parent)
}

pub fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}
