//! Per-line work on large outputs, split across the machine's cores.
//!
//! Only functions of one line's text go through here (whether it is progress, its
//! class, its shape): each result depends on its own line alone, so how the lines
//! are split cannot change the view, only how soon it is ready. Outputs under
//! [`MIN_PER_THREAD`] lines per thread (nearly every command) stay on the calling
//! thread, where starting a thread would cost more than the work.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Fewest lines worth a thread of their own.
pub const MIN_PER_THREAD: usize = 16 * 1024;

/// Most threads one map uses, however many cores there are.
pub const MAX_THREADS: usize = 8;

/// 0: one thread per core (up to [`MAX_THREADS`]); otherwise this many.
static THREADS: AtomicUsize = AtomicUsize::new(0);

/// Sets how many threads a map may use (`0`: one per core). The benchmarks use it
/// to report single-threaded throughput next to the default.
pub fn set_threads(n: usize) {
    THREADS.store(n, Ordering::Relaxed);
}

/// How many threads a map may use. The core count is read once: finding it reads
/// the affinity mask and cgroup files, which costs more than a small output's view.
fn threads() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    match THREADS.load(Ordering::Relaxed) {
        0 => *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        n => n,
    }
    .min(MAX_THREADS)
}

/// `items.iter().map(f).collect()`, in parallel when `items` is long enough. A
/// thread that cannot be started leaves its share to the calling thread; a panic
/// in a worker is raised again here.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    // Small inputs (nearly all) decide without asking how many cores there are.
    let n = match items.len() / MIN_PER_THREAD {
        0 | 1 => 1,
        most => threads().min(most),
    };
    if n == 1 {
        return items.iter().map(f).collect();
    }
    let size = items.len().div_ceil(n);
    let f = &f;
    std::thread::scope(|s| {
        let mut chunks = items.chunks(size);
        let first = chunks.next().unwrap_or_default();
        let workers: Vec<_> = chunks
            .map(|c| {
                let job = move || c.iter().map(f).collect::<Vec<R>>();
                (c, std::thread::Builder::new().spawn_scoped(s, job).ok())
            })
            .collect();
        let mut out: Vec<R> = Vec::with_capacity(items.len());
        out.extend(first.iter().map(f));
        for (c, worker) in workers {
            match worker {
                Some(h) => match h.join() {
                    Ok(part) => out.extend(part),
                    Err(panic) => std::panic::resume_unwind(panic),
                },
                None => out.extend(c.iter().map(f)),
            }
        }
        out
    })
}

/// Runs `a` and `b`, `b` on a thread of its own when `lines` is large enough for
/// that to pay and a second thread is allowed; if that thread cannot be started, `b`
/// runs here after `a`.
pub fn join<A: Send, B: Send>(
    lines: usize,
    a: impl FnOnce() -> A,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if lines < 2 * MIN_PER_THREAD || threads() < 2 {
        return (a(), b());
    }
    let b = Mutex::new(Some(b));
    let take = || b.lock().unwrap_or_else(|e| e.into_inner()).take();
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .spawn_scoped(s, || take().map(|b| b()))
            .ok();
        let ra = a();
        let rb = match worker.map(|h| h.join()) {
            Some(Ok(Some(rb))) => Some(rb),
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            Some(Ok(None)) | None => None,
        };
        // Not started (or started too late to find `b`): run it here.
        let rb = rb.or_else(|| take().map(|b| b()));
        (ra, rb.expect("b runs on one thread or the other"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_whatever_the_split() {
        let items: Vec<usize> = (0..MIN_PER_THREAD * 5 + 17).collect();
        let want: Vec<usize> = items.iter().map(|x| x * 3).collect();
        for n in [1, 2, 3, 8] {
            set_threads(n);
            assert_eq!(map(&items, |x| x * 3), want, "{n} threads");
        }
        set_threads(0);
        assert_eq!(map(&items[..10], |x| x * 3), want[..10]);
        assert!(map(&[] as &[usize], |x| *x).is_empty());
    }

    #[test]
    fn join_returns_both_results() {
        set_threads(2);
        let big = 2 * MIN_PER_THREAD;
        assert_eq!(join(big, || 1, || "b"), (1, "b"));
        assert_eq!(join(3, || 1, || "b"), (1, "b"));
        set_threads(0);
    }

    #[test]
    fn a_worker_panic_reaches_the_caller() {
        let items: Vec<usize> = (0..MIN_PER_THREAD * 4).collect();
        set_threads(4);
        let last = items.len() - 1;
        let r = std::panic::catch_unwind(|| map(&items, |&x| assert!(x != last, "boom")));
        set_threads(0);
        assert!(r.is_err());
    }
}
