//! What an instructor runs to hand the lab out: the student edition and
//! the proof that it leaks no answer, its whole-cycle check, and the
//! Gradescope autograder.

pub(crate) mod autograder;
pub(crate) mod check_export;
pub(crate) mod export;
pub(crate) mod leak;
