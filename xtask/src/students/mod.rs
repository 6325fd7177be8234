//! What a student runs while doing the lab: `test`, `watch`, `progress`,
//! `hint`, `predict` and `filter`, and the scoreboard they print. The
//! student edition carries this folder whole.

pub(crate) mod filter;
pub(crate) mod hint;
pub(crate) mod predict;
pub(crate) mod progress;
pub(crate) mod scoreboard;
pub(crate) mod test;
pub(crate) mod watch;
