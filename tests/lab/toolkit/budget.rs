//! The retry budget on its own (Q1, Q3-Q5): provided, like the clocks, so
//! these pass from the start. How a policy's calls draw on it is step 6's.

use std::sync::Barrier;
use std::time::Duration;

use proptest::prelude::*;
use retry_breaker::{ConfigError, RetryBudget};

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// A budget over `window` with no floor that earns `percent` retries per
/// 100 calls.
fn share(window: Duration, percent: u32) -> RetryBudget {
    RetryBudget::new(window, 0, percent).expect("a valid budget")
}

fn deposit(budget: &RetryBudget, now: Duration, calls: u32) {
    for _ in 0..calls {
        budget.deposit(now);
    }
}

#[test]
fn q1_a_budget_allows_its_floor_plus_its_share_of_the_calls_rounded_down() {
    let budget = RetryBudget::new(secs(10), 2, 20).unwrap();
    assert_eq!(
        budget.available(secs(0)),
        20,
        "Q1: 2 retries a second over 10 s, before any call"
    );
    deposit(&budget, secs(0), 4);
    assert_eq!(
        budget.available(secs(0)),
        20,
        "Q1: 20% of 4 calls is 0.8 retries, rounded down to none"
    );
    deposit(&budget, secs(0), 6);
    assert_eq!(budget.available(secs(0)), 22, "Q1: 20% of 10 calls is 2");
    for spent in 0..22 {
        assert!(
            budget.withdraw(secs(0)),
            "Q2: retry {} of 22 is within the budget",
            spent + 1
        );
    }
    assert!(!budget.withdraw(secs(0)), "Q2: a 23rd retry is not");
    assert_eq!(budget.available(secs(0)), 0);
    assert!(
        !budget.withdraw(secs(0)),
        "Q2: a refused retry spends nothing, and is refused again"
    );
}

#[test]
fn q1_the_floor_is_the_retries_per_second_over_the_window_rounded_down() {
    let budget = RetryBudget::new(Duration::from_millis(1_500), 1, 0).unwrap();
    assert_eq!(budget.available(secs(0)), 1, "Q1: 1 a second over 1.5 s");
    let budget = RetryBudget::new(Duration::from_millis(999), 1, 0).unwrap();
    assert_eq!(budget.available(secs(0)), 0, "Q1: 1 a second over 0.999 s");
    let budget = RetryBudget::new(secs(10), 0, 250).unwrap();
    deposit(&budget, secs(0), 2);
    assert_eq!(
        budget.available(secs(0)),
        5,
        "Q1: a share above 100% lets each call retry more than once"
    );
    let budget = RetryBudget::new(secs(10), 0, 0).unwrap();
    deposit(&budget, secs(0), 1_000);
    assert!(
        !budget.withdraw(secs(0)),
        "Q1: no floor and no share: no retry at all"
    );
}

#[test]
fn q3_a_call_counts_until_its_slot_leaves_the_window() {
    // Ten slots of one second: a call at 0.999 s is in the first.
    let budget = share(secs(10), 100);
    budget.deposit(Duration::from_millis(999));
    let last = secs(10) - Duration::from_nanos(1);
    assert_eq!(
        budget.available(last),
        1,
        "Q3: a call in the window's first slot still counts 1 ns before the window's end"
    );
    assert_eq!(
        budget.available(secs(10)),
        0,
        "Q3: the window after the call's slot began, the call no longer counts"
    );
}

#[test]
fn q3_a_spent_retry_comes_back_when_its_slot_leaves_the_window() {
    let budget = RetryBudget::new(secs(10), 1, 0).unwrap();
    for _ in 0..10 {
        assert!(budget.withdraw(Duration::from_millis(500)));
    }
    assert!(
        !budget.withdraw(secs(9)),
        "Q3: the retries of the first slot still count at 9 s"
    );
    assert_eq!(
        budget.available(secs(10)),
        10,
        "Q3: the retries of the first slot leave the window at 10 s"
    );
}

#[test]
fn q3_slots_leave_one_by_one_as_the_window_moves() {
    // One call in each of the first ten slots, one retry each: 100% lets
    // every call pay for its own.
    let budget = share(secs(10), 100);
    for slot in 0..10 {
        budget.deposit(secs(slot));
        assert!(budget.withdraw(secs(slot)));
    }
    // A late call in the newest slot earns one more.
    budget.deposit(secs(9));
    for slot in 10..19 {
        assert_eq!(
            budget.available(secs(slot)),
            1,
            "Q3: at {slot} s the slot of {} s has left, its call and its retry together; the \
             late call's retry stays until its own slot leaves",
            slot - 10
        );
    }
    assert_eq!(
        budget.available(secs(19)),
        0,
        "Q3: at 19 s the window's ten slots are 10-19 s: the late call (9 s) has left it"
    );
}

#[test]
fn q3_a_long_silence_empties_the_window_and_leaves_the_floor() {
    let budget = RetryBudget::new(secs(10), 1, 50).unwrap();
    deposit(&budget, secs(3), 8);
    for _ in 0..14 {
        assert!(budget.withdraw(secs(3)));
    }
    assert!(!budget.withdraw(secs(3)), "Q1: 10 + 4 retries, all spent");
    assert_eq!(
        budget.available(secs(3_600)),
        10,
        "Q3: an hour later only the floor is left, with every slot emptied"
    );
    assert_eq!(
        budget.available(secs(25)),
        10,
        "Q3: a reading from before the newest one counts in the newest slot"
    );
}

/// A race: real threads withdraw from one budget at once. Not graded: on a wrong crate its
/// verdict can change from run to run, and a grade must not; `just test` runs it.
#[test]
fn q4_many_threads_asking_at_once_never_spend_more_than_the_budget() {
    let budget = RetryBudget::new(secs(10), 0, 100).unwrap();
    deposit(&budget, secs(0), 3);
    let start = Barrier::new(8);
    let granted: usize = std::thread::scope(|scope| {
        let askers: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    start.wait();
                    (0..4).filter(|_| budget.withdraw(secs(0))).count()
                })
            })
            .collect();
        askers.into_iter().map(|asker| asker.join().unwrap()).sum()
    });
    assert_eq!(
        granted, 3,
        "Q4: 32 retries asked for at once, 3 in the budget"
    );
}

#[test]
fn q5_a_window_under_10_ns_is_a_configuration_error() {
    let error = RetryBudget::new(Duration::from_nanos(9), 1, 20).unwrap_err();
    assert_eq!(
        error,
        ConfigError::BudgetWindowTooShort {
            window: Duration::from_nanos(9)
        }
    );
    let message = error.to_string();
    assert!(
        message.contains("at least 10 ns") && message.contains("9ns"),
        "Q5: the error says what the least window is and what was asked: {message}"
    );
    assert!(RetryBudget::new(Duration::from_nanos(10), 1, 20).is_ok());
    assert!(RetryBudget::new(Duration::ZERO, 0, 0).is_err());
}

#[test]
fn q5_extreme_settings_and_times_neither_panic_nor_wrap() {
    let budget = RetryBudget::new(Duration::MAX, u32::MAX, u32::MAX).unwrap();
    assert_eq!(budget.window(), Duration::MAX);
    budget.deposit(Duration::MAX);
    assert_eq!(budget.available(Duration::MAX), u64::MAX);
    assert!(budget.withdraw(Duration::MAX));
    let budget = RetryBudget::new(Duration::from_nanos(10), 0, u32::MAX).unwrap();
    budget.deposit(Duration::MAX);
    assert_eq!(
        budget.available(Duration::MAX),
        u64::from(u32::MAX) / 100,
        "Q1: one call at the end of time earns its share"
    );
}

#[test]
fn a_budget_debugs_with_its_settings_and_counts() {
    let budget = RetryBudget::new(secs(10), 1, 20).unwrap();
    deposit(&budget, secs(0), 2);
    let shown = format!("{budget:?}");
    for part in [
        "RetryBudget",
        "window: 10s",
        "floor: 10",
        "percent: 20",
        "calls: 2",
    ] {
        assert!(shown.contains(part), "a budget debugs with {part}: {shown}");
    }
}

/// One step of a run against a budget: the time moves on by `after` ns,
/// then a call is counted, a retry asked for, or what is left read.
#[derive(Debug, Clone, Copy)]
enum Step {
    Call,
    Retry,
    Read,
}

/// What a budget must answer, from a plain list of every call and retry:
/// those whose slot is one of the window's ten count.
struct Model {
    slot: u128,
    floor: u64,
    percent: u64,
    events: Vec<(u128, Step)>,
}

impl Model {
    fn left(&self, now: Duration) -> u64 {
        let newest = now.as_nanos() / self.slot;
        let counted = |kind: fn(&Step) -> bool| {
            self.events
                .iter()
                .filter(|(slot, step)| slot + 10 > newest && kind(step))
                .count() as u64
        };
        let calls = counted(|step| matches!(step, Step::Call));
        let retries = counted(|step| matches!(step, Step::Retry));
        (self.floor + calls * self.percent / 100).saturating_sub(retries)
    }
}

fn run_against_the_model(
    window_ns: u64,
    per_second: u32,
    percent: u32,
    steps: &[(u64, Step)],
) -> Result<(), String> {
    let window = Duration::from_nanos(window_ns);
    let budget = RetryBudget::new(window, per_second, percent).unwrap();
    let mut model = Model {
        slot: u128::from(window_ns / 10),
        floor: (u128::from(per_second) * u128::from(window_ns) / 1_000_000_000) as u64,
        percent: u64::from(percent),
        events: Vec::new(),
    };
    let mut now = Duration::ZERO;
    for (index, &(after, step)) in steps.iter().enumerate() {
        now += Duration::from_nanos(after);
        let slot = now.as_nanos() / model.slot;
        let expected = model.left(now);
        let (answer, wanted) = match step {
            Step::Call => {
                budget.deposit(now);
                model.events.push((slot, step));
                continue;
            }
            Step::Retry => {
                let granted = budget.withdraw(now);
                if expected > 0 {
                    model.events.push((slot, step));
                }
                (u64::from(granted), u64::from(expected > 0))
            }
            Step::Read => (budget.available(now), expected),
        };
        if answer != wanted {
            return Err(format!(
                "Q1-Q3: step {index} ({step:?} at {now:?}) answered {answer}, but the window's \
                 calls and retries allow {wanted} (1 or 0 for a retry: granted or not)"
            ));
        }
    }
    Ok(())
}

#[test]
fn q1_q3_a_budget_answers_as_a_plain_list_of_every_call_and_retry_would() {
    let step = prop_oneof![Just(Step::Call), Just(Step::Retry), Just(Step::Read)];
    crate::step10_explore::explore(
        "the retry budget did not answer",
        (
            10_u64..200,
            // Floors of 0 to a few retries over windows of 10-200 ns.
            prop_oneof![Just(0_u32), 10_000_000_u32..60_000_000],
            0_u32..300,
            proptest::collection::vec((0_u64..40, step), 0..120),
        ),
        |(window_ns, per_second, percent, steps)| {
            run_against_the_model(*window_ns, *per_second, *percent, steps)
        },
    );
}
