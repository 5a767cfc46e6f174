//! Curve driver.
