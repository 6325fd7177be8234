//! How a failing test reads: one panic message per failure, no backtrace.
//!
//! The default panic hook prints a backtrace whenever `RUST_BACKTRACE` is set,
//! as many shells set it, and a property test prints one message for every
//! case it shrinks through: thousands of lines in which the one that matters
//! is lost. This hook prints the panic's thread, place and message and
//! nothing else, and stays silent inside [`quietly`]. `LAB_BACKTRACE=1`
//! brings the default hook back, for a session with a debugger.

use std::cell::Cell;
use std::panic::{self, PanicHookInfo};
use std::sync::Once;
use std::thread;

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Installs the suite's panic hook, once per test process.
pub fn install() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        if std::env::var_os("LAB_BACKTRACE").is_some_and(|v| v == "1") {
            return;
        }
        panic::set_hook(Box::new(concise));
    });
}

/// Runs `f` with panic messages on this thread silenced. For code that
/// catches panics by design and reports them itself, such as a property
/// test that shrinks a failing case through many panicking runs.
pub fn quietly<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            QUIET.with(|quiet| quiet.set(self.0));
        }
    }
    let _restore = Restore(QUIET.with(|quiet| quiet.replace(true)));
    f()
}

/// Whether panic messages on this thread are silenced (see [`quietly`]).
pub fn is_quiet() -> bool {
    QUIET.with(Cell::get)
}

fn concise(info: &PanicHookInfo<'_>) {
    if is_quiet() {
        return;
    }
    let payload = info.payload();
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a panic without a message)");
    let current = thread::current();
    let name = current.name().unwrap_or("<unnamed>");
    match info.location() {
        Some(at) => eprintln!("thread '{name}' panicked at {at}:\n{message}"),
        None => eprintln!("thread '{name}' panicked:\n{message}"),
    }
    if let Some(context) = context(name) {
        eprintln!("{context}");
    }
}

/// Where to look, from the failing test's name: the rules it checks (its
/// name starts with their ids, `b5_…`, `e5_e7_…`, `b1_to_b10_…`) and the
/// step, whose TODO has the same number (LAB.md).
fn context(test: &str) -> Option<String> {
    let (module, function) = test.split_once("::")?;
    let function = function.rsplit("::").next().unwrap_or(function);
    let mut rules = Vec::new();
    let mut words = function.split('_').peekable();
    while let Some(word) = words.peek() {
        let mut letters = word.chars();
        // A rule id is a family's letter and a number (`b5`, `k1`); the
        // families are steps.toml's, and a test's name opens with ids only.
        let is_rule = letters.next().is_some_and(|c| c.is_ascii_lowercase())
            && word.len() > 1
            && letters.all(|c| c.is_ascii_digit());
        if is_rule {
            rules.push(word.to_uppercase());
        } else if *word == "to" && !rules.is_empty() {
            rules.push("to".to_owned());
        } else {
            break;
        }
        words.next();
    }
    let rules = match rules.as_slice() {
        [] => String::new(),
        [one] => format!("rule {one}, "),
        many => format!("rules {}, ", many.join(" ").replace(" to ", "-")),
    };
    let step: u32 = module
        .strip_prefix("step")?
        .split('_')
        .next()?
        .parse()
        .ok()?;
    // Steps 9 and 10 have no TODO of their own; the advanced steps (11 on)
    // have theirs, numbered as the step.
    let todo = if step <= 8 || step >= 11 {
        format!("TODO({step})")
    } else {
        "the TODOs of steps 1-8".to_owned()
    };
    // The advanced track's steps are taught in a document of their own.
    let handout = if step >= 11 { "ADVANCED.md" } else { "LAB.md" };
    Some(format!("  [{rules}{todo}: see {handout}, step {step}]"))
}
