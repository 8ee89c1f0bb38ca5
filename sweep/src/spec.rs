//! The sweep file: what to audit, and how.
//!
//! ```toml
//! name = "published"          # default: the file's stem
//! max_attempts = 3            # tries of a target that does not conclude
//! install_timeout_s = 900
//! audit_timeout_s = 600
//!
//! [defaults]                  # for every target that does not say otherwise
//! timeout_ms = 20000
//! settle_ms = 100
//! era = "auto"                # auto | modern | legacy
//! include_destructive = true
//! isolate_network = true
//!
//! [[target]]
//! name = "memory"
//! package = "npm:@modelcontextprotocol/server-memory@2026.8.31"
//! lock = "../cases/package-lock.json"   # optional: npm ci from this lock
//! bin = "mcp-server-memory"             # or module = "..." (pypi), or launch = [...]
//! env = { MEMORY_FILE_PATH = "{mem}" }
//! plan = "../cases/plans/memory.toml"   # absent: the planner
//! [[target.store]]
//! name = "mem"
//! kind = "jsonl"
//! file = "memory.jsonl"                 # or fixture = "fixtures/..."
//! ```
//!
//! Paths are relative to the sweep file. Everything is checked before any
//! target runs; a mistake is one line naming the file, and, when it is in a
//! target, the target.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use witness_engine::audit::{self, stable::ClockText};
use witness_engine::plan::Plan;
use witness_jail::StoreKind;
use witness_model::sweep::{AuditSettings, Ecosystem, Package, StoreDefinition, TargetDefinition};
use witness_model::vocab::EraChoice;

use crate::SweepError;
use crate::key::{pin_file, pin_files, pin_tree, target_key};

/// Defaults of the sweep-wide bounds.
pub const MAX_ATTEMPTS: u32 = 3;
pub const INSTALL_TIMEOUT_S: u64 = 900;
pub const AUDIT_TIMEOUT_S: u64 = 600;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    name: Option<String>,
    max_attempts: Option<u32>,
    install_timeout_s: Option<u64>,
    audit_timeout_s: Option<u64>,
    #[serde(default)]
    defaults: Options,
    #[serde(default, rename = "target")]
    targets: Vec<TargetFile>,
}

/// Audit options, sweep-wide under `[defaults]` or per target.
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    era: Option<String>,
    timeout_ms: Option<u64>,
    settle_ms: Option<u64>,
    include_destructive: Option<bool>,
    isolate_network: Option<bool>,
}

impl Options {
    /// `self`, with what it leaves unset taken from `defaults`.
    fn or(&self, defaults: &Options) -> Options {
        Options {
            era: self.era.clone().or_else(|| defaults.era.clone()),
            timeout_ms: self.timeout_ms.or(defaults.timeout_ms),
            settle_ms: self.settle_ms.or(defaults.settle_ms),
            include_destructive: self.include_destructive.or(defaults.include_destructive),
            isolate_network: self.isolate_network.or(defaults.isolate_network),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetFile {
    name: String,
    package: Option<String>,
    command: Option<Vec<String>>,
    bin: Option<String>,
    module: Option<String>,
    launch: Option<Vec<String>>,
    #[serde(default)]
    args: Vec<String>,
    lock: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    plan: Option<String>,
    #[serde(default)]
    clock_text: Vec<String>,
    #[serde(default, rename = "store")]
    stores: Vec<StoreFile>,
    era: Option<String>,
    timeout_ms: Option<u64>,
    settle_ms: Option<u64>,
    include_destructive: Option<bool>,
    isolate_network: Option<bool>,
}

impl TargetFile {
    fn options(&self) -> Options {
        Options {
            era: self.era.clone(),
            timeout_ms: self.timeout_ms,
            settle_ms: self.settle_ms,
            include_destructive: self.include_destructive,
            isolate_network: self.isolate_network,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreFile {
    name: String,
    kind: String,
    file: Option<String>,
    fixture: Option<String>,
    #[serde(default)]
    clock_columns: Vec<String>,
}

/// A sweep, read and checked.
#[derive(Clone, Debug)]
pub struct Sweep {
    pub name: String,
    /// The sweep file, absolute.
    pub file: PathBuf,
    /// Its directory, which relative paths in it start from.
    pub dir: PathBuf,
    pub max_attempts: u32,
    pub install_timeout: Duration,
    pub audit_timeout: Duration,
    /// In file order.
    pub targets: Vec<Target>,
}

/// One target, resolved: its definition and key, and where on this machine
/// the files its definition pins are.
#[derive(Clone, Debug)]
pub struct Target {
    pub key: String,
    pub definition: TargetDefinition,
    /// The plan's text (already checked to parse).
    pub plan: Option<String>,
    /// The lock file, absolute.
    pub lock: Option<PathBuf>,
    /// Each store's fixture, absolute, in the definition's store order.
    pub fixtures: Vec<Option<PathBuf>>,
}

impl Sweep {
    /// Reads and checks `path`. Nothing is installed or launched.
    pub fn load(path: &Path) -> Result<Self, SweepError> {
        let shown = path.display().to_string();
        let invalid = |message: String| SweepError::Invalid {
            path: shown.clone(),
            message,
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| invalid(format!("cannot read the sweep file: {e}")))?;
        let file: SweepFile = toml::from_str(&text).map_err(|e| syntax(&shown, &text, &e))?;
        let absolute = std::path::absolute(path).map_err(|e| invalid(e.to_string()))?;
        let dir = absolute
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/"));
        let name = match &file.name {
            Some(name) => name.clone(),
            None => path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        check_name(&name).map_err(|m| invalid(format!("sweep name {name:?}: {m}")))?;
        let bounds = Bounds::of(&file).map_err(invalid)?;
        if file.targets.is_empty() {
            return Err(invalid("it lists no [[target]]".into()));
        }
        let mut targets = Vec::new();
        for target in &file.targets {
            let resolved = resolve(target, &file.defaults, &dir).map_err(|m| {
                invalid(format!(
                    "target {:?}: {m}",
                    witness_text::clip(&target.name, 64)
                ))
            })?;
            targets.push(resolved);
        }
        check_unique(&targets).map_err(invalid)?;
        Ok(Self {
            name,
            file: absolute,
            dir,
            max_attempts: bounds.max_attempts,
            install_timeout: bounds.install_timeout,
            audit_timeout: bounds.audit_timeout,
            targets,
        })
    }
}

/// The sweep-wide bounds, checked.
struct Bounds {
    max_attempts: u32,
    install_timeout: Duration,
    audit_timeout: Duration,
}

impl Bounds {
    fn of(file: &SweepFile) -> Result<Self, String> {
        let max_attempts = file.max_attempts.unwrap_or(MAX_ATTEMPTS);
        if !(1..=20).contains(&max_attempts) {
            return Err(format!("max_attempts = {max_attempts}: it must be 1 to 20"));
        }
        let seconds = |value: Option<u64>, default: u64, what: &str| {
            let s = value.unwrap_or(default);
            if (1..=86_400).contains(&s) {
                Ok(Duration::from_secs(s))
            } else {
                Err(format!("{what} = {s}: it must be 1 to 86400"))
            }
        };
        Ok(Self {
            max_attempts,
            install_timeout: seconds(
                file.install_timeout_s,
                INSTALL_TIMEOUT_S,
                "install_timeout_s",
            )?,
            audit_timeout: seconds(file.audit_timeout_s, AUDIT_TIMEOUT_S, "audit_timeout_s")?,
        })
    }
}

/// A TOML error as one line: `FILE:LINE:COL: message`.
fn syntax(path: &str, text: &str, error: &toml::de::Error) -> SweepError {
    let at = error.span().map_or(0, |s| s.start).min(text.len());
    let before = &text.as_bytes()[..at];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = at
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1)
        + 1;
    SweepError::Syntax {
        path: path.to_owned(),
        line,
        column,
        message: one_line(error.message()),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Names of sweeps and targets: they name files and directories.
fn check_name(name: &str) -> Result<(), String> {
    let good = !name.is_empty()
        && name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if good {
        Ok(())
    } else {
        Err(
            "use 1 to 64 ASCII letters, digits, '.', '_' or '-', starting with a letter or digit"
                .into(),
        )
    }
}

/// Two targets may not share a name or a definition.
fn check_unique(targets: &[Target]) -> Result<(), String> {
    let mut names = BTreeSet::new();
    for target in targets {
        if !names.insert(target.definition.name.as_str()) {
            return Err(format!(
                "two targets are named {:?}",
                target.definition.name
            ));
        }
    }
    Ok(())
}

/// One target of the file, resolved against the defaults and the sweep's
/// directory.
fn resolve(file: &TargetFile, defaults: &Options, dir: &Path) -> Result<Target, String> {
    check_name(&file.name)?;
    let package = file.package.as_deref().map(parse_package).transpose()?;
    let command = launch_command(file, package.as_ref())?;
    let (stores, fixtures) = resolve_stores(&file.stores, dir)?;
    check_placeholders(&command, &file.env, &stores, package.is_some())?;
    let (plan, plan_text) = match &file.plan {
        Some(path) => {
            let pinned = pin_file(dir, path)?;
            let text =
                std::fs::read_to_string(dir.join(path)).map_err(|e| format!("plan {path}: {e}"))?;
            Plan::parse(&text).map_err(|e| format!("plan {path} is not valid: {e}"))?;
            (Some(pinned), Some(text))
        }
        None => (None, None),
    };
    let (lock, lock_path) = match (&file.lock, &package) {
        (None, _) => (None, None),
        (Some(_), None) => return Err("lock goes with a package, not a command".into()),
        (Some(path), Some(package)) => {
            let (pinned, absolute) = resolve_lock(dir, path, package)?;
            (Some(pinned), Some(absolute))
        }
    };
    for kind in &file.clock_text {
        clock_kind(kind)?;
    }
    let definition = TargetDefinition {
        name: file.name.clone(),
        package,
        lock,
        command,
        env: file.env.clone(),
        stores,
        plan,
        clock_text: file.clock_text.clone(),
        audit: settings(&file.options().or(defaults))?,
    };
    Ok(Target {
        key: target_key(&definition),
        definition,
        plan: plan_text,
        lock: lock_path,
        fixtures,
    })
}

/// The kind of clock value a `clock_text` entry names.
pub fn clock_kind(kind: &str) -> Result<ClockText, String> {
    kind.parse()
        .map_err(|e| format!("clock_text {kind:?}: {e}"))
}

/// A target's audit settings: what it and `[defaults]` say, else the
/// audit's own defaults, each checked against the audit's bounds.
fn settings(options: &Options) -> Result<AuditSettings, String> {
    let era = match &options.era {
        Some(text) => text
            .parse::<EraChoice>()
            .map_err(|e| format!("era {text:?}: {e}"))?,
        None => EraChoice::default(),
    };
    let timeout_ms = options.timeout_ms.unwrap_or(audit::TIMEOUT_MS);
    if !(1..=audit::MAX_TIMEOUT_MS).contains(&timeout_ms) {
        return Err(format!(
            "timeout_ms = {timeout_ms}: it must be 1 to {}",
            audit::MAX_TIMEOUT_MS
        ));
    }
    let settle_ms = options.settle_ms.unwrap_or(audit::SETTLE_MS);
    if settle_ms > audit::MAX_SETTLE_MS {
        return Err(format!(
            "settle_ms = {settle_ms}: it must be 0 to {}",
            audit::MAX_SETTLE_MS
        ));
    }
    Ok(AuditSettings {
        era,
        timeout_ms,
        settle_ms,
        include_destructive: options.include_destructive.unwrap_or(false),
        isolate_network: options.isolate_network.unwrap_or(true),
    })
}

/// `npm:NAME@VERSION` or `pypi:NAME==VERSION`, with an exact version.
pub fn parse_package(text: &str) -> Result<Package, String> {
    let bad = |why: &str| format!("package {text:?}: {why}");
    let (ecosystem, name, version) = if let Some(rest) = text.strip_prefix("npm:") {
        // The version follows the last '@'; a scope's '@' comes first.
        let at = rest
            .rfind('@')
            .filter(|&i| i > 0)
            .ok_or_else(|| bad("expected npm:NAME@VERSION"))?;
        (Ecosystem::Npm, &rest[..at], &rest[at + 1..])
    } else if let Some(rest) = text.strip_prefix("pypi:") {
        let (name, version) = rest
            .split_once("==")
            .ok_or_else(|| bad("expected pypi:NAME==VERSION"))?;
        (Ecosystem::Pypi, name, version)
    } else {
        return Err(bad("expected npm:NAME@VERSION or pypi:NAME==VERSION"));
    };
    let name_ok = match ecosystem {
        Ecosystem::Npm => npm_name(name),
        _ => plain_name(name),
    };
    if !name_ok {
        return Err(bad("not a package name"));
    }
    let version_ok = match ecosystem {
        Ecosystem::Npm => exact_semver(version),
        _ => exact_pep440(version),
    };
    if !version_ok {
        return Err(bad(
            "the version must be exact (1.2.3), not a range or a tag: a sweep pins what it audits",
        ));
    }
    Ok(Package {
        ecosystem,
        name: name.to_owned(),
        version: version.to_owned(),
    })
}

fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 214
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn npm_name(name: &str) -> bool {
    match name.strip_prefix('@') {
        Some(scoped) => scoped
            .split_once('/')
            .is_some_and(|(scope, bare)| plain_name(scope) && plain_name(bare)),
        None => plain_name(name),
    }
}

/// `MAJOR.MINOR.PATCH`, optionally `-pre` and `+build`.
fn exact_semver(version: &str) -> bool {
    let (core, _build) = version.split_once('+').unwrap_or((version, ""));
    let (core, pre) = core.split_once('-').unwrap_or((core, ""));
    let parts: Vec<&str> = core.split('.').collect();
    let label = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
    };
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && label(pre)
        && label(_build)
}

/// A release number that pins one version: digits first, no wildcard or
/// comparison.
fn exact_pep440(version: &str) -> bool {
    version.starts_with(|c: char| c.is_ascii_digit())
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '!' | '+' | '_' | '-'))
}

/// The server command: `command` for a command target; for a package,
/// `bin`, `module` (pypi) or `launch`, then `args`.
fn launch_command(file: &TargetFile, package: Option<&Package>) -> Result<Vec<String>, String> {
    let given = [
        file.bin.is_some(),
        file.module.is_some(),
        file.launch.is_some(),
    ];
    let Some(package) = package else {
        let command = file
            .command
            .clone()
            .ok_or("give a package (npm:... or pypi:...) or a command")?;
        if given.iter().any(|g| *g) || !file.args.is_empty() {
            return Err(
                "bin, module, launch and args go with a package; a command is given whole".into(),
            );
        }
        if command.first().is_none_or(|p| p.is_empty()) {
            return Err("the command is empty".into());
        }
        return Ok(command);
    };
    if file.command.is_some() {
        return Err("give a package or a command, not both".into());
    }
    if given.iter().filter(|g| **g).count() != 1 {
        return Err("say how the package is launched: one of bin, module or launch".into());
    }
    let mut command = match (&file.bin, &file.module, &file.launch, package.ecosystem) {
        (Some(bin), _, _, ecosystem) => {
            if bin.is_empty() || bin.contains('/') {
                return Err(format!(
                    "bin {bin:?}: a name under the package's bin directory"
                ));
            }
            match ecosystem {
                Ecosystem::Npm => vec![
                    "node".into(),
                    format!("{{install}}/node_modules/.bin/{bin}"),
                ],
                _ => vec![format!("{{install}}/venv/bin/{bin}")],
            }
        }
        (_, Some(module), _, Ecosystem::Pypi) => {
            vec![
                "{install}/venv/bin/python".into(),
                "-m".into(),
                module.clone(),
            ]
        }
        (_, Some(_), _, _) => return Err("module goes with a pypi package".into()),
        (_, _, Some(launch), _) if launch.first().is_some_and(|p| !p.is_empty()) => launch.clone(),
        _ => return Err("launch is empty".into()),
    };
    command.extend(file.args.iter().cloned());
    Ok(command)
}

/// The stores, checked, and where their fixtures are.
fn resolve_stores(
    stores: &[StoreFile],
    dir: &Path,
) -> Result<(Vec<StoreDefinition>, Vec<Option<PathBuf>>), String> {
    let mut definitions: Vec<StoreDefinition> = Vec::new();
    let mut fixtures = Vec::new();
    for store in stores {
        let what = format!("store {:?}", witness_text::clip(&store.name, 64));
        let (definition, fixture) =
            resolve_store(store, dir).map_err(|m| format!("{what}: {m}"))?;
        if definitions.iter().any(|d| d.name == definition.name) {
            return Err(format!("{what}: the name is used twice"));
        }
        definitions.push(definition);
        fixtures.push(fixture);
    }
    Ok((definitions, fixtures))
}

fn resolve_store(
    store: &StoreFile,
    dir: &Path,
) -> Result<(StoreDefinition, Option<PathBuf>), String> {
    // The rules of `--store NAME=KIND:PATH`.
    let name_ok = !store.name.is_empty()
        && store
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !name_ok {
        return Err("the name must be letters, digits, '_' or '-'".into());
    }
    if store.name == witness_model::audit::JAIL_STORE {
        return Err("the name is reserved for the jail-wide observer".into());
    }
    let kind = StoreKind::parse(&store.kind).ok_or_else(|| {
        format!(
            "unknown kind {:?} (expected sqlite, fs, jsonl or git)",
            store.kind
        )
    })?;
    if !store.clock_columns.is_empty() && kind != StoreKind::Sqlite {
        return Err("clock_columns go with a sqlite store".into());
    }
    for column in &store.clock_columns {
        if witness_observers::sqlite::ClockColumn::parse(column).is_none() {
            return Err(format!("clock column {column:?} is not table.column"));
        }
    }
    let (fixture, absolute, file) = match (&store.fixture, &store.file) {
        (Some(_), Some(_)) => {
            return Err("a fixture keeps its own file name: give fixture or file, not both".into());
        }
        (Some(path), None) => {
            let absolute = dir.join(path);
            let pinned = match kind {
                // A repository is a tree with its `.git` inside.
                StoreKind::Fs | StoreKind::Git if absolute.is_dir() => pin_tree(dir, path)?,
                StoreKind::Fs | StoreKind::Git => {
                    return Err(format!("fixture {path}: not a directory"));
                }
                _ if absolute.is_file() => pin_file(dir, path)?,
                _ => return Err(format!("fixture {path}: not a file")),
            };
            (Some(pinned), Some(absolute), None)
        }
        (None, Some(file)) if matches!(kind, StoreKind::Fs | StoreKind::Git) => {
            return Err(format!("file {file:?}: a directory store has no file name"));
        }
        (None, Some(file)) => {
            if file.is_empty() || file.contains('/') || file.starts_with('.') {
                return Err(format!("file {file:?}: a plain file name"));
            }
            (None, None, Some(file.clone()))
        }
        (None, None) => (None, None, None),
    };
    Ok((
        StoreDefinition {
            name: store.name.clone(),
            kind: kind.as_str().to_owned(),
            file,
            fixture,
            clock_columns: store.clock_columns.clone(),
        },
        absolute,
    ))
}

/// Every `{word}` in the command and the env must be a store, `{jail}`, or
/// (for a package) `{install}`: a misspelt placeholder would otherwise reach
/// the server as literal text.
fn check_placeholders(
    command: &[String],
    env: &BTreeMap<String, String>,
    stores: &[StoreDefinition],
    package: bool,
) -> Result<(), String> {
    if let Some(name) = env.keys().find(|k| k.is_empty() || k.contains(['=', '\0'])) {
        return Err(format!("env {name:?}: not a variable name"));
    }
    for text in command.iter().chain(env.values()) {
        for word in placeholders(text) {
            let known = word == "jail"
                || (word == "install" && package)
                || stores.iter().any(|s| s.name == word);
            if !known {
                return Err(format!(
                    "{{{word}}} names no store{}",
                    if word == "install" {
                        " ({install} is a package's install directory; a command has none)"
                    } else {
                        ""
                    }
                ));
            }
        }
    }
    Ok(())
}

/// The `{word}`s in `text` (word: letters, digits, `_`, `-`).
fn placeholders(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close)
                if close > 0
                    && after[..close]
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
            {
                out.push(&after[..close]);
                rest = &after[close + 1..];
            }
            _ => rest = after,
        }
    }
    out
}

/// The lock a package is installed from: for npm a `package-lock.json`
/// (its `package.json` beside it goes with it), for pypi a requirements
/// file; either must pin the package at its version.
fn resolve_lock(
    dir: &Path,
    path: &str,
    package: &Package,
) -> Result<(witness_model::sweep::Pinned, PathBuf), String> {
    let absolute = dir.join(path);
    let pinned = match package.ecosystem {
        Ecosystem::Npm => {
            if absolute
                .file_name()
                .is_none_or(|n| n != "package-lock.json")
            {
                return Err(format!("lock {path}: an npm lock is a package-lock.json"));
            }
            let manifest = absolute.with_file_name("package.json");
            let text = std::fs::read_to_string(&manifest)
                .map_err(|e| format!("lock {path}: its package.json: {e}"))?;
            let value: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| format!("lock {path}: its package.json: {e}"))?;
            if value["dependencies"][&package.name].as_str() != Some(package.version.as_str()) {
                return Err(format!(
                    "lock {path}: its package.json does not pin {}",
                    package.coordinate()
                ));
            }
            pin_files(dir, path, &["package.json", "package-lock.json"])?
        }
        _ => {
            let text =
                std::fs::read_to_string(&absolute).map_err(|e| format!("lock {path}: {e}"))?;
            let wanted = format!("{}=={}", normalize(&package.name), package.version);
            let pins = text.lines().any(|line| {
                let line = line.split('#').next().unwrap_or("").trim();
                line.split_once("==").is_some_and(|(n, v)| {
                    format!("{}=={}", normalize(n.trim()), v.trim()) == wanted
                })
            });
            if !pins {
                return Err(format!(
                    "lock {path}: it does not pin {}",
                    package.coordinate()
                ));
            }
            pin_file(dir, path)?
        }
    };
    Ok((pinned, absolute))
}

/// A Python distribution name as pip compares them.
fn normalize(name: &str) -> String {
    name.to_ascii_lowercase().replace(['_', '.'], "-")
}

#[cfg(test)]
mod tests;
