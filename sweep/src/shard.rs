//! Shards: which slice of a sweep this process audits.
//!
//! `--shard I/N` (I from 0 to N-1) wins. Without it the index comes from the
//! first of these that is set, so the sweep stays one plain process that any
//! engine able to start N copies with an index can run:
//!
//! | engine | index | count |
//! |---|---|---|
//! | any (our own) | `MCP_WITNESS_SHARD=I/N` | |
//! | Kubernetes Indexed Job | `JOB_COMPLETION_INDEX` (from 0) | `MCP_WITNESS_SHARD_COUNT` (the Job's `completions`; Kubernetes does not pass it) |
//! | Slurm job array, count given | `SLURM_ARRAY_TASK_ID` | `MCP_WITNESS_SHARD_COUNT` |
//! | Slurm job array | (`SLURM_ARRAY_TASK_ID` − `SLURM_ARRAY_TASK_MIN`) / `SLURM_ARRAY_TASK_STEP` | `SLURM_ARRAY_TASK_COUNT` |
//! | GitLab CI `parallel` (also Travis, Knapsack) | `CI_NODE_INDEX` − 1 (it counts from 1) | `CI_NODE_TOTAL` |
//! | CircleCI parallelism | `CIRCLE_NODE_INDEX` | `CIRCLE_NODE_TOTAL` |
//! | Buildkite parallel jobs | `BUILDKITE_PARALLEL_JOB` | `BUILDKITE_PARALLEL_JOB_COUNT` |
//!
//! A Slurm array's own variables describe the array that runs now, not the
//! sweep: a retry of one task (`sbatch --array=2`) is an array of one, whose
//! only task they make shard 0 of 1. With `MCP_WITNESS_SHARD_COUNT` set the
//! task id is the shard, so a task keeps its shard however it is rerun.
//!
//! A target belongs to shard `blake3(key) mod N`: a function of its key
//! alone, so every copy agrees without talking to the others, and a target
//! keeps its shard when others are added to the sweep.

use crate::SweepError;
use crate::key::shard_of;

/// The largest number of shards accepted (Kubernetes allows 10^5 indexes).
pub const MAX_SHARDS: u32 = 100_000;

/// One slice of a sweep: shard `index` of `count`, counted from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Whether the target with `key` is in this shard.
    pub fn contains(&self, key: &str) -> bool {
        shard_of(key, self.count) == self.index
    }

    /// Checks a shard built from numbers; `what` says where they came from.
    fn new(index: u32, count: u32, what: &str) -> Result<Self, SweepError> {
        if count == 0 || count > MAX_SHARDS {
            return Err(SweepError::Shard(format!(
                "{what}: the number of shards must be 1 to {MAX_SHARDS}"
            )));
        }
        if index >= count {
            return Err(SweepError::Shard(format!(
                "{what}: shard {index} of {count} does not exist (shards count from 0: 0/{count} to {}/{count})",
                count - 1
            )));
        }
        Ok(Self { index, count })
    }

    /// Parses `I/N`; `what` names the flag or variable in errors.
    pub fn parse(text: &str, what: &str) -> Result<Self, SweepError> {
        let bad = || {
            SweepError::Shard(format!(
                "{what} {:?}: expected I/N, shard I of N counted from 0 (0/3, 1/3, 2/3)",
                witness_text::clip(text, 40)
            ))
        };
        let (index, count) = text.trim().split_once('/').ok_or_else(bad)?;
        let index: u32 = index.trim().parse().map_err(|_| bad())?;
        let count: u32 = count.trim().parse().map_err(|_| bad())?;
        Self::new(index, count, &format!("{what} {text}"))
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Engines that set an index and a count, in the order they are consulted.
/// Base: what the engine's first index is.
const ENGINES: [(&str, &str, u32, &str); 4] = [
    (
        "JOB_COMPLETION_INDEX",
        "MCP_WITNESS_SHARD_COUNT",
        0,
        "Kubernetes Indexed Job",
    ),
    ("CI_NODE_INDEX", "CI_NODE_TOTAL", 1, "GitLab CI parallel"),
    (
        "CIRCLE_NODE_INDEX",
        "CIRCLE_NODE_TOTAL",
        0,
        "CircleCI parallelism",
    ),
    (
        "BUILDKITE_PARALLEL_JOB",
        "BUILDKITE_PARALLEL_JOB_COUNT",
        0,
        "Buildkite parallel job",
    ),
];

/// The shard to run and where it came from: `--shard` when given, else the
/// environment (read through `get`), else none (the whole sweep).
pub fn choose(
    flag: Option<&str>,
    get: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<(Shard, String)>, SweepError> {
    if let Some(text) = flag {
        return Ok(Some((Shard::parse(text, "--shard")?, "--shard".into())));
    }
    if let Some(text) = get("MCP_WITNESS_SHARD") {
        let shard = Shard::parse(&text, "MCP_WITNESS_SHARD")?;
        return Ok(Some((shard, "MCP_WITNESS_SHARD".into())));
    }
    if let Some(found) = from_kubernetes_or_ci(get, &ENGINES[..1])? {
        return Ok(Some(found));
    }
    if let Some(found) = from_slurm(get)? {
        return Ok(Some(found));
    }
    from_kubernetes_or_ci(get, &ENGINES[1..])
}

fn number(get: &dyn Fn(&str) -> Option<String>, name: &str) -> Result<Option<u32>, SweepError> {
    match get(name) {
        None => Ok(None),
        Some(text) => text.trim().parse().map(Some).map_err(|_| {
            SweepError::Shard(format!(
                "{name}={:?}: not a whole number",
                witness_text::clip(&text, 40)
            ))
        }),
    }
}

fn from_kubernetes_or_ci(
    get: &dyn Fn(&str) -> Option<String>,
    engines: &[(&str, &str, u32, &str)],
) -> Result<Option<(Shard, String)>, SweepError> {
    for (index_var, count_var, base, engine) in engines {
        let Some(index) = number(get, index_var)? else {
            continue;
        };
        let count = number(get, count_var)?.ok_or_else(|| {
            SweepError::Shard(format!(
                "{index_var} is set ({engine}) but {count_var} is not: set it to the number of shards"
            ))
        })?;
        let what = format!("{index_var}={index}, {count_var}={count} ({engine})");
        let index = index
            .checked_sub(*base)
            .ok_or_else(|| SweepError::Shard(format!("{what}: {index_var} counts from {base}")))?;
        return Ok(Some((Shard::new(index, count, &what)?, what)));
    }
    Ok(None)
}

fn from_slurm(get: &dyn Fn(&str) -> Option<String>) -> Result<Option<(Shard, String)>, SweepError> {
    let Some(id) = number(get, "SLURM_ARRAY_TASK_ID")? else {
        return Ok(None);
    };
    if let Some(count) = number(get, "MCP_WITNESS_SHARD_COUNT")? {
        let what = format!(
            "SLURM_ARRAY_TASK_ID={id}, MCP_WITNESS_SHARD_COUNT={count} (Slurm job array, task id = shard)"
        );
        return Ok(Some((Shard::new(id, count, &what)?, what)));
    }
    let missing = |name: &str| {
        SweepError::Shard(format!(
            "SLURM_ARRAY_TASK_ID is set (Slurm job array) but {name} is not"
        ))
    };
    let count =
        number(get, "SLURM_ARRAY_TASK_COUNT")?.ok_or_else(|| missing("SLURM_ARRAY_TASK_COUNT"))?;
    let min =
        number(get, "SLURM_ARRAY_TASK_MIN")?.ok_or_else(|| missing("SLURM_ARRAY_TASK_MIN"))?;
    let step = number(get, "SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
    let what =
        format!("SLURM_ARRAY_TASK_ID={id} of {count} from {min} by {step} (Slurm job array)");
    let offset = id
        .checked_sub(min)
        .filter(|o| o % step == 0)
        .ok_or_else(|| {
            SweepError::Shard(format!(
                "{what}: not an evenly stepped array; submit it as --array=0-{}",
                count.saturating_sub(1)
            ))
        })?;
    Ok(Some((Shard::new(offset / step, count, &what)?, what)))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name: &str| map.get(name).cloned()
    }

    fn shard(flag: Option<&str>, pairs: &[(&str, &str)]) -> Result<Option<Shard>, String> {
        choose(flag, &env(pairs))
            .map(|c| c.map(|(s, _)| s))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_flag_parses_i_of_n_from_zero_and_wins_over_the_environment() {
        let some = |index, count| Ok(Some(Shard { index, count }));
        assert_eq!(
            shard(Some("2/3"), &[("JOB_COMPLETION_INDEX", "0")]),
            some(2, 3)
        );
        assert_eq!(shard(Some(" 0/1 "), &[]), some(0, 1));
        for bad in ["3/3", "1", "a/3", "-1/3", "1/0", "1/3/4", "", "1/100001"] {
            let err = shard(Some(bad), &[]).err().unwrap_or_default();
            assert!(err.starts_with("--shard"), "{bad}: {err}");
            assert!(!err.contains('\n'), "one line: {err}");
        }
        assert_eq!(shard(None, &[]), Ok(None));
    }

    #[test]
    fn index_variables_of_each_engine_make_a_shard() {
        let some = |index, count| Ok(Some(Shard { index, count }));
        assert_eq!(shard(None, &[("MCP_WITNESS_SHARD", "1/4")]), some(1, 4));
        let k8s = [
            ("JOB_COMPLETION_INDEX", "2"),
            ("MCP_WITNESS_SHARD_COUNT", "3"),
        ];
        assert_eq!(shard(None, &k8s), some(2, 3));
        let slurm = [
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
        ];
        assert_eq!(shard(None, &slurm), some(4, 8));
        let stepped = [
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        assert_eq!(shard(None, &stepped), some(3, 4));
        // A retry of task 2 alone is an array of one; with the count given
        // it stays shard 2 of 3.
        let retry = [
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_MIN", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "1"),
        ];
        assert_eq!(shard(None, &retry), some(0, 1));
        let counted = [retry.as_slice(), &[("MCP_WITNESS_SHARD_COUNT", "3")]].concat();
        assert_eq!(shard(None, &counted), some(2, 3));
        let gitlab = [("CI_NODE_INDEX", "1"), ("CI_NODE_TOTAL", "2")];
        assert_eq!(shard(None, &gitlab), some(0, 2));
        let circle = [("CIRCLE_NODE_INDEX", "1"), ("CIRCLE_NODE_TOTAL", "2")];
        assert_eq!(shard(None, &circle), some(1, 2));
        let buildkite = [
            ("BUILDKITE_PARALLEL_JOB", "0"),
            ("BUILDKITE_PARALLEL_JOB_COUNT", "5"),
        ];
        assert_eq!(shard(None, &buildkite), some(0, 5));
        // A GitLab job that is not parallel sets only the total: no shard.
        assert_eq!(shard(None, &[("CI_NODE_TOTAL", "1")]), Ok(None));
    }

    #[test]
    fn half_set_or_impossible_variables_are_refused_in_one_line() {
        let cases: [&[(&str, &str)]; 6] = [
            &[("JOB_COMPLETION_INDEX", "0")],
            &[
                ("JOB_COMPLETION_INDEX", "3"),
                ("MCP_WITNESS_SHARD_COUNT", "3"),
            ],
            &[("CI_NODE_INDEX", "0"), ("CI_NODE_TOTAL", "2")],
            &[
                ("SLURM_ARRAY_TASK_ID", "4"),
                ("SLURM_ARRAY_TASK_COUNT", "2"),
            ],
            &[
                ("SLURM_ARRAY_TASK_ID", "4"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_STEP", "2"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
            ],
            &[
                ("SLURM_ARRAY_TASK_ID", "3"),
                ("SLURM_ARRAY_TASK_MIN", "3"),
                ("SLURM_ARRAY_TASK_COUNT", "1"),
                ("MCP_WITNESS_SHARD_COUNT", "3"),
            ],
        ];
        for pairs in cases {
            let err = shard(None, pairs).err().unwrap_or_default();
            assert!(!err.is_empty() && !err.contains('\n'), "{pairs:?}: {err}");
        }
    }

    #[test]
    fn every_key_falls_in_exactly_one_shard() {
        for count in 1..6 {
            for i in 0..50 {
                let key = format!("target{i}-0123456789abcdef");
                let owners = (0..count)
                    .filter(|&index| Shard { index, count }.contains(&key))
                    .count();
                assert_eq!(owners, 1, "{key} in {count}");
            }
        }
    }
}
