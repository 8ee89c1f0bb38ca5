//! `mcp-witness doctor`: which isolation layers work on this machine.

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use witness_jail::sandbox::{self, Availability};
use witness_model::exit::ExitStatus;
use witness_model::vocab::{IsolationLayer, IsolationLevel};

use super::{Format, FormatArgs};

const HELP: &str = "\
Each layer is tried for real, exactly as an audit would use it: bubblewrap
makes its namespaces for `true`, and every Landlock rule set is enforced on
a throwaway thread. A layer listed as working is one an audit here gets.

What each layer guarantees and what stays out of reach: docs/security.md.
Install bubblewrap (Debian: apt-get install bubblewrap) for the namespaces;
Landlock needs a kernel with Landlock enabled: ABI 5 (Linux 6.10) for the
file-system rules, 4 for the network rules, 6 for the scopes.

The resource bounds (memory, processes, disk, cpu-time, open-files) are
listed with the mechanism that keeps each here: a cgroup beneath the
auditor's own where one can be made (memory and processes; a reached bound
is then a resource-limit finding), else a resource limit the sandbox's
helper sets on itself (RLIMIT_DATA, RLIMIT_NPROC inside the user namespace,
never for root, whom the kernel exempts; RLIMIT_FSIZE, RLIMIT_CPU,
RLIMIT_NOFILE). Change them with --memory, --processes, --disk,
--cpu-seconds and --open-files; they do not decide the exit code.

The network observer (EFF-04) is tried the same way: its sink is made in
the namespace of a sandbox that runs `true`. It needs bubblewrap, ip
(iproute2) and nft (nftables; Debian: apt-get install nftables).

Run in the repository, it also lists every layer the committed results
(experiments/results) were made with that this machine lacks, and what a
rerun of `lab` here would change: `lab` refuses to write over them.

Exit codes: 0 the layers contain a server here (destructive and unknown
tools are called), 1 they do not (such tools are left out unless
--include-destructive).";

#[derive(Args)]
#[command(after_help = HELP)]
pub struct DoctorArgs {
    #[command(flatten)]
    format: FormatArgs,
}

#[derive(Serialize)]
struct Layer {
    layer: IsolationLayer,
    works: bool,
    detail: String,
}

#[derive(Serialize)]
struct Doctor {
    level: IsolationLevel,
    detail: String,
    bwrap: Option<String>,
    layers: Vec<Layer>,
    /// Whether an audit here records outbound attempts (EFF-04), and how
    /// or why not.
    network_observer: ObserverLine,
    /// Layers the committed results (`experiments/results` under the
    /// working directory, when there) were made with and this machine
    /// lacks: `lab` refuses to write over them (`--allow-weaker`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    weaker_than_committed: Vec<super::weaker::Gap>,
}

/// Where `doctor` looks for committed results: the repository's own.
const COMMITTED: &str = "experiments/results";

#[derive(Serialize)]
struct ObserverLine {
    works: bool,
    detail: String,
}

pub fn run(args: DoctorArgs) -> Result<ExitStatus> {
    let available = sandbox::availability();
    let report = doctor(available);
    match args.format.format {
        Format::Json => outln!("{}", serde_json::to_string_pretty(&report)?),
        Format::Text => {
            if let Some(path) = &report.bwrap {
                outln!("bubblewrap: {path}");
            }
            for layer in &report.layers {
                let mark = if layer.works { "works  " } else { "missing" };
                outln!("{mark}  {:18} {}", layer.layer.as_str(), layer.detail);
            }
            let observer = &report.network_observer;
            let mark = if observer.works { "works  " } else { "missing" };
            outln!("{mark}  {:18} {}", "network-observer", observer.detail);
            outln!("isolation here: {} — {}", report.level, report.detail);
            for gap in &report.weaker_than_committed {
                outln!(
                    "weaker than {COMMITTED}: {} missing here: {}; to fix: {}",
                    gap.layers.join(", "),
                    gap.changes,
                    gap.install
                );
            }
        }
    }
    Ok(if report.level.contains_effects() {
        ExitStatus::Passed
    } else {
        ExitStatus::Failed
    })
}

fn doctor(available: &Availability) -> Doctor {
    let layers = sandbox::layers_here(available, true);
    let (level, detail) = sandbox::level_of(&layers);
    Doctor {
        level,
        detail,
        bwrap: available
            .bwrap
            .as_ref()
            .ok()
            .map(|p| p.display().to_string()),
        layers: layers
            .into_iter()
            .map(|l| {
                // Landlock's network rule that an audit here leaves to the
                // namespace works all the same (it is used where no
                // namespace holds): say both, not "missing".
                let left_to_namespace = l.layer == IsolationLayer::LandlockNet
                    && !l.held
                    && l.detail == sandbox::LANDLOCK_NET_LEFT_TO_NAMESPACE;
                match (&available.landlock_net, left_to_namespace) {
                    (Ok(()), true) => Layer {
                        layer: l.layer,
                        works: true,
                        detail: format!(
                            "works; not applied in an audit here: {}",
                            l.detail.trim_start_matches("not applied: ")
                        ),
                    },
                    (Err(why), true) => Layer {
                        layer: l.layer,
                        works: false,
                        detail: why.clone(),
                    },
                    (_, false) => Layer {
                        layer: l.layer,
                        works: l.held,
                        detail: l.detail,
                    },
                }
            })
            .collect(),
        weaker_than_committed: super::weaker::gaps(std::path::Path::new(COMMITTED), available),
        network_observer: match sandbox::probe_observer(available) {
            Ok(()) => ObserverLine {
                works: true,
                detail: witness_netsink::METHOD.into(),
            },
            Err(why) => ObserverLine {
                works: false,
                detail: format!("the network is not observed (EFF-04 untestable): {why}"),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn availability(landlock_net: Result<(), String>) -> Availability {
        Availability {
            bwrap: Ok("/usr/bin/bwrap".into()),
            landlock_fs: Ok(()),
            landlock_net,
            landlock_scope: Ok(()),
            helper: Some("/usr/bin/mcp-witness".into()),
            memory_cgroup: Err("no cgroup in this test".into()),
            pids_cgroup: Err("no cgroup in this test".into()),
            root: false,
        }
    }

    fn landlock_net(doctor: &Doctor) -> &Layer {
        doctor
            .layers
            .iter()
            .find(|l| l.layer == IsolationLayer::LandlockNet)
            .expect("landlock-net is listed")
    }

    #[test]
    fn landlock_net_works_where_the_kernel_has_it_whether_or_not_an_audit_applies_it() {
        // Beside bubblewrap's namespace and the observer (ip and nft here)
        // an audit leaves it to the namespace; without the observer it
        // refuses connects. Either way the kernel's rule works here.
        let here = doctor(&availability(Ok(())));
        let layer = landlock_net(&here);
        assert!(layer.works, "{}", layer.detail);
        if layer.detail.contains("not applied") {
            assert!(
                layer.detail.starts_with(
                    "works; not applied in an audit here: the jail's own network namespace"
                ),
                "{}",
                layer.detail
            );
        }
        let without = doctor(&availability(Err("Landlock ABI 3 here".into())));
        let layer = landlock_net(&without);
        assert!(!layer.works, "{}", layer.detail);
        assert_eq!(layer.detail, "Landlock ABI 3 here");
    }
}
