//! Held back from the student edition: the deadline, probed with other
//! cooldowns than the visible suite's (TODO(2); rules B3, B4, B5).

use retry_breaker::{Rejected, State};

use crate::support::{Lab, ms};

#[test]
fn b4_the_probe_is_admitted_exactly_at_the_deadline_whatever_the_cooldown() {
    for cooldown in [1, 7, 250] {
        let lab = Lab::new(1, ms(cooldown));
        lab.trip();
        lab.advance(ms(cooldown - 1));
        assert_eq!(
            lab.breaker.try_acquire().unwrap_err(),
            Rejected::Open { remaining: ms(1) },
            "one millisecond before the deadline the circuit still refuses (B3)"
        );
        lab.advance(ms(1));
        let probe = lab.breaker.try_acquire().expect(
            "TODO(2): the first attempt at or after the deadline must be admitted as the probe (B4)",
        );
        assert_eq!(
            lab.breaker.state(),
            State::HalfOpen {
                probe_in_flight: true
            },
            "TODO(2): the probe is in flight (B5), cooldown {cooldown} ms"
        );
        probe.success();
    }
}
