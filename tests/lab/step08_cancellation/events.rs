//! A cancelled call as the event sink tells it (O1).

use retry_breaker::RetryBreaker;
use tokio_util::sync::CancellationToken;

use crate::support::{Lab, Script, ms, run};

const LOOPED: &str = "the call did not notice its cancelled token: TODO(8)";

#[test]
fn o1_e2_a_call_cancelled_before_it_starts_is_told_as_cancelled_with_no_attempt() {
    run(LOOPED, async {
        let lab = Lab::telling(RetryBreaker::builder().threshold(1).cooldown(ms(10)));
        let token = CancellationToken::new();
        token.cancel();
        let script = Script::new([Ok(1)]);
        let result = lab.call(3, &script).cancel(&token).run().await;
        assert!(result.is_err(), "TODO(8): a cancelled call ends");
        assert_eq!(
            lab.trace(),
            ["cancelled 0"],
            "TODO(8): a call cancelled before its first attempt asks for none and is told as \
             cancelled after 0 attempts (O1, E2)"
        );
        // The contrast: a token nobody cancelled lets the call make its attempt.
        let result = lab
            .call(3, &script)
            .cancel(&CancellationToken::new())
            .run()
            .await;
        assert_eq!(
            result.ok(),
            Some(1),
            "TODO(8): only a cancelled token ends a call before its first attempt (E2)"
        );
    });
}
