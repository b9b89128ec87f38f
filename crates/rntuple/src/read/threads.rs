//! Where decoding runs: on the calling thread (`threads = 1`), on rayon's
//! global pool (`threads = 0`: one thread per core, or `RAYON_NUM_THREADS`),
//! or on a pool of exactly `threads` threads, created on first use and shared
//! by every later read asking for that many.
//!
//! Work is handed out in item order and results come back in item order, so
//! a read gives the same arrays — and the same first error — whatever the
//! number of threads.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;
use rntuple_format::{Error, Result};

/// Most threads one pool may have (a typo such as `threads=10000` must not
/// start ten thousand threads).
const MAX_THREADS: usize = 1024;

#[derive(Debug, Clone)]
pub(crate) enum Pool {
    Sequential,
    Global,
    Own(Arc<rayon::ThreadPool>),
}

fn pools() -> &'static Mutex<HashMap<usize, Arc<rayon::ThreadPool>>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    POOLS.get_or_init(|| Mutex::new(HashMap::new()))
}

impl Pool {
    pub(crate) fn new(threads: usize) -> Result<Self> {
        if threads > MAX_THREADS {
            return Err(Error::invalid(format!(
                "threads = {threads}: at most {MAX_THREADS} decoding threads are allowed"
            )));
        }
        match threads {
            1 => Ok(Pool::Sequential),
            0 if rayon::current_num_threads() <= 1 => Ok(Pool::Sequential),
            0 => Ok(Pool::Global),
            n => {
                let mut map = pools().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                if let Some(p) = map.get(&n) {
                    return Ok(Pool::Own(p.clone()));
                }
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .thread_name(|i| format!("rntuple-decode-{i}"))
                    .build()
                    .map_err(|e| Error::io(format!("starting {n} decoding threads"), std::io::Error::other(e)))?;
                let pool = Arc::new(pool);
                map.insert(n, pool.clone());
                Ok(Pool::Own(pool))
            }
        }
    }

    /// Number of threads that decode.
    #[cfg(test)]
    pub(crate) fn threads(&self) -> usize {
        match self {
            Pool::Sequential => 1,
            Pool::Global => rayon::current_num_threads(),
            Pool::Own(p) => p.current_num_threads(),
        }
    }

    pub(crate) fn is_parallel(&self) -> bool {
        !matches!(self, Pool::Sequential)
    }

    /// `f(state, item)` for every item, in parallel unless sequential; each
    /// worker gets its own `state` from `init`. Results are in item order.
    pub(crate) fn map_init<T, S, R, I, F>(&self, items: Vec<T>, init: I, f: F) -> Vec<R>
    where
        T: Send,
        R: Send,
        I: Fn() -> S + Sync + Send,
        F: Fn(&mut S, T) -> R + Sync + Send,
    {
        if !self.is_parallel() || items.len() <= 1 {
            let mut state = init();
            return items.into_iter().map(|t| f(&mut state, t)).collect();
        }
        let run = || items.into_par_iter().map_init(&init, |s, t| f(s, t)).collect();
        match self {
            Pool::Own(p) => p.install(run),
            _ => run(),
        }
    }

    /// Runs `f` once on every thread of the pool (the calling thread when
    /// sequential; the global pool's threads for `Global`).
    pub(crate) fn broadcast(&self, f: impl Fn() + Sync) {
        match self {
            Pool::Sequential => f(),
            Pool::Global => {
                rayon::broadcast(|_| f());
            }
            Pool::Own(p) => {
                p.broadcast(|_| f());
            }
        }
    }

    /// Runs `f` on the calling thread with a scope whose spawned work runs
    /// on the pool (on rayon's global pool when sequential: callers spawn
    /// only on parallel pools), and returns once all of it is done.
    pub(crate) fn in_place_scope<'s, R>(&self, f: impl FnOnce(&rayon::Scope<'s>) -> R) -> R {
        match self {
            Pool::Own(p) => p.in_place_scope(f),
            _ => rayon::in_place_scope(f),
        }
    }

    /// Like [`Pool::map_init`] for fallible work without results: the error
    /// of the first failing item in item order (sequential runs stop there).
    pub(crate) fn try_for_each_init<T, S, I, F>(&self, items: Vec<T>, init: I, f: F) -> Result<()>
    where
        T: Send,
        I: Fn() -> S + Sync + Send,
        F: Fn(&mut S, T) -> Result<()> + Sync + Send,
    {
        if !self.is_parallel() || items.len() <= 1 {
            let mut state = init();
            return items.into_iter().try_for_each(|t| f(&mut state, t));
        }
        self.map_init(items, init, f).into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_item_order_and_the_first_error_wins() {
        for threads in [1, 2, 3, 0] {
            let pool = Pool::new(threads).unwrap();
            let out = pool.map_init(
                (0..1000).collect(),
                || 0u64,
                |calls, x: u64| {
                    *calls += 1;
                    x * 2
                },
            );
            assert_eq!(out, (0..1000).map(|x| x * 2).collect::<Vec<_>>(), "threads {threads}");
            let err = pool
                .try_for_each_init(
                    (0..1000u64).collect(),
                    || (),
                    |_, x| {
                        if x % 300 == 299 {
                            Err(Error::invalid(format!("item {x}")))
                        } else {
                            Ok(())
                        }
                    },
                )
                .unwrap_err();
            assert_eq!(err.to_string(), "invalid argument: item 299", "threads {threads}");
        }
    }

    #[test]
    fn pools_are_shared_and_bounded() {
        let a = Pool::new(3).unwrap();
        let b = Pool::new(3).unwrap();
        match (&a, &b) {
            (Pool::Own(x), Pool::Own(y)) => assert!(Arc::ptr_eq(x, y)),
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(a.threads(), 3);
        assert!(!Pool::new(1).unwrap().is_parallel());
        assert!(matches!(Pool::new(100_000), Err(Error::InvalidArgument { .. })));
    }
}
