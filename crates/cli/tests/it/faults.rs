//! The fault suite's own parts, the very files `cargo xtask faults` runs
//! (`xtask/src/faults/`), for the multi-server test here: the
//! exactly-once checker (`check`), the misbehaving model (`model`, asked
//! for no faults here: it echoes each message's token and runs the tool
//! the message asks for), the store reader that feeds the checker
//! (`store`), and the plain HTTP client that records what a client was
//! told (`http`). One checker for both suites: an invariant added there
//! holds here too. Their unit tests run here as well.

// What only the fault suite's runner uses is left unused here.
#![allow(dead_code)]

#[path = "../../../../xtask/src/faults/check.rs"]
pub(crate) mod check;
#[path = "../../../../xtask/src/faults/http.rs"]
pub(crate) mod http;
#[path = "../../../../xtask/src/faults/model.rs"]
pub(crate) mod model;
#[path = "../../../../xtask/src/faults/prng.rs"]
pub(crate) mod prng;
#[path = "../../../../xtask/src/faults/schedule.rs"]
pub(crate) mod schedule;
#[path = "../../../../xtask/src/faults/store.rs"]
pub(crate) mod store;
