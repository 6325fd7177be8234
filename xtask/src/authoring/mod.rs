//! What a maintainer runs to change the lab: the starter's generator and
//! its checks, the gallery of mistakes (and MISTAKES.md, written from it) and of forgeries, the checks of the
//! documents, and the library edition.

pub(crate) mod check_forgeries;
pub(crate) mod check_mistakes;
pub(crate) mod check_readme;
pub(crate) mod check_starter;
pub(crate) mod check_verdict;
pub(crate) mod designs;
pub(crate) mod library;
pub(crate) mod mistake;
pub(crate) mod mistakes_md;
pub(crate) mod named;
pub(crate) mod starter;
pub(crate) mod sync;
