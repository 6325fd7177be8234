// PROVIDED FILE: a grade always uses the kit's own copy of this file; your code goes in the TODOs.
//! What production adds around one breaker: a breaker per key, the view a
//! node has of its fleet, and the event stream's adapters.

pub mod fleet;
pub(crate) mod registry;
