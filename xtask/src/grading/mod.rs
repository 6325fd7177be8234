//! What turns a student's crate into a grade: the submission taken apart
//! from everything else, the source check, the held-back tests kept out of
//! reach of the code graded, each test run sealed in a process of its own, the weights and the reports. The
//! student edition carries this folder whole, so `just grade` there grades
//! as the course does.

pub(crate) mod confine;
pub(crate) mod grade;
pub(crate) mod held_back;
pub(crate) mod report;
pub(crate) mod runner;
pub(crate) mod sealed;
pub(crate) mod source_check;
pub(crate) mod submission;
pub(crate) mod weights;
