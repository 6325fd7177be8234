//! Step 3's fence as the event sink tells it (O1, B6).

use retry_breaker::RetryBreaker;

use crate::support::{Lab, ms};

#[test]
fn o1_b6_an_outcome_from_an_older_generation_is_told_as_stale() {
    let lab = Lab::telling(RetryBreaker::builder().threshold(1).cooldown(ms(10)));
    let slow = lab.breaker.try_acquire().expect("CLOSED admits");
    lab.trip();
    lab.advance(ms(10));
    let probe = lab.probe();
    lab.told();
    slow.success();
    assert_eq!(
        lab.trace(),
        ["success g0 stale"],
        "O1, B6: a success admitted before the trip is told as stale, and does not close the \
         half-open circuit (TODO(3))"
    );
    probe.success();
    assert_eq!(
        lab.trace(),
        ["HALF-OPEN -> CLOSED g3", "success g2 counted"],
        "B6: the probe's own success closes it (TODO(3))"
    );
}
