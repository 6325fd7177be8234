//! Step 2's refusals and probe as the event sink tells them (O1, O2).

use retry_breaker::RetryBreaker;

use crate::support::{Lab, ms};

#[test]
fn o1_o2_the_probe_is_told_as_the_probe_after_the_transition_its_admission_made() {
    let lab = Lab::telling(RetryBreaker::builder().threshold(1).cooldown(ms(10)));
    lab.trip();
    lab.told();
    assert!(lab.breaker.try_acquire().is_err(), "B3: OPEN refuses");
    assert_eq!(
        lab.trace(),
        ["rejected Open { remaining: 10ms }"],
        "O1: a refusal is told with its reason (TODO(2))"
    );
    lab.advance(ms(10));
    let probe = lab.probe();
    assert!(
        lab.breaker.try_acquire().is_err(),
        "B5: one probe at a time"
    );
    assert_eq!(
        lab.trace(),
        [
            "OPEN -> HALF-OPEN g2",
            "admitted g2 probe",
            "rejected ProbeInFlight"
        ],
        "O1, O2: the probe's admission is told as the probe, after the transition it made, \
         and a second attempt's refusal after it (TODO(2))"
    );
    probe.failure();
    assert_eq!(
        lab.trace(),
        ["HALF-OPEN -> OPEN g3", "failure g2 counted"],
        "O2: a failed probe reopens before its failure is told (TODO(2))"
    );
    lab.advance(ms(10));
    lab.probe().success();
    assert_eq!(
        lab.trace(),
        [
            "OPEN -> HALF-OPEN g4",
            "admitted g4 probe",
            "HALF-OPEN -> CLOSED g5",
            "success g4 counted"
        ],
        "O1, O2: a good probe closes the circuit (TODO(2))"
    );
}
