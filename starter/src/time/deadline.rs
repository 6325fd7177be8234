//! When an open circuit may try again.

use std::time::Duration;
