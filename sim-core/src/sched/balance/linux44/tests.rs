//! Hand-computed cases for the 4.4 placement and balancing rules.
