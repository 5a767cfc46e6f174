//! Hand-computed cases for the 6.x placement and balancing rules on a mock
//! machine (2–8 CPUs); each comment names the deciding kernel condition.

#[allow(unused_imports)]
use super::*;
