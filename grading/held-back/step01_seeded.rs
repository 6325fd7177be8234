//! Held back from the student edition: no tests, only the per-student seed
//! that every other held-back module draws its parameters from. (Its name
//! starts with `step01_` because every held-back file must; having no tests,
//! it adds nothing to step 1's score. The other held-back modules use it,
//! so keep it with them.)
//!
//! The grader sets `LAB_STUDENT_SEED` (a decimal `u64`) for every test
//! process; without it the seed is 0. Each test mixes the seed with its own
//! name, so two tests of one student draw different values and one test
//! draws different values for two students, and the same seed always draws
//! the same values: the verdict of a run is a function of the code and the
//! seed alone (E9). Every value drawn is valid for the contract (a
//! threshold of at least 1, a budget of at least 1, ...); each test states
//! the values it drew in its failure messages.

use std::time::Duration;

/// The variable the grader sets.
pub const VARIABLE: &str = "LAB_STUDENT_SEED";

/// The student's seed: `LAB_STUDENT_SEED`, or 0 when it is unset or empty.
/// Anything else is a mistake of the grader's, said plainly.
pub fn student_seed() -> u64 {
    match std::env::var(VARIABLE) {
        Ok(text) if !text.trim().is_empty() => text.trim().parse().unwrap_or_else(|_| {
            panic!("{VARIABLE}={text:?} is not a decimal u64; set a number, or nothing for 0")
        }),
        _ => 0,
    }
}

/// A SplitMix64 stream seeded by the student's seed and a test's name.
pub struct Draw {
    state: u64,
}

impl Draw {
    /// The stream of the test called `test` (any string unique to it).
    pub fn new(test: &str) -> Draw {
        // FNV-1a of the name, so that every test draws its own values.
        let mut name = 0xCBF2_9CE4_8422_2325_u64;
        for byte in test.bytes() {
            name = (name ^ u64::from(byte)).wrapping_mul(0x0100_0000_01B3);
        }
        let mut draw = Draw {
            state: student_seed() ^ name,
        };
        draw.next();
        draw
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `low..=high`.
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        assert!(low <= high, "an empty range {low}..={high}");
        let span = u128::from(high - low) + 1;
        low + u64::try_from((u128::from(self.next()) * span) >> 64).expect("below the span")
    }

    /// A count (a threshold, a budget, an attempt number) in `low..=high`.
    pub fn count(&mut self, low: u32, high: u32) -> u32 {
        u32::try_from(self.range(u64::from(low), u64::from(high))).expect("within u32")
    }

    /// Whole milliseconds in `low..=high`.
    pub fn millis(&mut self, low: u64, high: u64) -> Duration {
        Duration::from_millis(self.range(low, high))
    }

    /// Any duration in `low..=high`, to the nanosecond.
    pub fn duration(&mut self, low: Duration, high: Duration) -> Duration {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).expect("a few centuries at most");
        Duration::from_nanos(self.range(nanos(low), nanos(high)))
    }

    /// True `numerator` times in `denominator`.
    pub fn chance(&mut self, numerator: u64, denominator: u64) -> bool {
        self.range(1, denominator) <= numerator
    }

    /// One of `items`.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        let last = u64::try_from(items.len() - 1).expect("a short list");
        items[usize::try_from(self.range(0, last)).expect("an index")]
    }

    /// `items` in a random order (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j =
                usize::try_from(self.range(0, u64::try_from(i).expect("short"))).expect("an index");
            items.swap(i, j);
        }
    }
}
