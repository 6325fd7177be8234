//! The prediction questions of steps 1-8, each drawn per student from a
//! seed, and what really happens in each.
//!
//! Each question keeps the idea of its step's "Predict, then run" paragraph
//! in LAB.md, with numbers of the student's own, so two students rarely get
//! the same one. The true answer comes from a small evaluator written in
//! the question's own terms (a list of outcomes, a timeline in
//! milliseconds), never in the crate's types: it says what the rules imply
//! for this one scenario and is no code to paste into a TODO.

/// How a question is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// Whole numbers, as many as there are names, in that order.
    Numbers(&'static [&'static str]),
    /// One word among these.
    Choice(&'static [&'static str]),
}

/// One student's question for one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Question {
    pub step: u32,
    /// The drawn parameters, one line, as `predictions.toml` records them.
    pub parameters: String,
    /// The question as printed.
    pub text: String,
    pub form: Form,
    /// What really happens, in the canonical form of an answer.
    pub truth: String,
}

/// The steps that have a question.
pub(crate) const STEPS: [u32; 8] = [1, 2, 3, 4, 5, 6, 7, 8];

/// Step `step`'s question for the student whose seed is `seed`.
pub(crate) fn ask(step: u32, seed: u64) -> Option<Question> {
    // Each step draws from a stream of its own, so one step's question does
    // not move when another step's draws change.
    let mut draw = Draw(seed ^ u64::from(step).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let (parameters, text, form, truth) = match step {
        1 => consecutive_failures(&mut draw),
        2 => probe_at_deadline(&mut draw),
        3 => generations(&mut draw),
        4 => dropped_permit(&mut draw),
        5 => backoff_cap(&mut draw),
        6 => a_budget_and_its_sleeps(&mut draw),
        7 => refused_against_a_dead_dependency(&mut draw),
        8 => cancellation(&mut draw),
        _ => return None,
    };
    Some(Question {
        step,
        parameters,
        text,
        form,
        truth,
    })
}

/// Reads a student's answer to a question of this form, in its canonical
/// form (`3 2`, `half-open`), or says what was expected.
pub(crate) fn parse_answer(form: Form, input: &str) -> Result<String, String> {
    let input = input.trim();
    match form {
        Form::Numbers(names) => {
            let parts: Vec<&str> = input
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|part| !part.is_empty())
                .collect();
            let expected = if names.len() == 1 {
                format!("one whole number ({})", names[0])
            } else {
                format!(
                    "{} whole numbers, in this order: {}",
                    names.len(),
                    names.join(", ")
                )
            };
            if parts.len() != names.len() {
                return Err(format!("`{input}` is not an answer: expected {expected}"));
            }
            let numbers: Result<Vec<u64>, _> = parts.iter().map(|part| part.parse()).collect();
            let numbers =
                numbers.map_err(|_| format!("`{input}` is not an answer: expected {expected}"))?;
            Ok(numbers
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(" "))
        }
        Form::Choice(words) => {
            let wanted = input.to_ascii_lowercase().replace(['_', ' '], "-");
            words
                .iter()
                .find(|word| **word == wanted || word.replace('-', "") == wanted)
                .map(|word| (*word).to_owned())
                .ok_or_else(|| {
                    format!(
                        "`{input}` is not an answer: expected one of {}",
                        words.join(", ")
                    )
                })
        }
    }
}

/// What to type, for the prompt.
pub(crate) fn how_to_answer(form: Form) -> String {
    match form {
        Form::Numbers([name]) => format!("one whole number: {name}"),
        Form::Numbers(names) => format!(
            "{} whole numbers separated by a space: {}",
            names.len(),
            names.join(", then ")
        ),
        Form::Choice(words) => format!("one of: {}", words.join(", ")),
    }
}

/// SplitMix64: a tiny generator whose sequence never changes between Rust
/// releases or machines, so a student's question is the same everywhere.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number from `low` to `high`, both included.
    fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low + 1)
    }

    /// True with odds `numerator` in `denominator`.
    fn chance(&mut self, numerator: u64, denominator: u64) -> bool {
        self.next() % denominator < numerator
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.next() as usize % items.len()]
    }
}

type Drawn = (String, String, Form, String);

/// Step 1: when do consecutive failures first reach the threshold?
fn consecutive_failures(draw: &mut Draw) -> Drawn {
    let threshold = draw.range(2, 5);
    let length = draw.range(threshold + 2, threshold + 5);
    let failed: Vec<bool> = (0..length).map(|_| draw.chance(2, 3)).collect();
    let letters: String = failed.iter().map(|&f| if f { 'F' } else { 'S' }).collect();
    let truth = first_run_of(&failed, threshold);
    let text = format!(
        "Threshold {threshold}; the circuit starts CLOSED with a count of 0. Attempts report \
         these outcomes, in order (F = failure, S = success): {letters}. After which outcome \
         (counting from 1) is the circuit OPEN for the first time? Answer 0 if it is still \
         CLOSED after the last one."
    );
    (
        format!("threshold={threshold} outcomes={letters}"),
        text,
        Form::Numbers(&["the outcome that opens it, or 0"]),
        truth.to_string(),
    )
}

/// The position (from 1) in `failed` where `threshold` failures in a row
/// are first reached, 0 if they never are.
fn first_run_of(failed: &[bool], threshold: u64) -> usize {
    let mut run = 0;
    for (index, &failure) in failed.iter().enumerate() {
        run = if failure { run + 1 } else { 0 };
        if run == threshold {
            return index + 1;
        }
    }
    0
}

/// Step 2: which attempt, around the deadline, becomes the probe?
fn probe_at_deadline(draw: &mut Draw) -> Drawn {
    let cooldown_ms = draw.range(5, 60);
    let deadline_us = cooldown_ms * 1000;
    let count = draw.range(3, 5);
    // Times in microseconds: some well before the deadline, one a hair
    // before it, some exactly at it, some after.
    let mut times: Vec<u64> = (0..count)
        .map(|_| match draw.range(0, 3) {
            0 => draw.range(1, deadline_us - 2),
            1 => deadline_us - 1,
            2 => deadline_us,
            _ => deadline_us + draw.range(1, 5) * 1000,
        })
        .collect();
    times.sort_unstable();
    let shown: Vec<String> = times.iter().map(|&t| milliseconds(t)).collect();
    let truth = times
        .iter()
        .position(|&t| t >= deadline_us)
        .map_or(0, |at| at + 1);
    let text = format!(
        "Threshold 1, cooldown {cooldown_ms} ms. A failure at t = 0 opens the circuit. Then \
         attempts ask for a permit at t = {} ms, in this order; none of them reports before the \
         last one has asked. Which attempt (counting from 1) is admitted as the probe? Answer 0 \
         if none is.",
        shown.join(", ")
    );
    (
        format!("cooldown_ms={cooldown_ms} asks_us={}", join(&times)),
        text,
        Form::Numbers(&["the attempt admitted as the probe, or 0"]),
        truth.to_string(),
    )
}

/// `t` microseconds as milliseconds, with only the decimals it needs.
fn milliseconds(t: u64) -> String {
    let whole = t / 1000;
    let fraction = t % 1000;
    if fraction == 0 {
        whole.to_string()
    } else {
        format!("{whole}.{fraction:03}")
            .trim_end_matches('0')
            .to_owned()
    }
}

fn join(numbers: &[u64]) -> String {
    numbers
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// What happens to a circuit, as step 3's question tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    /// While CLOSED.
    Success,
    Failure,
    DroppedUnreported,
    /// While OPEN.
    AskBeforeDeadline,
    AskAtDeadline,
    /// While HALF-OPEN, the probe out.
    AskWhileProbing,
    ProbeSucceeds,
    ProbeFails,
    LateSuccess,
}

impl Event {
    fn letter(self) -> char {
        match self {
            Event::Success => 's',
            Event::Failure => 'f',
            Event::DroppedUnreported => 'd',
            Event::AskBeforeDeadline => 'b',
            Event::AskAtDeadline => 'a',
            Event::AskWhileProbing => 'w',
            Event::ProbeSucceeds => 'P',
            Event::ProbeFails => 'X',
            Event::LateSuccess => 'l',
        }
    }

    fn told(self) -> &'static str {
        match self {
            Event::Success => "a success",
            Event::Failure => "a failure",
            Event::DroppedUnreported => "a permit dropped unreported, without a panic",
            Event::AskBeforeDeadline => "an attempt asks before the deadline",
            Event::AskAtDeadline => "an attempt asks at the deadline",
            Event::AskWhileProbing => "another attempt asks while the probe is out",
            Event::ProbeSucceeds => "the probe reports a success",
            Event::ProbeFails => "the probe reports a failure",
            Event::LateSuccess => {
                "a success arrives from an attempt admitted before the circuit opened"
            }
        }
    }
}

/// Step 3: how many new generations does a story of events start?
fn generations(draw: &mut Draw) -> Drawn {
    #[derive(Clone, Copy)]
    enum At {
        Closed(u64),
        Open,
        HalfOpen,
    }
    let threshold = draw.range(1, 3);
    let length = draw.range(6, 9);
    let mut at = At::Closed(0);
    let mut events = Vec::new();
    for _ in 0..length {
        let event = match at {
            At::Closed(_) => draw.pick(&[
                Event::Failure,
                Event::Failure,
                Event::Success,
                Event::DroppedUnreported,
            ]),
            At::Open => draw.pick(&[Event::AskBeforeDeadline, Event::AskAtDeadline]),
            At::HalfOpen => draw.pick(&[
                Event::AskWhileProbing,
                Event::ProbeSucceeds,
                Event::ProbeFails,
                Event::LateSuccess,
            ]),
        };
        at = match (at, event) {
            (At::Closed(count), Event::Failure) if count + 1 == threshold => At::Open,
            (At::Closed(count), Event::Failure) => At::Closed(count + 1),
            (At::Closed(_), Event::Success) => At::Closed(0),
            (At::Open, Event::AskAtDeadline) => At::HalfOpen,
            (At::HalfOpen, Event::ProbeSucceeds) => At::Closed(0),
            (At::HalfOpen, Event::ProbeFails) => At::Open,
            (same, _) => same,
        };
        events.push(event);
    }
    let truth = new_generations(&events, threshold);
    let told: Vec<String> = events
        .iter()
        .enumerate()
        .map(|(index, event)| format!("({}) {}", index + 1, event.told()))
        .collect();
    let text = format!(
        "Threshold {threshold}. The circuit starts CLOSED with a count of 0; then, in order: {}. \
         How many new generations start during this story?",
        told.join("; ")
    );
    (
        format!(
            "threshold={threshold} events={}",
            events.iter().map(|e| e.letter()).collect::<String>()
        ),
        text,
        Form::Numbers(&["the number of new generations"]),
        truth.to_string(),
    )
}

/// The events of the story that change the circuit's state: the failure
/// that makes `threshold` in a row since the last closing or success, the
/// attempt at the deadline, and the probe's verdict. Each starts a
/// generation; nothing else does.
fn new_generations(events: &[Event], threshold: u64) -> usize {
    let mut in_a_row = 0;
    let mut started = 0;
    for event in events {
        match event {
            Event::Failure => {
                in_a_row += 1;
                if in_a_row == threshold {
                    started += 1;
                }
            }
            Event::Success | Event::ProbeSucceeds => {
                in_a_row = 0;
                started += usize::from(*event == Event::ProbeSucceeds);
            }
            Event::AskAtDeadline | Event::ProbeFails => started += 1,
            Event::DroppedUnreported
            | Event::AskBeforeDeadline
            | Event::AskWhileProbing
            | Event::LateSuccess => {}
        }
    }
    started
}

const STATES: &[&str] = &["closed", "open", "half-open"];

/// Step 4: where does a permit dropped without a report leave the circuit?
fn dropped_permit(draw: &mut Draw) -> Drawn {
    let threshold = draw.range(1, 4);
    let panics = draw.chance(1, 2);
    let how = if panics {
        "while the attempt's code panics"
    } else {
        "without a panic (a timeout around the call fired)"
    };
    let probe = draw.chance(1, 2);
    let (parameters, story, truth) = if probe {
        (
            format!("threshold={threshold} probe=yes panics={panics}"),
            format!(
                "Threshold {threshold}. The circuit is HALF-OPEN, its probe out; the probe's \
                 permit is dropped {how}."
            ),
            if panics { "open" } else { "half-open" },
        )
    } else {
        let count = draw.range(0, threshold - 1);
        (
            format!("threshold={threshold} probe=no count={count} panics={panics}"),
            format!(
                "Threshold {threshold}. The circuit is CLOSED with {count} consecutive \
                 failure(s); an attempt admitted now has its permit dropped {how}."
            ),
            if panics && count + 1 == threshold {
                "open"
            } else {
                "closed"
            },
        )
    };
    (
        parameters,
        format!("{story} Which state is the circuit in right after?"),
        Form::Choice(STATES),
        truth.to_owned(),
    )
}

/// Step 5: from which attempt on does an exponential backoff wait the cap?
fn backoff_cap(draw: &mut Draw) -> Drawn {
    let base = draw.pick(&[1, 2, 3, 5, 10, 20, 25, 50]);
    let cap = if draw.chance(1, 3) {
        base << draw.range(1, 12)
    } else {
        base * draw.range(3, 5000)
    };
    let text = format!(
        "`exponential({base} ms, {cap} ms)`: after which attempt (counting from 1) does the \
         backoff wait exactly the cap for the first time?"
    );
    (
        format!("base_ms={base} cap_ms={cap}"),
        text,
        Form::Numbers(&["the attempt"]),
        first_capped_attempt(base, cap).to_string(),
    )
}

/// The first attempt after which `base`, doubled once per further failed
/// attempt, is at least `cap`.
fn first_capped_attempt(base: u64, cap: u64) -> u64 {
    let (mut attempt, mut wait) = (1, base);
    while wait < cap {
        wait *= 2;
        attempt += 1;
    }
    attempt
}

/// Step 6: how far does a retrying call get, and how long does it sleep?
fn a_budget_and_its_sleeps(draw: &mut Draw) -> Drawn {
    let budget = draw.range(2, 6);
    // The attempt whose error is not retryable; past the budget, none is.
    let stops = draw.range(1, budget + 2);
    let step = draw.pick(&[5, 10, 20, 30]);
    let (attempts, slept) = budget_and_sleeps(budget, stops, step);
    let failing = if stops > budget {
        "fails every attempt with a retryable error".to_owned()
    } else {
        format!(
            "fails with a retryable error, except attempt {stops}, which fails with an error that              is not retryable"
        )
    };
    let text = format!(
        "A budget of {budget} attempts, a breaker whose threshold is far away, a dependency that          {failing}, and a backoff of {step} ms × n after the n-th failed attempt. How many          attempts reach the dependency, and how many milliseconds does the call sleep in all?"
    );
    (
        format!("budget={budget} not_retryable_at={stops} backoff_ms={step}"),
        text,
        Form::Numbers(&["attempts that reach the dependency", "milliseconds slept"]),
        format!("{attempts} {slept}"),
    )
}

/// One call that fails every attempt until the budget is spent or attempt
/// `stops` fails with an error that is not retryable; a sleep of `step × n`
/// follows the n-th failure when another attempt comes.
fn budget_and_sleeps(budget: u64, stops: u64, step: u64) -> (u64, u64) {
    let attempts = budget.min(stops);
    (attempts, (1..attempts).map(|n| step * n).sum())
}

/// Step 7: which attempt does a dead dependency's open circuit refuse, and
/// what does the refusal carry?
fn refused_against_a_dead_dependency(draw: &mut Draw) -> Drawn {
    let threshold = draw.range(1, 4);
    let cooldown = draw.pick(&[20, 50, 100]);
    let budget = threshold + draw.range(1, 4);
    let step = draw.pick(&[5, 10, 20, 30]);
    let (attempts, refused) = dead_dependency(threshold, cooldown, budget, step);
    let (refused, carried) = if refused {
        (attempts + 1, attempts)
    } else {
        (0, 0)
    };
    let text = format!(
        "Threshold {threshold}, cooldown {cooldown} ms, a budget of {budget} attempts, a          dependency that fails every call at once with a retryable error, and a backoff of          {step} ms × n after the n-th failed attempt; the clock moves only while the loop          sleeps. Which attempt does the breaker refuse, and which attempt's error does that          refusal carry? (0 and 0 if no attempt is refused.)"
    );
    (
        format!("threshold={threshold} cooldown_ms={cooldown} budget={budget} backoff_ms={step}"),
        text,
        Form::Numbers(&["the refused attempt", "the attempt whose error it carries"]),
        format!("{refused} {carried}"),
    )
}

/// The timeline of one call, in milliseconds: every attempt fails at once;
/// the circuit opens when `threshold` fail in a row (or a probe fails) and
/// lets one attempt through again `cooldown` later; a sleep of `step × n`
/// follows the n-th failure unless the budget is spent; an attempt that
/// finds the circuit open ends the call. Returns the attempts that reached
/// the dependency, and whether the call ended refused.
fn dead_dependency(threshold: u64, cooldown: u64, budget: u64, step: u64) -> (u64, bool) {
    let (mut now, mut in_a_row, mut open_until) = (0, 0, None);
    let mut attempts = 0;
    for n in 1..=budget {
        let probing = match open_until {
            Some(until) if now < until => return (attempts, true),
            Some(_) => true,
            None => false,
        };
        attempts += 1;
        in_a_row += 1;
        open_until = if probing || in_a_row == threshold {
            Some(now + cooldown)
        } else {
            None
        };
        now += step * n;
    }
    (attempts, false)
}

/// Step 8: how far does a call get when its token is cancelled midway?
fn cancellation(draw: &mut Draw) -> Drawn {
    let budget = draw.range(2, 5);
    let threshold = draw.range(2, 6);
    let attempt_ms = draw.pick(&[10, 20, 30]);
    let backoff_ms = draw.pick(&[5, 10, 15]);
    let span = budget * attempt_ms + (budget - 1) * backoff_ms;
    // Never on a boundary: the question is about during, not at.
    let cancel_tenths = draw.range(0, span - 1) * 10 + 5;
    let cancel = format!("{}.5", cancel_tenths / 10);
    let (attempts, sleeps) =
        cancelled_call(budget, threshold, attempt_ms, backoff_ms, cancel_tenths);
    let text = format!(
        "A budget of {budget} attempts, threshold {threshold}, a long cooldown, a dependency \
         whose every attempt times out after {attempt_ms} ms (a retryable error), a constant \
         backoff of {backoff_ms} ms, and the token cancelled at t = {cancel} ms (the call starts \
         at t = 0). How many attempts reach the dependency, and how many sleeps are asked for?"
    );
    (
        format!(
            "budget={budget} threshold={threshold} attempt_ms={attempt_ms} backoff_ms={backoff_ms} \
             cancel_tenths_ms={cancel_tenths}"
        ),
        text,
        Form::Numbers(&["attempts that reach the dependency", "sleeps asked for"]),
        format!("{attempts} {sleeps}"),
    )
}

/// The timeline of one call, in tenths of a millisecond: before each
/// attempt the call ends if the token is cancelled or the circuit is open
/// (it opens at `threshold` failures in a row, for longer than the call);
/// an attempt runs its whole `attempt_ms`; after a failure with budget
/// left, a cancellation that came during the attempt ends the call before
/// any sleep is asked for, and one during the sleep ends it at once.
fn cancelled_call(
    budget: u64,
    threshold: u64,
    attempt_ms: u64,
    backoff_ms: u64,
    cancel_tenths: u64,
) -> (u64, u64) {
    let (mut now, mut in_a_row) = (0, 0);
    let (mut attempts, mut sleeps) = (0, 0);
    for n in 1..=budget {
        if cancel_tenths < now || in_a_row >= threshold {
            break;
        }
        attempts += 1;
        in_a_row += 1;
        now += attempt_ms * 10;
        if n == budget || cancel_tenths < now {
            break;
        }
        sleeps += 1;
        now += backoff_ms * 10;
        if cancel_tenths < now {
            break;
        }
    }
    (attempts, sleeps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_students_get_different_questions_and_one_student_the_same_twice() {
        let (ada, bob) = (
            crate::grading::grade::fnv1a("ada"),
            crate::grading::grade::fnv1a("bob"),
        );
        for step in STEPS {
            assert_eq!(ask(step, ada), ask(step, ada), "step {step}");
        }
        let differ = STEPS
            .iter()
            .filter(|&&step| {
                ask(step, ada).unwrap().parameters != ask(step, bob).unwrap().parameters
            })
            .count();
        assert!(differ >= 7, "only {differ} of 8 questions differ");
        // Across a class, the answers spread too: no step has one answer for all.
        for step in STEPS {
            let answers: std::collections::BTreeSet<String> = (0..40)
                .map(|student| {
                    ask(step, crate::grading::grade::fnv1a(&format!("s{student}")))
                        .unwrap()
                        .truth
                })
                .collect();
            assert!(answers.len() > 1, "step {step} always answers {answers:?}");
        }
        assert_eq!(ask(9, ada), None);
    }

    #[test]
    fn the_evaluators_say_what_the_rules_imply() {
        // LAB.md's own example: F F S F F with threshold 3 stays closed.
        assert_eq!(first_run_of(&[true, true, false, true, true], 3), 0);
        assert_eq!(first_run_of(&[true, true, false, true, true, true], 3), 6);
        // A budget of 4 spent, 10 ms × n: sleeps of 10, 20 and 30, none
        // after the last attempt.
        assert_eq!(budget_and_sleeps(4, 5, 10), (4, 60));
        // Attempt 2's error is not retryable: it ends the call there.
        assert_eq!(budget_and_sleeps(4, 2, 10), (2, 10));
        assert_eq!(budget_and_sleeps(3, 1, 10), (1, 0));
        // Threshold 2, cooldown 100, budget 5, 10 ms × n: attempt 3 is
        // refused and carries attempt 2's error.
        assert_eq!(dead_dependency(2, 100, 5, 10), (2, true));
        // The budget ends the call before the circuit opens.
        assert_eq!(dead_dependency(5, 100, 3, 10), (3, false));
        // Sleeps long enough for the cooldown: the third attempt probes,
        // and once the sleeps outlast the cooldown every retry is a probe.
        assert_eq!(dead_dependency(2, 20, 3, 30), (3, false));
        assert_eq!(dead_dependency(2, 20, 4, 30), (4, false));
        // Cancelled during attempt 2 of 3: it decides, then no sleep.
        assert_eq!(cancelled_call(3, 9, 10, 5, 155), (2, 1));
        // Cancelled during the first sleep: it was asked for.
        assert_eq!(cancelled_call(3, 9, 10, 5, 125), (1, 1));
        // The circuit opens at attempt 2 before the token is cancelled.
        assert_eq!(cancelled_call(4, 2, 10, 5, 395), (2, 2));
        assert_eq!(first_capped_attempt(10, 80), 4);
        assert_eq!(first_capped_attempt(10, 81), 5);
        assert_eq!(first_capped_attempt(10, 10), 1);
        use Event::*;
        let story = [
            Failure,
            AskBeforeDeadline,
            AskAtDeadline,
            LateSuccess,
            ProbeFails,
        ];
        assert_eq!(new_generations(&story, 1), 3);
        let story = [Failure, Success, Failure, DroppedUnreported, Failure];
        assert_eq!(new_generations(&story, 2), 1);
        assert_eq!(milliseconds(9_999), "9.999");
        assert_eq!(milliseconds(10_000), "10");
        assert_eq!(milliseconds(10_500), "10.5");
    }

    #[test]
    fn answers_are_read_in_their_form_and_anything_else_is_refused() {
        let two = Form::Numbers(&["attempts", "sleeps"]);
        assert_eq!(parse_answer(two, " 3, 2 ").unwrap(), "3 2");
        assert_eq!(parse_answer(two, "3 2").unwrap(), "3 2");
        for bad in ["", "3", "3 2 1", "three two", "-1 2", "3.5 2"] {
            let error = parse_answer(two, bad).unwrap_err();
            assert!(error.contains("attempts, sleeps"), "{bad:?}: {error}");
        }
        let states = Form::Choice(STATES);
        assert_eq!(parse_answer(states, "Half_Open").unwrap(), "half-open");
        assert_eq!(parse_answer(states, "halfopen").unwrap(), "half-open");
        assert_eq!(parse_answer(states, "OPEN").unwrap(), "open");
        assert!(
            parse_answer(states, "ajar")
                .unwrap_err()
                .contains("closed, open, half-open")
        );
        // Every drawn truth is an answer its own form accepts as it is.
        for step in STEPS {
            for student in 0..20 {
                let question = ask(step, student).unwrap();
                assert_eq!(
                    parse_answer(question.form, &question.truth).unwrap(),
                    question.truth
                );
            }
        }
    }
}
