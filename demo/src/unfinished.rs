//! Friendly words for the starter's `todo!()` panics.
//!
//! `just demo starter` runs the scenarios against the student's crate, whose
//! unfinished parts panic with a message such as `TODO(3): admit a probe
//! ...`. A wall of panic output would bury the one thing the student needs
//! to know: which step is missing. So the demo keeps those panics quiet,
//! catches each one around its scenario, and prints a single line instead.

use std::any::Any;
use std::panic;

/// The text of a panic payload, when it has one.
pub fn panic_message(payload: &(dyn Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

/// The step a starter panic names, and what it asks for, if the message
/// comes from one of the starter's `todo!()`s.
///
/// ```
/// use retry_breaker_demo::unfinished::unfinished_step;
///
/// let message = "not yet implemented: TODO(3): admit a probe only if none is in flight (B5)";
/// assert_eq!(
///     unfinished_step(message),
///     Some(("TODO(3)", "admit a probe only if none is in flight (B5)")),
/// );
/// assert_eq!(unfinished_step("index out of bounds"), None);
/// ```
pub fn unfinished_step(message: &str) -> Option<(&str, &str)> {
    let start = message.find("TODO(")?;
    let rest = &message[start..];
    let end = rest.find(')')? + 1;
    let (step, what) = rest.split_at(end);
    Some((step, what.trim_start_matches(':').trim()))
}

/// One line for a panic that ended a scenario: the starter step it names,
/// or the panic's own message.
pub fn describe_panic(payload: &(dyn Any + Send)) -> String {
    match panic_message(payload) {
        Some(message) => match unfinished_step(message) {
            Some((step, what)) => format!("the starter's {step} is not done yet: {what}"),
            None => format!("it panicked: {message}"),
        },
        None => "it panicked".to_owned(),
    }
}

/// Silences the default panic output for the starter's `todo!()`s, which
/// the demo reports itself; every other panic is printed as usual.
pub fn quiet_todo_panics() {
    let default_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let is_todo =
            panic_message(info.payload()).is_some_and(|message| unfinished_step(message).is_some());
        if !is_todo {
            default_hook(info);
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_todo_panic_names_its_step() {
        let payload: Box<dyn Any + Send> = Box::new(
            "not yet implemented: TODO(6): the retry loop (E1, E3-E6); see LAB.md, step 6"
                .to_owned(),
        );
        assert_eq!(
            describe_panic(payload.as_ref()),
            "the starter's TODO(6) is not done yet: the retry loop (E1, E3-E6); see LAB.md, step 6"
        );
    }

    #[test]
    fn another_panic_keeps_its_message() {
        let payload: Box<dyn Any + Send> = Box::new("boom");
        assert_eq!(describe_panic(payload.as_ref()), "it panicked: boom");
        let payload: Box<dyn Any + Send> = Box::new(42);
        assert_eq!(describe_panic(payload.as_ref()), "it panicked");
    }
}
