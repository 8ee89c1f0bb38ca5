//! The noise floor: how far a delta moves when nothing but the rerun
//! changed, estimated from each side's own repetitions.
//!
//! Within one side every repetition of a case ran with the same manifest,
//! model and server: they differ only because a model varies between runs.
//! Their sample variance is therefore the rerun noise of one run, and the
//! standard error of a difference of two means under that noise alone is
//!
//! ```text
//! SE = sqrt(s_before^2 / n_before + s_after^2 / n_after)
//! ```
//!
//! with `s^2` the sample variance (n - 1 in the denominator) of one side's
//! per-run values. The floor is `z · SE` (`z` = 3), and a delta is real only
//! when its size is strictly above the floor. Overall, the cases are the
//! same on both sides, so only the reruns are noise: the per-case standard
//! errors combine as `sqrt(sum of SE^2) / cases` for the mean over cases.
//!
//! Fewer than two concluded runs on a side leave no variance to estimate:
//! there is then no floor and no delta is called real. Two identical sides
//! have a zero floor and a zero delta, which is not above it.

use witness_model::agent::compare::{DeltaVerdict, FLOOR_Z, MIN_RUNS, Metric, MetricDelta};

/// One side's per-run values of one measure.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sample {
    values: Vec<f64>,
}

impl Sample {
    pub fn new(values: Vec<f64>) -> Self {
        Self { values }
    }

    fn n(&self) -> f64 {
        self.values.len() as f64
    }

    fn mean(&self) -> Option<f64> {
        (!self.values.is_empty()).then(|| self.values.iter().sum::<f64>() / self.n())
    }

    /// The sample variance over `n - 1`; none below [`MIN_RUNS`] values.
    fn variance(&self) -> Option<f64> {
        let mean = self.mean()?;
        let enough = self.values.len() >= usize::try_from(MIN_RUNS).unwrap_or(usize::MAX);
        enough
            .then(|| self.values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (self.n() - 1.0))
    }
}

/// A delta before rounding: the means, and the standard error of their
/// difference under rerun noise alone.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Raw {
    pub before: Option<f64>,
    pub after: Option<f64>,
    pub se: Option<f64>,
}

impl Raw {
    /// The two sides of one case.
    pub fn of(before: &Sample, after: &Sample) -> Self {
        let se = match (before.variance(), after.variance()) {
            (Some(vb), Some(va)) => Some((vb / before.n() + va / after.n()).sqrt()),
            _ => None,
        };
        Self {
            before: before.mean(),
            after: after.mean(),
            se,
        }
    }

    /// The mean over cases of each side's mean, and the combined standard
    /// error; `None` parts when any case lacks them.
    pub fn overall(cases: &[Raw]) -> Self {
        if cases.is_empty() {
            return Self::default();
        }
        let count = cases.len() as f64;
        let mean = |pick: fn(&Raw) -> Option<f64>| -> Option<f64> {
            let values: Option<Vec<f64>> = cases.iter().map(pick).collect();
            values.map(|v| v.iter().sum::<f64>() / count)
        };
        let squares: Option<f64> = cases.iter().map(|c| c.se.map(|se| se * se)).sum();
        Self {
            before: mean(|c| c.before),
            after: mean(|c| c.after),
            se: squares.map(|s| s.sqrt() / count),
        }
    }

    /// The delta as reported: rounded, with its floor and verdict.
    pub fn judged(&self, metric: Metric) -> MetricDelta {
        let (before, after) = (self.before.map(round), self.after.map(round));
        let delta = before.zip(after).map(|(b, a)| round(a - b));
        let floor = self.se.map(|se| round(FLOOR_Z * se));
        let verdict = match (delta, floor) {
            (None, _) => DeltaVerdict::NotMeasured,
            (Some(_), None) => DeltaVerdict::NoFloor,
            (Some(d), Some(f)) if d.abs() > f => match metric.rise_is_worse() {
                None => DeltaVerdict::Changed,
                Some(rise_is_worse) if (d > 0.0) == rise_is_worse => DeltaVerdict::Worse,
                Some(_) => DeltaVerdict::Better,
            },
            (Some(_), Some(_)) => DeltaVerdict::WithinNoise,
        };
        MetricDelta {
            metric,
            before,
            after,
            delta,
            floor,
            verdict,
        }
    }
}

/// Four decimals: enough for a share of 10,000 runs, and a report that
/// reads the same on every machine. `-0` becomes `0`.
fn round(value: f64) -> f64 {
    let rounded = (value * 10_000.0).round() / 10_000.0;
    if rounded == 0.0 { 0.0 } else { rounded }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(values: &[f64]) -> Sample {
        Sample::new(values.to_vec())
    }

    #[test]
    fn identical_sides_have_a_zero_delta_that_is_not_above_a_zero_floor() {
        let same = sample(&[3.0, 3.0, 3.0]);
        let judged = Raw::of(&same, &same).judged(Metric::Calls);
        assert_eq!((judged.delta, judged.floor), (Some(0.0), Some(0.0)));
        assert_eq!(judged.verdict, DeltaVerdict::WithinNoise);
    }

    #[test]
    fn a_deterministic_change_is_real_and_directed() {
        let judged =
            Raw::of(&sample(&[1.0, 1.0, 1.0]), &sample(&[0.0, 0.0, 0.0])).judged(Metric::PassRate);
        assert_eq!(judged.delta, Some(-1.0));
        assert_eq!(judged.verdict, DeltaVerdict::Worse);
        let judged = Raw::of(&sample(&[2.0, 2.0]), &sample(&[3.0, 3.0])).judged(Metric::Calls);
        assert_eq!(judged.verdict, DeltaVerdict::Worse);
        let judged = Raw::of(&sample(&[0.0, 0.0]), &sample(&[1.0, 1.0])).judged(Metric::PassRate);
        assert_eq!(judged.verdict, DeltaVerdict::Better);
        let judged = Raw::of(&sample(&[0.0, 0.0]), &sample(&[1.0, 1.0])).judged(Metric::FirstTool);
        assert_eq!(judged.verdict, DeltaVerdict::Changed);
    }

    #[test]
    fn the_floor_is_three_standard_errors_of_the_reruns() {
        // 8 of 10 passed before (s^2 = 1.6/9), 2 of 10 after (the same).
        let before = sample(&[1., 1., 1., 1., 1., 1., 1., 1., 0., 0.]);
        let after = sample(&[1., 1., 0., 0., 0., 0., 0., 0., 0., 0.]);
        let raw = Raw::of(&before, &after);
        let se = (2.0 * (1.6 / 9.0) / 10.0_f64).sqrt();
        assert!((raw.se.unwrap_or_default() - se).abs() < 1e-12);
        let judged = raw.judged(Metric::PassRate);
        assert_eq!(judged.floor, Some(round(3.0 * se)));
        assert_eq!(judged.delta, Some(-0.6));
        assert_eq!(judged.verdict, DeltaVerdict::Worse, "0.6 > 0.566");
        // One pass fewer before: 0.5 is not above 0.6.
        let before = sample(&[1., 1., 1., 1., 1., 1., 1., 0., 0., 0.]);
        let judged = Raw::of(&before, &after).judged(Metric::PassRate);
        assert_eq!(judged.verdict, DeltaVerdict::WithinNoise, "{judged:?}");
    }

    #[test]
    fn one_run_a_side_has_no_floor_and_nothing_measured_is_said_so() {
        let judged = Raw::of(&sample(&[1.0]), &sample(&[0.0, 0.0])).judged(Metric::PassRate);
        assert_eq!(
            (judged.floor, judged.verdict),
            (None, DeltaVerdict::NoFloor)
        );
        assert_eq!(judged.delta, Some(-1.0));
        let judged = Raw::of(&sample(&[]), &sample(&[1.0, 2.0])).judged(Metric::InputTokens);
        assert_eq!(judged.verdict, DeltaVerdict::NotMeasured);
    }

    #[test]
    fn overall_means_the_cases_and_combines_their_standard_errors() {
        let a = Raw {
            before: Some(1.0),
            after: Some(0.0),
            se: Some(0.3),
        };
        let b = Raw {
            before: Some(1.0),
            after: Some(1.0),
            se: Some(0.4),
        };
        let all = Raw::overall(&[a, b]);
        assert_eq!((all.before, all.after), (Some(1.0), Some(0.5)));
        assert!((all.se.unwrap_or_default() - 0.25).abs() < 1e-12);
        let unmeasured = Raw::overall(&[a, Raw::default()]);
        assert_eq!((unmeasured.before, unmeasured.se), (None, None));
        assert_eq!(Raw::overall(&[]), Raw::default());
    }

    #[test]
    fn rounding_is_to_four_decimals_without_negative_zero() {
        assert_eq!(round(1.0 / 3.0), 0.3333);
        assert_eq!(round(-0.00001).to_string(), "0");
    }
}
