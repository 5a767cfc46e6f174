//! The scheduling context every part of the engine works in: the spec, the
//! clock, the tasks, the recorder, the event queue and the effects stack,
//! held together in `Simulation::world` and lent (`&mut World`) for one call.
//!
//! Subsystems own their own state and get a `World` for what they share:
//! they read the clock, arm their timers on the queue, record metrics, and
//! hand back what another part must do as `Effect`s.

use super::effects::{Effect, Effects};
use crate::event::EventQueue;
use crate::metrics::recorder::Recorder;
use crate::scenario::ScenarioSpec;
use crate::task::Task;
use crate::time::SimTime;

/// Simulated time: moved only by the event loop, when it pops an event.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    pub now: SimTime,
    /// The scenario's duration.
    pub end: SimTime,
    /// `now / tick_ns`, updated when the clock moves.
    pub jiffies: u64,
    pub tick_ns: u64,
    /// `machine.tick_offset`: ticks fall at tick_offset + k·TICK_NSEC.
    pub tick_offset_ns: u64,
    /// When `jiffies` next moves on (the next tick), so that a clock set
    /// within one tick does not divide.
    pub next_jiffy_ns: u64,
}

impl Clock {
    /// Moves the clock to `at`: `now` and `jiffies` (ticks fall at
    /// tick_offset + k·TICK_NSEC; jiffies counts them).
    pub fn set(&mut self, at: SimTime) {
        if at.ns() >= self.next_jiffy_ns || at < self.now {
            let shift = (self.tick_ns - self.tick_offset_ns) % self.tick_ns;
            self.jiffies = (at.ns() + shift) / self.tick_ns;
            self.next_jiffy_ns = (self.jiffies + 1) * self.tick_ns - shift;
        }
        self.now = at;
    }
}

/// What a call into a subsystem may read and touch besides its own state:
/// the simulation's shared part, held in one place so that a call passes
/// one reference to it (rather than a struct of six built per call).
#[derive(Clone, Debug)]
pub(crate) struct World {
    pub spec: ScenarioSpec,
    pub clock: Clock,
    pub tasks: Vec<Task>,
    pub recorder: Recorder,
    pub queue: EventQueue,
    pub out: Effects,
}

impl World {
    pub fn now(&self) -> SimTime {
        self.clock.now
    }

    /// Hands `effect` back to the event loop.
    pub fn emit(&mut self, effect: Effect) {
        self.out.push(effect);
    }
}
