//! Paired measurements: how the targets are judged.
//!
//! A target is a ratio between two operations: ours and a peer, or ours and
//! its floor. Measured minutes apart, as criterion's groups are, the two
//! sides of a ratio can meet different machines: on a shared 2-core machine
//! another process's work comes and goes, and a ratio of two medians taken
//! at different moments moves by tens of percent from one run to the next.
//!
//! So each target is measured as a pair: short batches of the two
//! operations alternate, a few hundred microseconds each, the order flipping
//! every round, and each round gives one ratio of the two batches' times.
//! Load that lasts longer than a round falls on both sides of it and cancels
//! out; the median of the rounds' ratios leaves out the rounds that a burst
//! of load hit on one side only. The quartiles say how much the rounds
//! disagreed.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// How long one batch of one side runs.
const BATCH: Duration = Duration::from_micros(400);
/// How many rounds (one batch of each side) make a measurement.
const ROUNDS: usize = 301;
/// How long both sides run before the rounds, to warm caches and
/// predictors.
const WARM_UP: Duration = Duration::from_millis(50);

/// The ratio of two operations' times, over the rounds of one paired
/// measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    /// The median of the rounds' ratios.
    pub median: f64,
    /// The first quartile of the rounds' ratios.
    pub low: f64,
    /// The third quartile of the rounds' ratios.
    pub high: f64,
    /// The median ns per call of each side, in the order they were
    /// measured (`a`, then `b`): what the ratio is made of. [`inverse`]
    /// turns the ratio round, not this.
    ///
    /// [`inverse`]: Ratio::inverse
    pub ns: [f64; 2],
}

impl Ratio {
    /// The same measurement seen from the other side: `b / a` instead of
    /// `a / b`.
    #[must_use]
    pub fn inverse(self) -> Ratio {
        Ratio {
            median: 1.0 / self.median,
            low: 1.0 / self.high,
            high: 1.0 / self.low,
            ns: self.ns,
        }
    }

    /// From the rounds: each one's ns per call of `a` and of `b`, in any
    /// order.
    ///
    /// # Panics
    ///
    /// If `rounds` is empty.
    #[must_use]
    pub fn of(rounds: &[[f64; 2]]) -> Ratio {
        assert!(!rounds.is_empty(), "a ratio needs at least one round");
        let ratios = quartiles(rounds.iter().map(|[a, b]| a / b).collect());
        Ratio {
            median: ratios[1],
            low: ratios[0],
            high: ratios[2],
            ns: [
                quartiles(rounds.iter().map(|round| round[0]).collect())[1],
                quartiles(rounds.iter().map(|round| round[1]).collect())[1],
            ],
        }
    }
}

/// The first quartile, the median and the third quartile of `values`.
fn quartiles(mut values: Vec<f64>) -> [f64; 3] {
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    [at(0.25), at(0.5), at(0.75)]
}

/// Measures `a` against `b`: the ratio of `a`'s time per call to `b`'s, in
/// paired rounds (see the module). Both results are passed through
/// [`black_box`], so neither operation can be optimised away.
pub fn ratio<A, B>(mut a: impl FnMut() -> A, mut b: impl FnMut() -> B) -> Ratio {
    let mut a = move || {
        black_box(a());
    };
    let mut b = move || {
        black_box(b());
    };
    let (per_batch_a, per_batch_b) = (calls_per(&mut a, BATCH), calls_per(&mut b, BATCH));
    let mut rounds = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS {
        let (time_a, time_b) = if round % 2 == 0 {
            let time_a = batch(&mut a, per_batch_a);
            (time_a, batch(&mut b, per_batch_b))
        } else {
            let time_b = batch(&mut b, per_batch_b);
            (batch(&mut a, per_batch_a), time_b)
        };
        let per_call = |time: Duration, calls: u64| time.as_secs_f64() * 1e9 / calls as f64;
        rounds.push([per_call(time_a, per_batch_a), per_call(time_b, per_batch_b)]);
    }
    Ratio::of(&rounds)
}

/// How many calls of `op` take about `span`, measured after a warm-up.
fn calls_per(op: &mut impl FnMut(), span: Duration) -> u64 {
    let start = Instant::now();
    let mut calls = 0_u64;
    while start.elapsed() < WARM_UP {
        for _ in 0..64 {
            op();
        }
        calls += 64;
    }
    let per_call = start.elapsed().as_secs_f64() / calls as f64;
    ((span.as_secs_f64() / per_call) as u64).max(1)
}

/// The time of `calls` calls of `op`.
fn batch(op: &mut impl FnMut(), calls: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..calls {
        op();
    }
    start.elapsed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_come_from_the_sorted_rounds() {
        let rounds = [
            [50.0, 10.0],
            [10.0, 10.0],
            [30.0, 10.0],
            [40.0, 20.0],
            [20.0, 5.0],
        ];
        let ratio = Ratio::of(&rounds);
        assert_eq!(
            ratio,
            Ratio {
                median: 3.0,
                low: 2.0,
                high: 4.0,
                ns: [30.0, 10.0],
            }
        );
        let inverse = ratio.inverse();
        assert_eq!(inverse.median, 1.0 / 3.0);
        assert_eq!((inverse.low, inverse.high), (0.25, 0.5));
        assert_eq!(inverse.ns, [30.0, 10.0]);
    }
}
