//! Named devices.
