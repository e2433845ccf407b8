//! A criterion measurement of the calling thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`) for the single-threaded benchmarks. On this
//! shared two-core machine other users' jobs often leave a benchmark a
//! fraction of a core; wall-clock time then counts the time the thread was
//! not running at all, CPU time does not. (Cache pollution from the other
//! jobs still shows: callgrind's counts are the noise-free figures.)

use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};

/// The calling thread's CPU time so far.
pub fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable `timespec`.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Thread CPU time, reported in the same units as criterion's wall time.
pub struct ThreadCpuTime {
    /// Lends its duration formatter.
    wall: WallTime,
}

impl Default for ThreadCpuTime {
    fn default() -> Self {
        ThreadCpuTime { wall: WallTime }
    }
}

impl Measurement for ThreadCpuTime {
    type Intermediate = Duration;
    type Value = Duration;

    fn start(&self) -> Duration {
        thread_cpu_time()
    }
    fn end(&self, start: Duration) -> Duration {
        thread_cpu_time().saturating_sub(start)
    }
    fn add(&self, first: &Duration, second: &Duration) -> Duration {
        *first + *second
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        self.wall.formatter()
    }
}
