//! proptest invariants of the block layer over generated I/O scenarios:
//! random devices (SSD or disk, depth, size limit, blk-mq hardware queues
//! and `nr_requests`), every elevator of `ELEVATORS` (legacy 4.4 and blk-mq),
//! and tasks issuing random reads and writes (sizes, patterns, sync or
//! async, waiting or AIO depths, `ionice`), run with `run_to_end_checked`,
//! which runs `RequestQueue::check` after every event: every request
//! completes exactly once (bios submitted = completed + live), no request is
//! dispatched before its bios were queued, merges conserve bytes, the device
//! never holds more than its depth, and on the blk-mq path tags in use match
//! the requests holding them, stay within `nr_requests` and the driver
//! depth, and no submitter sleeps for a tag while one it may take is free.

use proptest::prelude::*;
use sim_core::{Scenario, Simulation};

/// Every scheduler the model has, legacy and blk-mq (other schedulers add
/// themselves here).
pub const ELEVATORS: &[&str] = &["noop", "deadline", "cfq", "none", "mq-deadline", "kyber", "bfq"];

/// The kernel an elevator exists in (`KernelModel::elevators`).
fn kernel_of(elevator: &str) -> &'static str {
    if is_mq(elevator) { "6.18" } else { "4.4" }
}

/// Device `i`'s elevator: the first device's choice decides the kernel, and
/// the others take theirs from that kernel's elevators (a kernel has either
/// the 4.4 single-queue ones or the blk-mq ones).
fn elevator_of(devices: &[DeviceGen], i: usize) -> &'static str {
    let first = ELEVATORS[devices[0].elevator];
    let same: Vec<&str> = ELEVATORS.iter().copied().filter(|e| is_mq(e) == is_mq(first)).collect();
    same[devices[i].elevator % same.len()]
}

fn is_mq(elevator: &str) -> bool {
    !matches!(elevator, "noop" | "deadline" | "cfq")
}

#[derive(Clone, Debug)]
struct DeviceGen {
    /// ssd, hdd (legacy models), flash, NCQ disk, cloud volume.
    kind: u8,
    elevator: usize,
    depth: u32,
    max_kb: u32,
    nr_hw_queues: u32,
    nr_requests: Option<u32>,
    tunables: Option<(u32, u32, u32, u32)>,
}

fn device() -> impl Strategy<Value = DeviceGen> {
    (
        0..5u8,
        0..ELEVATORS.len(),
        prop_oneof![Just(1u32), 2..5u32, 8..40u32],
        prop_oneof![Just(4u32), Just(64), Just(512)],
        1..4u32,
        proptest::option::of(4..80u32),
        proptest::option::of((1..200u32, 0..4u32, 0..20u32, 1..100u32)),
    )
        .prop_map(|(kind, elevator, depth, max_kb, nr_hw_queues, nr_requests, tunables)| DeviceGen {
            kind,
            elevator,
            depth,
            max_kb,
            nr_hw_queues,
            nr_requests,
            tunables,
        })
}

#[derive(Clone, Debug)]
struct IoGen {
    write: bool,
    size_kib: u32,
    random: bool,
    sync: bool,
    /// 0: wait for it; n: AIO with depth n.
    depth: u32,
    device: usize,
}

fn io() -> impl Strategy<Value = IoGen> {
    (any::<bool>(), prop_oneof![Just(4u32), Just(8), 1..700u32], any::<bool>(), any::<bool>(), 0..6u32, 0..2usize)
        .prop_map(|(write, size_kib, random, sync, depth, device)| IoGen {
            write,
            size_kib,
            random,
            sync,
            depth,
            device,
        })
}

#[derive(Clone, Debug)]
struct TaskGen {
    ios: Vec<IoGen>,
    run_us: u32,
    sleep_us: u32,
    ionice: u8,
    cpu: u8,
}

fn task() -> impl Strategy<Value = TaskGen> {
    (proptest::collection::vec(io(), 1..4), 0..300u32, 0..2_000u32, 0..9u8, 0..4u8)
        .prop_map(|(ios, run_us, sleep_us, ionice, cpu)| TaskGen { ios, run_us, sleep_us, ionice, cpu })
}

prop_compose! {
    fn scenario()(
        devices in proptest::collection::vec(device(), 1..3),
        tasks in proptest::collection::vec(task(), 1..5),
        cpus in 1..5u32,
        duration_ms in 20..200u64,
        seed in 0..1000u64,
    ) -> String {
        let mut t = format!(
            "schema = 1\nseed = {seed}\nduration = \"{duration_ms}ms\"\n[limits]\nevents_max = 60000\n[kernel]\nversion = \"{}\"\n[machine]\ncpus = {cpus}\nhz = 250\n",
            kernel_of(elevator_of(&devices, 0))
        );
        let any_cfq = (0..devices.len()).any(|i| elevator_of(&devices, i) == "cfq");
        for (i, d) in devices.iter().enumerate() {
            let elevator = elevator_of(&devices, i);
            t += &format!("[devices.d{i}]\nkind = \"{}\"\nelevator = \"{elevator}\"\nqueue_depth = {}\nmax_sectors_kb = {}\ncapacity = \"64GiB\"\n",
                ["ssd", "hdd", "flash", "hdd", "cloud"][usize::from(d.kind)], d.depth, d.max_kb);
            if d.kind == 3 {
                t += "ncq = true\n";
            }
            if d.kind == 4 {
                // A small volume whose burst credits run out within the run.
                t += "iops_limit = 300\nburst_iops = 3000\nburst_credits = 200\n";
            }
            if is_mq(elevator) {
                t += &format!("nr_hw_queues = {}\n", d.nr_hw_queues);
                if let Some(n) = d.nr_requests {
                    let n = if elevator == "none" { n.min(d.depth) } else { n };
                    if n >= 4 {
                        t += &format!("nr_requests = {n}\n");
                    }
                }
            }
            if elevator == "mq-deadline"
                && let Some((expire_ms, batch, starved, async_depth)) = d.tunables
            {
                t += &format!("[devices.d{i}.mq-deadline]\nread_expire = {expire_ms}\nfifo_batch = {batch}\nwrites_starved = {starved}\nasync_depth = {async_depth}\nprio_aging_expire = {}\n", expire_ms * 3);
            }
        }
        for (i, d) in devices.iter().enumerate() {
            let Some((expire_ms, batch, starved, _)) = d.tunables else { continue };
            match elevator_of(&devices, i) {
                "kyber" => {
                    t += &format!("[devices.d{i}.kyber]\nread_lat_nsec = {}\nwrite_lat_nsec = {}\n", u64::from(expire_ms) * 10_000, u64::from(batch + 1) * 1_000_000);
                }
                "bfq" => {
                    t += &format!("[devices.d{i}.bfq]\nslice_idle = {}\nlow_latency = {}\ntimeout_sync = {}\n", starved % 9, batch % 2, expire_ms.max(1));
                }
                _ => {}
            }
        }
        for (i, g) in tasks.iter().enumerate() {
            let ionice = match g.ionice {
                0 if !any_cfq => Some("rt/0".to_string()),
                1..=3 => Some(format!("be/{}", g.ionice * 2 - 1)),
                4 => Some("idle".to_string()),
                _ => None,
            };
            t += &format!("[[tasks]]\nname = \"t{i}\"\ncpus = \"{}\"\n", u32::from(g.cpu) % cpus);
            if let Some(p) = ionice {
                t += &format!("ionice = \"{p}\"\n");
            }
            let mut steps = Vec::new();
            for io in &g.ios {
                let device = io.device % devices.len();
                let kind = if io.write { "write" } else { "read" };
                let pattern = if io.random { "random" } else { "sequential" };
                let wait = if io.depth == 0 { "wait = true".to_string() } else { format!("wait = false, depth = {}", io.depth) };
                // Reads are always sync (`rq_is_sync`): `sync` is a write's flag.
                let sync = if io.write { format!("sync = {}, ", io.sync) } else { String::new() };
                steps.push(format!(
                    "{{ {kind} = \"{}KiB\", device = \"d{device}\", pattern = \"{pattern}\", {sync}{wait}, offset = \"{}GiB\", span = \"4GiB\" }}",
                    io.size_kib, i * 4
                ));
            }
            steps.push(format!("{{ run = \"{}us\" }}", g.run_us + 1));
            if g.sleep_us > 0 {
                steps.push(format!("{{ sleep = \"{}us\" }}", g.sleep_us));
            }
            t += &format!("program = [{}]\n", steps.join(", "));
        }
        t
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn io_invariants_hold_after_every_event(text in scenario()) {
        let s = Scenario::from_toml("generated.toml", &text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let mut sim = Simulation::new(&s);
        sim.run_to_end_checked().map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        // Completed never exceeds dispatched, which never exceeds queued bios.
        let io = sim.report().io.expect("devices declared");
        for d in &io.devices {
            for dir in 0..2 {
                prop_assert!(d.completed[dir] <= d.dispatched[dir] && d.dispatched[dir] <= d.queued[dir], "{}", text);
            }
        }
    }
}

#[test]
fn every_elevator_runs_a_mixed_load() {
    for elevator in ELEVATORS {
        let text = format!(
            "schema = 1\nseed = 3\nduration = \"300ms\"\n[kernel]\nversion = \"{}\"\n[machine]\ncpus = 2\nhz = 250\n[devices.sda]\nelevator = \"{elevator}\"\nqueue_depth = 4\n[[tasks]]\nname = \"r\"\nprogram = [{{ read = \"4KiB\", pattern = \"random\" }}, {{ run = \"10us\" }}]\n[[tasks]]\nname = \"w\"\nprogram = [{{ write = \"256KiB\", wait = false, depth = 16 }}, {{ run = \"10us\" }}]\n",
            kernel_of(elevator)
        );
        let s = Scenario::from_toml("mixed.toml", &text).expect("valid");
        let mut sim = Simulation::new(&s);
        sim.run_to_end_checked().unwrap_or_else(|e| panic!("{elevator}: {e}"));
        let io = sim.report().io.expect("a device");
        let d = &io.devices[0];
        // BFQ weight-raises the new reader (low_latency: ×30 for 3.75 s on an
        // SSD) and charges async writes ×3, so in 300 ms the writer gets
        // about 1/90 of the service: one 256 KiB write against ~2,600 reads.
        let writes_min = if *elevator == "bfq" { 1 } else { 6 };
        assert!(d.completed[0] > 20 && d.completed[1] >= writes_min, "{elevator}: {:?} completed", d.completed);
        assert_eq!(d.mq.is_some(), is_mq(elevator), "{elevator}");
    }
}
