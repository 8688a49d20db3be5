//! The Generic Cell Rate Algorithm, as a pure function of (stored state, now, quota).
//!
//! A quota of N requests per window W with burst B: the emission interval is
//! T = W / N and the tolerance τ = (B − 1)·T. The state of a key is its *theoretical
//! arrival time* (TAT). A request at time t passes when t ≥ TAT − τ; it then sets
//! TAT := max(TAT, t) + T. A rejected request leaves the state unchanged: rejections do
//! not consume quota.
//!
//! **Guarantee.** Let t₁ < … < tₖ be the times of passed requests of one key inside any
//! half-open interval of length L. Each pass moves TAT forward by at least T from
//! max(TAT, t), so TATₖ ≥ t₁ + (k − 1)·T, and tₖ passed, so tₖ ≥ TATₖ − τ. Hence
//! (k − B)·T ≤ tₖ − t₁ < L, that is
//!
//! ```text
//!     k ≤ B + ⌈L / T⌉ − 1        requests pass in any interval of length L.
//! ```
//!
//! With the default burst B = N and L = W, that is at most 2N − 1 in any window of
//! length W; over a long interval the rate is N per W. A client that has been idle for W
//! can send N requests at once (the burst), and then one every T. With B = 1 at most N
//! pass in any window of length W, evenly spaced. The property tests in this module
//! check the bound and that it is reached.
//!
//! Times are in nanoseconds on the server's monotonic clock; T is rounded down to a whole
//! nanosecond (the bound holds for the rounded T).

use std::time::Duration;

/// A rate limit: `limit` requests per `window`, with a burst of `burst` requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    pub limit: u32,
    pub window: Duration,
    pub burst: u32,
    /// T, in nanoseconds.
    interval: u64,
    /// τ, in nanoseconds.
    tolerance: u64,
}

impl Quota {
    /// `limit` per `window`, with a burst of `limit` (the usual meaning of "100 per minute":
    /// 100 at once after a quiet minute, then one every 0.6 s).
    pub fn per(limit: u32, window: Duration) -> Quota {
        Quota::with_burst(limit, window, limit)
    }

    pub fn with_burst(limit: u32, window: Duration, burst: u32) -> Quota {
        let limit = limit.max(1);
        let burst = burst.max(1);
        let interval = (window.as_nanos() / u128::from(limit)).clamp(1, u128::from(u64::MAX / 4)) as u64;
        Quota {
            limit,
            window,
            burst,
            interval,
            tolerance: interval.saturating_mul(u64::from(burst) - 1),
        }
    }

    /// The emission interval T.
    pub fn interval(&self) -> Duration {
        Duration::from_nanos(self.interval)
    }

    /// The most requests that can pass in any interval of `length`: B + ⌈L/T⌉ − 1.
    pub fn max_in(&self, length: Duration) -> u64 {
        let l = length.as_nanos() as u64;
        u64::from(self.burst) + l.div_ceil(self.interval) - 1
    }
}

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    /// Requests that could pass right now after this one (the `r` of the RateLimit header).
    pub remaining: u32,
    /// Time until the key is back to a full burst (the `t` of the RateLimit header).
    pub reset: Duration,
    /// For a rejection: time until a request would pass.
    pub retry_after: Duration,
}

/// One GCRA step. `tat` is the stored state (None for a key never seen or evicted);
/// returns the decision and the new state to store (None: leave it as it was).
pub fn step(tat: Option<u64>, now: u64, q: &Quota) -> (Decision, Option<u64>) {
    let tat = tat.unwrap_or(now).max(now);
    let allow_at = tat.saturating_sub(q.tolerance);
    if now >= allow_at {
        let new_tat = tat + q.interval;
        let headroom = (now + q.tolerance + q.interval).saturating_sub(new_tat);
        let decision = Decision {
            allowed: true,
            remaining: (headroom / q.interval).min(u64::from(u32::MAX)) as u32,
            reset: Duration::from_nanos(new_tat - now),
            retry_after: Duration::ZERO,
        };
        (decision, Some(new_tat))
    } else {
        let decision = Decision {
            allowed: false,
            remaining: 0,
            reset: Duration::from_nanos(tat - now),
            retry_after: Duration::from_nanos(allow_at - now),
        };
        (decision, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SEC: u64 = 1_000_000_000;

    #[test]
    fn a_burst_then_one_per_interval() {
        let q = Quota::per(5, Duration::from_secs(10)); // T = 2 s
        let mut tat = None;
        let mut passed = 0;
        for _ in 0..8 {
            let (d, new) = step(tat, 100 * SEC, &q);
            if d.allowed {
                passed += 1;
                tat = new;
            }
        }
        assert_eq!(passed, 5);
        let (d, _) = step(tat, 100 * SEC, &q);
        assert!(!d.allowed);
        assert_eq!(d.retry_after, Duration::from_secs(2));
        assert_eq!(d.reset, Duration::from_secs(10));
        let (d, _) = step(tat, 102 * SEC, &q);
        assert!(d.allowed);
        assert_eq!(d.remaining, 0);
    }

    #[test]
    fn remaining_counts_down() {
        let q = Quota::per(3, Duration::from_secs(3));
        let (d1, t1) = step(None, 0, &q);
        let (d2, t2) = step(t1, 0, &q);
        let (d3, t3) = step(t2, 0, &q);
        assert_eq!((d1.remaining, d2.remaining, d3.remaining), (2, 1, 0));
        let (d4, t4) = step(t3, 0, &q);
        assert!(!d4.allowed && t4.is_none());
        // A rejected request changed nothing: it consumed no quota.
        let (d5, _) = step(t3, SEC, &q);
        assert!(d5.allowed);
    }

    #[test]
    fn idle_keys_are_like_new_keys() {
        let q = Quota::per(10, Duration::from_secs(60));
        let (_, t) = step(None, 0, &q);
        // Once TAT <= now the stored state makes no difference: eviction is exact.
        let later = t.unwrap() + 1;
        assert_eq!(step(t, later, &q), step(None, later, &q));
    }

    #[test]
    fn max_in() {
        let q = Quota::per(100, Duration::from_secs(60));
        assert_eq!(q.max_in(Duration::from_secs(60)), 199);
        let q = Quota::with_burst(100, Duration::from_secs(60), 1);
        assert_eq!(q.max_in(Duration::from_secs(60)), 100);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

        /// The documented bound holds for every interval, whatever the arrival pattern.
        #[test]
        fn never_more_than_the_bound_in_any_interval(
            limit in 1u32..20,
            window_ms in 1u64..5_000,
            burst in 1u32..20,
            gaps in proptest::collection::vec(0u64..400_000_000, 1..400),
        ) {
            let q = Quota::with_burst(limit, Duration::from_millis(window_ms), burst);
            let mut now = 0u64;
            let mut tat = None;
            let mut passed: Vec<u64> = Vec::new();
            for gap in gaps {
                now += gap;
                let (d, new) = step(tat, now, &q);
                if d.allowed {
                    passed.push(now);
                    tat = new;
                }
            }
            let w = q.window.as_nanos() as u64;
            let bound = q.max_in(q.window) as usize;
            for (i, &start) in passed.iter().enumerate() {
                let in_window = passed[i..].iter().take_while(|&&t| t < start + w).count();
                prop_assert!(in_window <= bound, "{in_window} > {bound} in a window starting at {start}");
            }
        }

        /// The bound is reached: a client that retries exactly when told (`retry_after`)
        /// gets exactly that many requests through in a window.
        #[test]
        fn the_bound_is_reached(limit in 1u32..50, window_ms in 10u64..10_000, burst in 1u32..50) {
            let q = Quota::with_burst(limit, Duration::from_millis(window_ms), burst);
            let w = q.window.as_nanos() as u64;
            let mut tat = None;
            let mut count = 0u64;
            let mut now = 0u64;
            while now < w {
                let (d, new) = step(tat, now, &q);
                if d.allowed {
                    count += 1;
                    tat = new;
                } else {
                    now += d.retry_after.as_nanos() as u64;
                }
            }
            // A burst of B at time 0, then one every T.
            prop_assert_eq!(count, q.max_in(q.window));
        }
    }
}
