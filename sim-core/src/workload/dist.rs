//! Random durations: constants and distributions written readably in scenario
//! files (`"50us"`, `"exp(200us)"`, `"uniform(1ms, 5ms)"`).
//!
//! Sampling uses `libm` for every transcendental function and rounds to integer
//! nanoseconds, so a seed gives the same numbers on x86_64 and wasm32 (glibc's
//! `ln`/`exp` differ from wasm's in the last bit on a few percent of inputs).
//! `rand_distr` is not used here for that reason: another crate in the build
//! enabling `num-traits/std` silently switches it to the platform's float math.

use crate::rng::SimRng;

/// The longest duration a sample may take: one simulated day. Heavy-tailed
/// distributions are clipped here so time arithmetic can never overflow.
pub const SAMPLE_MAX_NS: u64 = 86_400 * 1_000_000_000;

/// A distribution of non-negative durations in nanoseconds.
#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    Const(u64),
    /// Uniform over `[low, high]`.
    Uniform {
        low: u64,
        high: u64,
    },
    /// Exponential with the given mean.
    Exp {
        mean: u64,
    },
    /// Normal, clipped at 0.
    Normal {
        mean: u64,
        sd: u64,
    },
    /// Log-normal with the given median and shape σ of the underlying normal.
    LogNormal {
        median: u64,
        sigma: f64,
    },
    /// Pareto (type I) with scale (minimum) and shape α.
    Pareto {
        scale: u64,
        shape: f64,
    },
    /// Observed quantiles, `(probability in [0, 1], ns)`, from 0 to 1:
    /// sampled by linear interpolation of the inverse CDF between them, so
    /// the observed minimum and maximum are kept exactly (`sim-cli import`
    /// writes these from a trace's bursts).
    Empirical(Box<[(f64, u64)]>),
}

/// The most points an `empirical(…)` may list.
pub const EMPIRICAL_POINTS_MAX: usize = 64;

impl Dist {
    /// Parses `"50us"`, `"exp(1ms)"`, `"uniform(1ms, 5ms)"`, `"normal(2ms, 500us)"`,
    /// `"lognormal(1ms, 0.5)"`, `"pareto(100us, 1.5)"`.
    pub fn parse(text: &str) -> Result<Dist, String> {
        Dist::parse_with(text, parse_duration)
    }

    /// Parses a distribution of sizes in bytes (`"4KiB"`, `"uniform(4KiB, 64KiB)"`).
    pub fn parse_size(text: &str) -> Result<Dist, String> {
        Dist::parse_with(text, parse_size)
    }

    /// Parses a constant or distribution whose arguments `unit` reads.
    fn parse_with(text: &str, unit: fn(&str) -> Result<u64, String>) -> Result<Dist, String> {
        let t = text.trim();
        let Some(open) = t.find('(') else {
            return unit(t).map(Dist::Const);
        };
        let name = t[..open].trim();
        let Some(inner) = t[open + 1..].strip_suffix(')') else {
            return Err(format!("`{t}`: missing closing parenthesis"));
        };
        let args: Vec<&str> = inner.split(',').map(str::trim).collect();
        let want = |n: usize| -> Result<(), String> {
            if args.len() == n { Ok(()) } else { Err(format!("`{name}` takes {n} argument(s), got {}", args.len())) }
        };
        let shape = |s: &str, what: &str| -> Result<f64, String> {
            let v: f64 = s.parse().map_err(|_| format!("{what} `{s}` is not a number"))?;
            if !(v.is_finite() && v > 0.0 && v <= 100.0) {
                return Err(format!("{what} must be a number in (0, 100], got `{s}`"));
            }
            Ok(v)
        };
        let d = match name {
            "const" => {
                want(1)?;
                Dist::Const(unit(args[0])?)
            }
            "uniform" => {
                want(2)?;
                let (low, high) = (unit(args[0])?, unit(args[1])?);
                if low > high {
                    return Err(format!("uniform({}, {}): low must not exceed high", args[0], args[1]));
                }
                Dist::Uniform { low, high }
            }
            "exp" => {
                want(1)?;
                Dist::Exp { mean: unit(args[0])? }
            }
            "normal" => {
                want(2)?;
                Dist::Normal { mean: unit(args[0])?, sd: unit(args[1])? }
            }
            "lognormal" => {
                want(2)?;
                Dist::LogNormal { median: unit(args[0])?, sigma: shape(args[1], "sigma")? }
            }
            "pareto" => {
                want(2)?;
                let scale = unit(args[0])?;
                if scale == 0 {
                    return Err("pareto scale must be positive".into());
                }
                Dist::Pareto { scale, shape: shape(args[1], "shape")? }
            }
            "empirical" => Dist::Empirical(empirical(&args, unit)?),
            other => {
                return Err(format!(
                    "unknown distribution `{other}`; allowed: const, uniform, exp, normal, lognormal, pareto, empirical"
                ));
            }
        };
        Ok(d)
    }

    /// Draws one duration in ns, in `[0, SAMPLE_MAX_NS]`.
    ///
    /// Constants and exponentials (nearly every draw of the shipped
    /// scenarios) are drawn inline; the other shapes in `sample_other`.
    #[inline]
    pub fn sample(&self, rng: &mut SimRng) -> u64 {
        match *self {
            Dist::Const(v) => v,
            Dist::Exp { mean } => to_ns(mean as f64 * super::ziggurat::exp1(rng)),
            _ => self.sample_other(rng),
        }
    }

    #[inline(never)]
    fn sample_other(&self, rng: &mut SimRng) -> u64 {
        let x = match *self {
            Dist::Empirical(ref points) => inverse_cdf(points, rng.unit_f64()),
            Dist::Const(v) => return v,
            Dist::Uniform { low, high } => return rng.range_inclusive(low, high),
            Dist::Exp { mean } => mean as f64 * super::ziggurat::exp1(rng),
            Dist::Normal { mean, sd } => mean as f64 + sd as f64 * standard_normal(rng),
            Dist::LogNormal { median, sigma } => median as f64 * libm::exp(sigma * standard_normal(rng)),
            Dist::Pareto { scale, shape } => scale as f64 * libm::pow(rng.open_unit_f64(), -1.0 / shape),
        };
        to_ns(x)
    }

    /// The mean in ns (for documentation and utilisation estimates), clipped
    /// like samples are.
    pub fn mean_ns(&self) -> f64 {
        let m = match *self {
            // The mean of a piecewise-linear inverse CDF: each segment's midpoint, weighted by its probability.
            Dist::Empirical(ref points) => {
                points.windows(2).map(|w| (w[1].0 - w[0].0) * (w[0].1 as f64 + w[1].1 as f64) / 2.0).sum()
            }
            Dist::Const(v) => v as f64,
            Dist::Uniform { low, high } => (low as f64 + high as f64) / 2.0,
            Dist::Exp { mean } => mean as f64,
            Dist::Normal { mean, .. } => mean as f64,
            Dist::LogNormal { median, sigma } => median as f64 * libm::exp(sigma * sigma / 2.0),
            Dist::Pareto { scale, shape } if shape > 1.0 => scale as f64 * shape / (shape - 1.0),
            Dist::Pareto { .. } => f64::INFINITY,
        };
        m.min(SAMPLE_MAX_NS as f64)
    }

    /// Whether every sample is 0 (a step with it takes no time).
    pub fn is_always_zero(&self) -> bool {
        match *self {
            Dist::Const(v) => v == 0,
            Dist::Uniform { high, .. } => high == 0,
            Dist::Exp { mean } => mean == 0,
            Dist::Normal { mean, sd } => mean == 0 && sd == 0,
            Dist::LogNormal { median, .. } => median == 0,
            Dist::Pareto { .. } => false,
            Dist::Empirical(ref points) => points.last().is_none_or(|p| p.1 == 0),
        }
    }
}

/// The distribution as a scenario writes it (`"exp(1ms)"`, `"20us"`).
impl std::fmt::Display for Dist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = crate::time::format_duration;
        match *self {
            Dist::Const(v) => write!(f, "{}", d(v)),
            Dist::Uniform { low, high } => write!(f, "uniform({}, {})", d(low), d(high)),
            Dist::Exp { mean } => write!(f, "exp({})", d(mean)),
            Dist::Normal { mean, sd } => write!(f, "normal({}, {})", d(mean), d(sd)),
            Dist::LogNormal { median, sigma } => write!(f, "lognormal({}, {sigma})", d(median)),
            Dist::Pareto { scale, shape } => write!(f, "pareto({}, {shape})", d(scale)),
            Dist::Empirical(ref points) => {
                f.write_str("empirical(")?;
                for (i, &(p, v)) in points.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{}%: {}", percent_text(p), d(v))?;
                }
                f.write_str(")")
            }
        }
    }
}

/// `"0%: 12us"`, … as `empirical(…)` lists them: percentages from 0 to 100,
/// increasing, with values that never decrease.
fn empirical(args: &[&str], unit: fn(&str) -> Result<u64, String>) -> Result<Box<[(f64, u64)]>, String> {
    if !(2..=EMPIRICAL_POINTS_MAX).contains(&args.len()) {
        return Err(format!(
            "`empirical` takes 2 to {EMPIRICAL_POINTS_MAX} points `P%: duration`, got {}",
            args.len()
        ));
    }
    let mut points: Vec<(f64, u64)> = Vec::with_capacity(args.len());
    for a in args {
        let Some((p, v)) = a.split_once(':') else {
            return Err(format!("empirical point `{a}` is not `P%: duration` (e.g. `99%: 2ms`)"));
        };
        let p = p.trim();
        let pct: f64 = p
            .strip_suffix('%')
            .and_then(|n| n.trim().parse().ok())
            .filter(|x: &f64| x.is_finite() && (0.0..=100.0).contains(x))
            .ok_or_else(|| format!("empirical point `{a}`: `{p}` is not a percentage from 0% to 100%"))?;
        let v = unit(v)?;
        if let Some(&(lp, lv)) = points.last() {
            if pct / 100.0 <= lp {
                return Err(format!("empirical point `{a}`: percentages must increase (after {}%)", percent_text(lp)));
            }
            if v < lv {
                return Err(format!("empirical point `{a}`: durations must not decrease along the percentages"));
            }
        }
        points.push((pct / 100.0, v));
    }
    if points[0].0 != 0.0 || points[points.len() - 1].0 != 1.0 {
        return Err("`empirical` must start at `0%:` (the minimum) and end at `100%:` (the maximum)".into());
    }
    Ok(points.into_boxed_slice())
}

/// The inverse CDF at `u` in `[0, 1)`: linear between the two points around it.
fn inverse_cdf(points: &[(f64, u64)], u: f64) -> f64 {
    let i = points.partition_point(|&(p, _)| p <= u).clamp(1, points.len() - 1);
    let ((p0, v0), (p1, v1)) = (points[i - 1], points[i]);
    v0 as f64 + (v1 as f64 - v0 as f64) * ((u - p0) / (p1 - p0)).clamp(0.0, 1.0)
}

/// A probability as the shortest percentage that reads back to it (`99.9`).
fn percent_text(p: f64) -> String {
    let pct = p * 100.0;
    let rounded = (pct * 1e6).round() / 1e6;
    format!("{rounded}")
}

/// Box–Muller with `libm` (one value per call; the pair's twin is discarded to
/// keep draws per sample fixed).
fn standard_normal(rng: &mut SimRng) -> f64 {
    let u1 = rng.open_unit_f64();
    let u2 = rng.unit_f64();
    libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * std::f64::consts::PI * u2)
}

#[inline]
fn to_ns(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= SAMPLE_MAX_NS as f64 {
        SAMPLE_MAX_NS
    } else {
        // x is positive and finite here: adding 0.5 and truncating rounds it.
        // Below 2^63, truncating to i64 is the same and cheaper on x86_64.
        (x + 0.5) as i64 as u64
    }
}

/// Parses a duration: an integer with a unit suffix `ns`, `us`, `ms` or `s`,
/// optionally with a decimal fraction (`"1.5ms"`). Exact: no floating point.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let t = text.trim();
    // Said before the unit is looked at: `-5ms` would otherwise read as a
    // number-less duration with the unit `-5ms`.
    if let Some(rest) = t.strip_prefix('-') {
        return Err(format!(
            "`{t}`: durations cannot be negative; give 0 or more with a unit (e.g. \"{}\")",
            rest.trim()
        ));
    }
    // A distribution where one duration is read: said before the unit is
    // looked at, which would otherwise be `exp(1ms)`.
    if let Some(open) = t.find('(') {
        return Err(format!(
            "`{t}` is a distribution ({}(…)); this key takes one duration, such as \"1ms\", not a distribution",
            t[..open].trim()
        ));
    }
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = (&t[..split], t[split..].trim());
    let scale: u64 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "" => return Err(format!("`{t}` needs a unit: ns, us, ms or s (e.g. \"50us\")")),
        other => return Err(format!("unknown time unit `{other}` in `{t}`; allowed: ns, us, ms, s")),
    };
    if num.is_empty() {
        return Err(format!("`{t}` is not a duration (write e.g. \"1.5ms\")"));
    }
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    if whole.is_empty() || frac.contains('.') {
        return Err(format!("`{t}` is not a duration (write e.g. \"1.5ms\")"));
    }
    let too_long = || format!("`{t}` is out of range (allowed: 0 to {} s, one day)", SAMPLE_MAX_NS / 1_000_000_000);
    let whole: u64 = whole.parse().map_err(|_| too_long())?;
    let digits = scale.ilog10() as usize;
    if frac.len() > digits {
        return Err(format!("`{t}` is finer than a nanosecond"));
    }
    let frac_ns: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<u64>().map_err(|_| too_long())? * 10u64.pow((digits - frac.len()) as u32)
    };
    let ns = whole.checked_mul(scale).and_then(|w| w.checked_add(frac_ns)).ok_or_else(too_long)?;
    if ns > SAMPLE_MAX_NS {
        return Err(too_long());
    }
    Ok(ns)
}

/// Parses a size in bytes: an integer with a unit `B`, `KiB`, `MiB`, `GiB`,
/// `TiB` (powers of 1024) or `kB`, `MB`, `GB`, `TB` (powers of 1000); `k`, `K`,
/// `M`, `G` and `T` alone mean the binary units, as fio reads them.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    // Said before the unit is looked at, as for durations.
    if let Some(rest) = t.strip_prefix('-') {
        return Err(format!(
            "`{t}`: sizes cannot be negative; give 1 byte or more with a unit (e.g. \"{}\")",
            rest.trim()
        ));
    }
    if let Some(open) = t.find('(') {
        return Err(format!(
            "`{t}` is a distribution ({}(…)); this key takes one size, such as \"4KiB\", not a distribution",
            t[..open].trim()
        ));
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = (&t[..split], t[split..].trim());
    let scale: u64 = match unit {
        "B" => 1,
        "KiB" | "k" | "K" => 1 << 10,
        "MiB" | "M" => 1 << 20,
        "GiB" | "G" => 1 << 30,
        "TiB" | "T" => 1 << 40,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "" => return Err(format!("`{t}` needs a unit: B, KiB, MiB, GiB, TiB, kB, MB, GB or TB (e.g. \"4KiB\")")),
        other => {
            return Err(format!(
                "unknown size unit `{other}` in `{t}`; allowed: B, KiB, MiB, GiB, TiB, kB, MB, GB, TB"
            ));
        }
    };
    if num.is_empty() {
        return Err(format!("`{t}` is not a size (write e.g. \"128KiB\")"));
    }
    let too_big = || format!("`{t}` is out of range (allowed: 0 to {SIZE_MAX_BYTES} bytes, 1 PiB)");
    let n: u64 = num.parse().map_err(|_| too_big())?;
    let bytes = n.checked_mul(scale).ok_or_else(too_big)?;
    if bytes > SIZE_MAX_BYTES {
        return Err(too_big());
    }
    Ok(bytes)
}

/// The largest size a scenario may write: 1 PiB.
pub const SIZE_MAX_BYTES: u64 = 1 << 50;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_exactly() {
        assert_eq!(parse_duration("50us"), Ok(50_000));
        assert_eq!(parse_duration("1.5ms"), Ok(1_500_000));
        assert_eq!(parse_duration("2s"), Ok(2_000_000_000));
        assert_eq!(parse_duration("0.000000001s"), Ok(1));
        assert!(parse_duration("10").unwrap_err().contains("needs a unit"));
        assert!(parse_duration("1.5h").unwrap_err().contains("unknown time unit"));
        // A sign is not a unit: the message says what is wrong with it.
        let e = parse_duration("-5ms").unwrap_err();
        assert!(e.contains("cannot be negative") && !e.contains("unit `"), "{e}");
        assert!(Dist::parse("uniform(-1ms, 2ms)").unwrap_err().contains("cannot be negative"));
        assert!(parse_duration("1.0000000001s").unwrap_err().contains("finer"));
        assert!(parse_duration("99999999999999999999s").unwrap_err().contains("out of range (allowed: 0 to 86400 s"));
        assert!(parse_duration(&format!("{}ms", "9".repeat(309))).unwrap_err().contains("out of range"));
        // A distribution where one duration is read says so, not "unknown unit".
        let e = parse_duration("exp(1ms)").unwrap_err();
        assert!(e.contains("exp(1ms)") && e.contains("not a distribution") && !e.contains("unit `"), "{e}");
    }

    #[test]
    fn sizes_parse_exactly() {
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("2MB"), Ok(2_000_000));
        assert_eq!(parse_size("128k"), Ok(131_072));
        assert!(parse_size("4").unwrap_err().contains("needs a unit"));
        assert!(parse_size("4 parsecs").unwrap_err().contains("unknown size unit"));
        assert!(parse_size("2000TiB").unwrap_err().contains("out of range (allowed: 0 to"));
        // A sign or a distribution is not a unit: the message says what is wrong.
        let e = parse_size("-4KiB").unwrap_err();
        assert!(e.contains("-4KiB") && e.contains("cannot be negative") && !e.contains("unit `"), "{e}");
        let e = parse_size("uniform(4KiB, 8KiB)").unwrap_err();
        assert!(e.contains("not a distribution") && !e.contains("unit `"), "{e}");
        let e = parse_size(&"9".repeat(309)).unwrap_err();
        assert!(e.contains("needs a unit"), "{e}");
        let e = parse_size(&format!("{}B", "9".repeat(309))).unwrap_err();
        assert!(e.contains("out of range (allowed: 0 to"), "{e}");
        assert_eq!(Dist::parse_size("uniform(4KiB, 8KiB)"), Ok(Dist::Uniform { low: 4096, high: 8192 }));
    }

    #[test]
    fn distributions_parse_and_reject_nonsense() {
        assert_eq!(Dist::parse("exp(200us)"), Ok(Dist::Exp { mean: 200_000 }));
        assert_eq!(Dist::parse(" uniform(1ms, 5ms) "), Ok(Dist::Uniform { low: 1_000_000, high: 5_000_000 }));
        assert!(Dist::parse("uniform(5ms, 1ms)").unwrap_err().contains("low must not exceed"));
        assert!(Dist::parse("pareto(1ms, -1)").unwrap_err().contains("shape"));
        assert!(Dist::parse("lognormal(1ms, NaN)").is_err());
        assert!(Dist::parse("gamma(1ms)").unwrap_err().contains("unknown distribution"));
        assert!(Dist::parse("exp(1ms").unwrap_err().contains("parenthesis"));
    }

    #[test]
    fn empirical_reads_writes_and_keeps_its_extremes() {
        let d = Dist::parse("empirical(0%: 10us, 50%: 20us, 99.9%: 100us, 100%: 3ms)").unwrap();
        assert_eq!(d.to_string(), "empirical(0%: 10us, 50%: 20us, 99.9%: 100us, 100%: 3ms)");
        assert_eq!(Dist::parse(&d.to_string()), Ok(d.clone()));
        let mut rng = SimRng::new(5).stream("e");
        let xs: Vec<u64> = (0..50_000).map(|_| d.sample(&mut rng)).collect();
        assert!(xs.iter().all(|&x| (10_000..=3_000_000).contains(&x)));
        let mean = xs.iter().sum::<u64>() as f64 / xs.len() as f64;
        assert!((mean - d.mean_ns()).abs() / d.mean_ns() < 0.03, "{mean} vs {}", d.mean_ns());
        let above = xs.iter().filter(|&&x| x > 100_000).count();
        assert!((20..=90).contains(&above), "0.1% of 50k beyond 100us, got {above}");
        for bad in [
            "empirical(50%: 1ms, 100%: 2ms)",
            "empirical(0%: 1ms, 90%: 2ms)",
            "empirical(0%: 2ms, 100%: 1ms)",
            "empirical(0%: 1ms, 0%: 2ms, 100%: 3ms)",
            "empirical(0%: 1ms)",
            "empirical(0: 1ms, 100%: 2ms)",
            "empirical(0%: 1ms, 101%: 2ms)",
        ] {
            assert!(Dist::parse(bad).is_err(), "{bad} is refused");
        }
    }

    #[test]
    fn sample_means_are_close() {
        let mut rng = SimRng::new(3).stream("t");
        for d in ["exp(1ms)", "uniform(1ms, 3ms)", "normal(2ms, 100us)", "lognormal(2ms, 0.1)", "pareto(1ms, 3)"] {
            let dist = Dist::parse(d).unwrap();
            let n = 20_000;
            let mean = (0..n).map(|_| dist.sample(&mut rng) as f64).sum::<f64>() / n as f64;
            let want = dist.mean_ns();
            assert!((mean - want).abs() / want < 0.03, "{d}: {mean} vs {want}");
        }
    }
}
