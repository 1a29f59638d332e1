//! A process's CPU time and peak memory, read from `/proc` (Linux).

use std::collections::BTreeMap;
use std::io;

/// CPU time (user + system, all threads) `pid` has used so far, in microseconds.
///
/// ```
/// let spent = mrtr_bench::proc_stats::cpu_micros(std::process::id()).unwrap();
/// let later = mrtr_bench::proc_stats::cpu_micros(std::process::id()).unwrap();
/// assert!(later >= spent);
/// ```
pub fn cpu_micros(pid: u32) -> io::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    parse_cpu_ticks(&stat)
        .map(|ticks| ticks * 1_000_000 / clock_ticks_per_second())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unreadable /proc/{pid}/stat"),
            )
        })
}

/// CPU time `pid` has used so far in user mode and in the kernel, in microseconds.
///
/// ```
/// let (user, system) = mrtr_bench::proc_stats::cpu_split_micros(std::process::id()).unwrap();
/// assert_eq!(user + system, mrtr_bench::proc_stats::cpu_micros(std::process::id()).unwrap().max(user + system));
/// ```
pub fn cpu_split_micros(pid: u32) -> io::Result<(u64, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let per_tick = 1_000_000 / clock_ticks_per_second();
    parse_cpu_split(&stat)
        .map(|(user, system)| (user * per_tick, system * per_tick))
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unreadable /proc/{pid}/stat"),
            )
        })
}

/// Each live thread of `pid` and the nanoseconds it has run on a CPU
/// (`/proc/PID/task/TID/schedstat`): the scheduler's own accounting, exact where
/// `utime + stime` comes in clock ticks of 10 ms.
///
/// ```
/// let threads = mrtr_bench::proc_stats::thread_cpu_nanos(std::process::id()).unwrap();
/// assert!(threads.contains_key(&std::process::id()));
/// ```
pub fn thread_cpu_nanos(pid: u32) -> io::Result<BTreeMap<u32, u64>> {
    let mut threads = BTreeMap::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let entry = entry?;
        let Some(tid) = entry.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        // A thread that ends between the listing and the read is simply not counted.
        let Ok(schedstat) = std::fs::read_to_string(entry.path().join("schedstat")) else {
            continue;
        };
        let nanos = schedstat
            .split_whitespace()
            .next()
            .and_then(|ns| ns.parse().ok())
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("unreadable /proc/{pid}/task/{tid}/schedstat"),
                )
            })?;
        threads.insert(tid, nanos);
    }
    Ok(threads)
}

/// The CPU time, in microseconds, the threads of two [`thread_cpu_nanos`] readings used
/// between them; `None` when a thread of the first is gone from the second (its time
/// would be lost: fall back to [`cpu_micros`]).
///
/// ```
/// use std::collections::BTreeMap;
/// use mrtr_bench::proc_stats::cpu_micros_between;
/// let before = BTreeMap::from([(1, 1_000_000), (2, 0)]);
/// let after = BTreeMap::from([(1, 3_500_000), (2, 500_000), (3, 1_000)]);
/// assert_eq!(cpu_micros_between(&before, &after), Some(3_001));
/// assert_eq!(cpu_micros_between(&after, &before), None);
/// ```
pub fn cpu_micros_between(before: &BTreeMap<u32, u64>, after: &BTreeMap<u32, u64>) -> Option<u64> {
    if before.keys().any(|tid| !after.contains_key(tid)) {
        return None;
    }
    let nanos: u64 = after
        .iter()
        .map(|(tid, now)| now.saturating_sub(before.get(tid).copied().unwrap_or(0)))
        .sum();
    Some(nanos / 1_000)
}

/// The anonymous part of `pid`'s resident set (`RssAnon`: heap and stacks, not the mapped
/// program text), in KiB, now.
///
/// ```
/// assert!(mrtr_bench::proc_stats::rss_anon_kib(std::process::id()).unwrap() > 0);
/// ```
pub fn rss_anon_kib(pid: u32) -> io::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status_kib(&status, "RssAnon:").ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("no RssAnon in /proc/{pid}/status"),
        )
    })
}

/// The peak resident set size of `pid` (`VmHWM`), in KiB.
///
/// ```
/// assert!(mrtr_bench::proc_stats::peak_rss_kib(std::process::id()).unwrap() > 0);
/// ```
pub fn peak_rss_kib(pid: u32) -> io::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    parse_peak_rss(&status).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("no VmHWM in /proc/{pid}/status"),
        )
    })
}

/// `utime + stime` in clock ticks. The command name (field 2) may hold spaces and
/// parentheses, so fields are counted after its closing parenthesis.
fn parse_cpu_ticks(stat: &str) -> Option<u64> {
    parse_cpu_split(stat).map(|(user, system)| user + system)
}

/// `(utime, stime)` in clock ticks.
fn parse_cpu_split(stat: &str) -> Option<(u64, u64)> {
    let (_, after_name) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // After the name: state is field 3, so utime (14) and stime (15) are at 11 and 12.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime, stime))
}

fn parse_peak_rss(status: &str) -> Option<u64> {
    status_kib(status, "VmHWM:")
}

fn status_kib(status: &str, field: &str) -> Option<u64> {
    let line = status.lines().find(|line| line.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn clock_ticks_per_second() -> u64 {
    // SAFETY: sysconf only reads a configuration value.
    #[allow(unsafe_code)]
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 { ticks as u64 } else { 100 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ticks_are_counted_after_an_odd_command_name() {
        let stat = "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 5 1000 50";
        assert_eq!(parse_cpu_ticks(stat), Some(10));
        assert_eq!(parse_cpu_ticks("42 (short) S 1"), None);
        assert_eq!(parse_cpu_split(stat), Some((7, 3)));
    }

    #[test]
    fn peak_rss_is_read_from_vmhwm() {
        let status = "Name:\tx\nVmPeak:\t  9000 kB\nVmHWM:\t  1234 kB\nVmRSS:\t 1000 kB\n";
        assert_eq!(parse_peak_rss(status), Some(1234));
        assert_eq!(parse_peak_rss("Name:\tx\n"), None);
        let status = "VmHWM:\t  1234 kB\nRssAnon:\t  1852 kB\nRssFile:\t  8344 kB\n";
        assert_eq!(status_kib(status, "RssAnon:"), Some(1852));
    }
}
