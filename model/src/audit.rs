//! The audit record: the ledger of one execution and the report built on it.
//!
//! Everything a check, a detector or a page says about an audit is read from
//! these types. They serialize to the versioned document
//! `mcp-witness.audit/v1`; `mcp-witness schema audit` prints its JSON Schema.
//!
//! Determinism: field order is declaration order, lists are in execution or
//! id order, and the only wall-clock values live under `volatile`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

// `CallStatus` and `Provenance` live with the other words in `vocab`; they
// are re-exported so `audit::CallStatus` keeps naming the same type.
pub use crate::vocab::{
    CallForm, CallStatus, CheckId, Expectation, FindingKind, Hint, IsolationLayer, IsolationLevel,
    Lane, MetadataKind, Op, ProbeStatus, Provenance, ToolClass, Verdict,
};

pub const AUDIT_SCHEMA: &str = "mcp-witness.audit/v1";

/// The store name under which the jail-wide observer reports: changes in the
/// jail's HOME, TMPDIR and working directory, outside every declared store.
/// `--store` refuses this name so it can never be mistaken for a declared one.
pub const JAIL_STORE: &str = "jail";

/// Where a harvested value was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Origin {
    /// The plan step whose result held the value (`call 2`): a
    /// [`CallRecord::step`], not a call id.
    pub call: String,
    /// The path inside that result (`json.id`).
    pub path: String,
}

impl Origin {
    /// The step `call` names (`call 2` → 2), if it names one. The word is
    /// `call` because plan files number their `[[call]]` entries that way.
    pub fn step(&self) -> Option<u32> {
        self.call.trim().strip_prefix("call")?.trim().parse().ok()
    }
}

/// The store object a `store` value was read from.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct StoreObject {
    /// The declared store's name.
    pub store: String,
    /// The object id in that store's baseline snapshot (`file/docs/a.txt`,
    /// `sqlite_master/table:customers`, `entity/Ada`); empty for the store
    /// itself (its jailed root directory or file).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub object: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Argument {
    pub name: String,
    pub value: Value,
    pub source: Provenance,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Origin>,
    /// For a `store` value: the object it was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<StoreObject>,
    /// For a structured argument: the values inside it that were harvested
    /// or read from a store, by their place in the argument
    /// (`[0].entityName`). The argument counts as `harvested` (or `store`)
    /// only when nothing inside it was invented.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<ArgumentPart>,
}

/// One real value inside a structured argument: harvested (`from`) or read
/// from a store (`object`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ArgumentPart {
    /// Where inside the argument (`[0].entityName`).
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Origin>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<StoreObject>,
}

/// One observed change to one object of one store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Effect {
    pub store: String,
    pub object: String,
    pub op: Op,
    /// For updates: whether existing content changed or vanished (destructive)
    /// rather than only new fields appearing. For deletes: `false` only when
    /// the store still keeps the content elsewhere (a git worktree file whose
    /// content the object database holds), so the delete destroys nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overwrite: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

impl Effect {
    /// Deletes and overwrites: what `destructiveHint` speaks about. A delete
    /// whose content the store still keeps is neither.
    pub fn is_destructive(&self) -> bool {
        match self.op {
            Op::Delete => self.overwrite != Some(false),
            Op::Update => self.overwrite.unwrap_or(true),
            Op::Create => false,
        }
    }

    /// `db:notes/welcome`, for evidence lists.
    pub fn qualified(&self) -> String {
        format!("{}:{}", self.store, self.object)
    }

    /// Seen by the jail-wide observer: outside every declared store.
    pub fn outside_stores(&self) -> bool {
        self.store == JAIL_STORE
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Outcome {
    pub status: CallStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A probe's answer about one object a call created or touched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeRecord {
    pub store: String,
    pub object: String,
    pub status: ProbeStatus,
    pub basis: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential_digest: Option<String>,
    /// Whose authority over the object was exercised (a role holding a
    /// table's grant), when the object can carry several holders'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

/// What a retry read in the error it answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorAnswer {
    /// The id of the failed call whose error text was read.
    pub call: u32,
    /// What the text asked for, in a few words.
    pub reading: String,
}

/// One tools/call as it was executed and observed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CallRecord {
    /// Execution order, from 1.
    pub id: u32,
    /// The plan step this call carries out (`call N` in a plan refers to it).
    pub step: u32,
    /// Which server session the call went to: 0 for the first, one more
    /// after each restart (the n-th `session` transcript holds its frames).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub session: u32,
    pub tool: String,
    /// Set on the identical repeat made to test an idempotence claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat_of: Option<u32>,
    /// Set on a call that follows the cursor an earlier page returned: the
    /// id of the first call of the pagination (RSP-07).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_of: Option<u32>,
    /// Set on a call of a tool whose every earlier call failed, tried again
    /// because the call with this id succeeded and its name says it sets up
    /// the session (`set_working_dir`, `use_vault`, `connect`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u32>,
    /// Set on a call that asks an output again, on the values it was
    /// sent, after the audit itself changed what it is made from (an
    /// export after an item was added): the id of that change's call. A
    /// confirmation of such a call carries the id of the change made
    /// again before it, and only an effect it shows again confirms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_change: Option<u32>,
    /// Set on a call that tries again after a failed call of the same
    /// tool, with what that failure's text asked for: which call's error it
    /// answers, and what the planner read there (`the flag force`, `valid
    /// values listed: main`, `a path relative to the store`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<ErrorAnswer>,
    /// Set on a call made to confirm a failure: the id of the call whose
    /// effect it repeats (the same arguments, or fresh ones where the
    /// effect was one-shot), after the stores were quiet. Its effects judge
    /// only that confirmation, never the tool's verdicts on their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirms: Option<u32>,
    /// The checks a plan attached to this call (the response lane judges them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<Expectation>,
    /// What the planner shaped this call to do (absent on a plan file's
    /// calls); a repeat, a page or a confirmation has its step's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<CallForm>,
    pub arguments: Vec<Argument>,
    pub outcome: Outcome,
    /// For a call made as a task (the tool's `execution.taskSupport` is
    /// `required`): how the task ended (`completed`, `failed`, `cancelled`,
    /// `unfinished`, or `not-made` when the server answered at once). Its
    /// effects are those of the whole task, from the call to its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// The result as served, with secrets replaced by digests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    /// First and last transcript frame of this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<[u64; 2]>,
    /// Changes between the snapshot just before and just after the call.
    pub effects: Vec<Effect>,
    /// Changes that appeared after this call's post-snapshot and before the
    /// next call's pre-snapshot: unattributed, charged to no call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub late_effects: Vec<Effect>,
    /// Changes during the call to objects the server also changes with no
    /// call in flight (its background, [`StoreBackground`]): listed apart
    /// and charged to no call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<Effect>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<ProbeRecord>,
    /// Out-of-band events the experiment applied after this call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events_after: Vec<String>,
    /// What those events changed: made by the experiment, charged to no call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub event_effects: Vec<Effect>,
    /// Outbound attempts the network observer's sink recorded between the
    /// snapshot just before and just after the call, beside its store
    /// effects (absent when there were none or the network was not observed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<NetworkAttempt>,
    /// Writes the server attempted on a store's original (the user's file
    /// or directory, which the sandbox hides) between the snapshot just
    /// before and just after the call: each path as the report names the
    /// store's source, never where the decoy that took the write lives.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub original_writes: Vec<String>,
    /// The confirmations the server asked for during the call (an
    /// elicitation, or a 2026-07-28 `input_required` one) and how the audit
    /// answered each: `accept: <message>` or `decline: <message>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub confirmations: Vec<String>,
}

/// One outbound attempt a jailed server made, as the network observer's
/// sink answered it: nothing was relayed, nothing left the machine.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct NetworkAttempt {
    /// `tcp` (a connect), `udp` (a datagram) or `dns` (a query for a name).
    pub protocol: String,
    /// The destination address the server asked for (for a name it looked
    /// up first, the sink's stand-in address for that name).
    pub address: String,
    pub port: u16,
    /// The host name: asked for (`dns`), or looked up before connecting to
    /// the stand-in address (`tcp`, `udp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// How many of the first bytes sent were kept (at most the sink's bound).
    pub bytes: u64,
    /// `blake3:<16 hex>` of those first bytes; never the bytes themselves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

impl NetworkAttempt {
    /// `tcp hooks.example.com (198.18.0.1):443`: one line for evidence.
    pub fn destination(&self) -> String {
        match &self.host {
            Some(host) if self.protocol == "dns" => {
                format!("dns query for {host} to {}:{}", self.address, self.port)
            }
            Some(host) => format!("{} {host} ({}):{}", self.protocol, self.address, self.port),
            None => format!("{} {}:{}", self.protocol, self.address, self.port),
        }
    }
}

/// A store's background: the objects the server changed while no call was
/// in flight, named by [`background_key`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StoreBackground {
    pub store: String,
    /// Sorted, each once.
    pub objects: Vec<String>,
}

/// What of an object background activity is learnt for, given its store's
/// kind (`StoreEntry::kind`; the jail-wide observer's objects are files):
/// a SQLite or PostgreSQL row by its table (an indexer that inserts new rows
/// keeps writing the same table), a record inside a file by its file, any
/// other object by itself. The same key names an object in
/// [`StoreBackground::objects`], in the idle controls and in the checks.
pub fn background_key<'a>(kind: &str, object: &'a str) -> &'a str {
    match kind {
        "sqlite" | "postgres" => object.split_once('/').map_or(object, |(table, _)| table),
        _ => object.split_once('#').map_or(object, |(file, _)| file),
    }
}

impl CallRecord {
    pub fn succeeded(&self) -> bool {
        self.outcome.status == CallStatus::Ok
    }

    /// Whether the call was asked for itself: not an identical repeat, a
    /// page or a confirmation, which ask again what another call asked
    /// (what a tool's call budget counts).
    pub fn asked_for_itself(&self) -> bool {
        self.repeat_of.is_none() && self.page_of.is_none() && self.confirms.is_none()
    }

    pub fn used_synthesized(&self) -> bool {
        self.arguments
            .iter()
            .any(|a| a.source == Provenance::Synthesized)
    }

    /// Whether any argument (or part of one) came from the server's own answers.
    pub fn used_harvested(&self) -> bool {
        self.arguments
            .iter()
            .any(|a| a.source == Provenance::Harvested || a.parts.iter().any(|p| p.from.is_some()))
    }

    /// Whether any argument (or part of one) was read from a declared store.
    pub fn used_store(&self) -> bool {
        self.arguments
            .iter()
            .any(|a| a.source == Provenance::Store || a.parts.iter().any(|p| p.object.is_some()))
    }

    /// The kinds of value its arguments had, each once, in vocabulary order
    /// (empty for a call without arguments).
    pub fn provenances(&self) -> Vec<Provenance> {
        let mut kinds: Vec<Provenance> = self.arguments.iter().map(|a| a.source).collect();
        kinds.sort();
        kinds.dedup();
        kinds
    }
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// Declared annotations, as typed booleans (`None`: not declared, or not a boolean).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Hints {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl Hints {
    pub fn from_annotations(annotations: Option<&Value>) -> Self {
        Self {
            read_only: Hint::ReadOnly.declared(annotations),
            destructive: Hint::Destructive.declared(annotations),
            idempotent: Hint::Idempotent.declared(annotations),
            open_world: Hint::OpenWorld.declared(annotations),
        }
    }

    pub fn declares_anything(&self) -> bool {
        self.read_only.is_some()
            || self.destructive.is_some()
            || self.idempotent.is_some()
            || self.open_world.is_some()
    }

    /// Safety class from annotations only; a name never changes it.
    pub fn class(&self) -> ToolClass {
        if self.read_only == Some(true) {
            ToolClass::ReadOnly
        } else if !self.declares_anything() {
            ToolClass::Unknown
        } else if self.destructive == Some(false) {
            ToolClass::Additive
        } else {
            // destructiveHint true, or unset with readOnlyHint false: an
            // unset destructiveHint means true (Hint::default_value).
            ToolClass::Destructive
        }
    }
}

/// A tool as served, with what mcp-witness reads from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolEntry {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `annotations` exactly as served (absent when the server sent none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    pub hints: Hints,
    pub class: ToolClass,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    /// `execution` exactly as served (`taskSupport`), when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<Value>,
    pub has_output_schema: bool,
    /// The `outputSchema` as served, when there is one (RSP-04, RSP-10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

/// What a verdict rests on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Evidence {
    /// Call ids (execution order) the verdict read.
    pub calls: Vec<u32>,
    /// The observed effects that decided it (store:object op).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<EvidenceEffect>,
    /// Probe basis lines, when a probe decided it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<String>,
    /// Outbound attempts that decided it (EFF-04).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<EvidenceNetwork>,
    /// Writes attempted on a store's original that decided it (EFF-01).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub original_writes: Vec<EvidenceOriginalWrite>,
}

/// A write attempted on a store's original that a verdict rests on: the
/// call and the original's path ([`CallRecord::original_writes`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EvidenceOriginalWrite {
    pub call: u32,
    pub path: String,
}

/// An outbound attempt a verdict rests on: the call and where it reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EvidenceNetwork {
    pub call: u32,
    /// [`NetworkAttempt::destination`].
    pub destination: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EvidenceEffect {
    pub call: u32,
    pub object: String,
    pub op: Op,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckResult {
    pub id: CheckId,
    pub tool: String,
    pub verdict: Verdict,
    /// One sentence a person can check against the evidence.
    pub reason: String,
    pub evidence: Evidence,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StoreEntry {
    pub name: String,
    pub kind: String,
    /// The path as the user gave it (the jailed copy's path is volatile).
    pub path: String,
    /// Whether it existed and was copied in, or started empty.
    pub existed: bool,
    pub observer: String,
    /// Columns (`table.column`) declared as filled by the server from the
    /// clock. The observer digests a clock value there as one stand-in, so
    /// these digests do not depend on when the audit ran; a change from one
    /// clock value to another in them is not seen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clock_columns: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Target {
    /// The command as given, placeholders unexpanded (empty for `--url`).
    pub command: Vec<String>,
    /// Names of the `--env` variables passed (values may be secrets: not kept).
    pub env: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_version: Option<String>,
    /// `http` when the server was audited behind a Streamable HTTP endpoint
    /// (absent for a launched stdio server). The endpoint itself is not kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// The published package the server was installed from
    /// (`audit npm:NAME@VERSION`, `pypi:NAME==VERSION`, or an `npx`/`uvx`
    /// line), pinned by version and by the registry's integrity hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<PackagePin>,
    /// The official MCP registry entry the target was read from
    /// (`audit --server-json`): its name and version, and which of its
    /// packages was installed (`package` then pins it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_json: Option<ServerJsonEntry>,
}

/// Where a target came from when it was a registry entry (`server.json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ServerJsonEntry {
    /// The entry's `name` (`io.github.owner/server`).
    pub name: String,
    /// The entry's `version`, when it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Which of its `packages[]` was installed, counted from 0.
    pub package: u32,
}

/// A published package, pinned: what was installed and run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PackagePin {
    /// `npm` or `pypi`.
    pub ecosystem: String,
    pub name: String,
    /// The exact version installed (checked against the install).
    pub version: String,
    /// The registry's hash of the installed archive as the client recorded
    /// it: `sha512-…` (npm's lock `integrity`) or `sha256=…` (pip's
    /// report). Absent when the client recorded none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<String>,
    /// The program the package declares that was run (npm `bin`, Python
    /// `console_scripts`).
    pub entry: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EraEntry {
    /// What was asked for: auto, modern or legacy.
    #[schemars(with = "String")]
    pub requested: crate::vocab::EraChoice,
    /// `modern` or `legacy`, when a session was established.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// How `server/discover` went, when it was tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discover: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Value>,
    pub instructions_present: bool,
}

/// How the server was isolated: the level the planner decides by, one
/// sentence, and every layer with whether it held.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IsolationEntry {
    pub level: IsolationLevel,
    pub detail: String,
    /// Each layer tried, in a fixed order, and whether it held (absent in
    /// documents written before layers were recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<LayerEntry>,
    /// Whether outbound attempts were observed, and by what (absent in
    /// documents written before the network observer, and for a remote
    /// server, which is not launched here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_observer: Option<NetworkObserverEntry>,
    /// The TCP ports the server listened on inside the jail's own network
    /// namespace, where a listening socket reaches no one outside it; read
    /// out of band around every call (absent when it listened on none,
    /// without a network namespace, where every bind is refused, and in
    /// documents written before servers could listen).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listening: Vec<ListeningSocket>,
}

/// One listening socket a jailed server held in its network namespace.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub struct ListeningSocket {
    /// `tcp` (the only protocol whose listening sockets are told apart
    /// from a client's).
    pub protocol: String,
    /// The address it was bound to: `127.0.0.1`, `0.0.0.0`, `::`, `::1`.
    pub address: String,
    pub port: u16,
}

/// The network observer of one audit: a sink inside the jail's network
/// namespace that answers every outbound attempt and relays none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NetworkObserverEntry {
    /// Every launch of the server had the sink in place before it ran;
    /// `false`: the network was not observed, and EFF-04 is untestable.
    pub observed: bool,
    /// How attempts reached the sink, or why the network was not observed.
    pub detail: String,
}

/// One isolation layer and what became of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LayerEntry {
    pub layer: IsolationLayer,
    /// The layer was in force for the server (set up before its first
    /// instruction ran); `false` says it was not, and `detail` why.
    pub held: bool,
    /// What it guaranteed, or why it was not in force.
    pub detail: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CatalogEntry {
    pub complete: bool,
    pub pages: u32,
    pub tools: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Tools the server listed that the client excluded and never called:
    /// their `x-mcp-header` declarations cannot be honoured (SEP-2243).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<ExcludedTool>,
}

/// A listed tool the client would not call, and why (fixed text, the
/// server's parameter names escaped).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExcludedTool {
    pub name: String,
    pub reason: String,
}

/// What a tool's own metadata says that may mislead a client or the model
/// reading it. Never a verdict: it changes no check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MetadataFinding {
    pub kind: MetadataKind,
    pub tool: String,
    /// A JSON Pointer into the tool as served (`/description`,
    /// `/inputSchema/properties/command`).
    pub field: String,
    /// The exact span, escaped: invisible characters written as `\u{200b}`,
    /// a secret-shaped string as its digest, never its value.
    pub span: String,
    /// Where the span starts in the field, in characters.
    pub at: usize,
    /// Why it was flagged, in one sentence.
    pub detail: String,
}

/// Something observed that is worth a reader's attention but is not a check verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    pub kind: FindingKind,
    pub detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FrameEntry {
    pub seq: u64,
    /// `out` (to the server) or `in` (from it).
    pub dir: String,
    pub t_us: u64,
    /// The line, secrets replaced by digests.
    pub text: String,
    pub bytes: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// One server process's wire record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessTranscript {
    /// `discover` (a process used only for era detection) or `session`.
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<String>,
    pub frames: Vec<FrameEntry>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_frames: u64,
    pub stderr_bytes: u64,
    /// The first bytes of stderr (bounded, secrets replaced by digests).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stderr: String,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Verdicts of one lane, counted by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LaneSummary {
    pub pass: usize,
    pub fail: usize,
    pub skip: usize,
    pub untestable: usize,
}

/// `pass`, `fail`, `skip` and `untestable` count the effect lane, as they
/// always have; the response lane is counted apart, under `response`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    pub pass: usize,
    pub fail: usize,
    pub skip: usize,
    pub untestable: usize,
    pub calls: usize,
    /// Observed in the declared stores, over every call.
    pub creates: usize,
    pub updates: usize,
    pub deletes: usize,
    /// Observed in the jail outside the declared stores (HOME, TMPDIR, the
    /// working directory), over every call.
    #[serde(default)]
    pub outside_stores: usize,
    /// Changes that appeared after a call had settled and before the next
    /// began, anywhere observed: seen, but charged to no call. Absent when
    /// there were none.
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub late: usize,
    /// The response lane's verdicts.
    #[serde(default)]
    pub response: LaneSummary,
    /// Metadata findings (not verdicts).
    #[serde(default)]
    pub metadata: usize,
}

fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}

impl Summary {
    /// The summary an audit's calls and verdicts add up to: every call
    /// counted, every verdict of both lanes, every effect charged to a call,
    /// apart from them the late effects (startup, shutdown and event effects
    /// are counted nowhere here), and the metadata findings.
    pub fn of(
        calls: &[CallRecord],
        checks: &[CheckResult],
        response: &[CheckResult],
        metadata: &[MetadataFinding],
    ) -> Self {
        let verdicts = VerdictTally::of(checks.iter().map(|c| c.verdict));
        let answered = VerdictTally::of(response.iter().map(|c| c.verdict));
        let effects = EffectTally::of(calls.iter().flat_map(|c| &c.effects));
        Self {
            pass: verdicts.pass,
            fail: verdicts.fail,
            skip: verdicts.skip,
            untestable: verdicts.untestable,
            calls: calls.len(),
            creates: effects.creates,
            updates: effects.updates,
            deletes: effects.deletes,
            outside_stores: effects.outside_stores,
            late: calls.iter().map(|c| c.late_effects.len()).sum(),
            response: LaneSummary {
                pass: answered.pass,
                fail: answered.fail,
                skip: answered.skip,
                untestable: answered.untestable,
            },
            metadata: metadata.len(),
        }
    }

    /// Whether either lane failed: what exit code 1 means.
    pub fn failed(&self) -> bool {
        self.fail > 0 || self.response.fail > 0
    }
}

/// Effects counted the one way every summary counts them: creates, updates
/// and deletes in the declared stores, and apart from them whatever the
/// jail-wide observer saw outside every store (whatever its op).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EffectTally {
    pub creates: usize,
    pub updates: usize,
    pub deletes: usize,
    pub outside_stores: usize,
}

impl EffectTally {
    pub fn of<'a>(effects: impl IntoIterator<Item = &'a Effect>) -> Self {
        let mut tally = Self::default();
        for effect in effects {
            let count = if effect.outside_stores() {
                &mut tally.outside_stores
            } else {
                match effect.op {
                    Op::Create => &mut tally.creates,
                    Op::Update => &mut tally.updates,
                    Op::Delete => &mut tally.deletes,
                }
            };
            *count += 1;
        }
        tally
    }
}

/// Verdicts counted by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerdictTally {
    pub pass: usize,
    pub fail: usize,
    pub skip: usize,
    pub untestable: usize,
}

impl VerdictTally {
    pub fn of(verdicts: impl IntoIterator<Item = Verdict>) -> Self {
        let mut tally = Self::default();
        for verdict in verdicts {
            *tally.count_mut(verdict) += 1;
        }
        tally
    }

    pub fn get(&self, verdict: Verdict) -> usize {
        match verdict {
            Verdict::Pass => self.pass,
            Verdict::Fail => self.fail,
            Verdict::Skip => self.skip,
            Verdict::Untestable => self.untestable,
        }
    }

    fn count_mut(&mut self, verdict: Verdict) -> &mut usize {
        match verdict {
            Verdict::Pass => &mut self.pass,
            Verdict::Fail => &mut self.fail,
            Verdict::Skip => &mut self.skip,
            Verdict::Untestable => &mut self.untestable,
        }
    }
}

/// A tool the planner left out, and why; its checks are `skip` with this reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkippedTool {
    pub tool: String,
    pub reason: String,
}

/// How the calls were chosen.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlannerEntry {
    /// `file` (a `--plan`) or `synthesized` (the planner).
    pub origin: String,
    /// Call ids made in the harvest pass (read-only tools, before anything else).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub harvest_calls: Vec<u32>,
    /// Whether destructive and unknown tools were allowed outside a
    /// network-isolated jail (`--include-destructive`).
    pub include_destructive: bool,
    /// Tools left out of the plan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedTool>,
    /// Every call went to a freshly started server, in a new session
    /// (`--session-per-call`), with the jail's stores as the calls before
    /// it left them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub session_per_call: bool,
}

/// The server started again in the same jail, on the stores as they were
/// left, and the session established again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Restart {
    /// The last call made on the session that ended.
    pub after_call: u32,
    /// Why it ended: the call's transport failure, or a fresh session per call.
    pub reason: String,
    /// The session the calls after it went to (1 for the first restart).
    pub session: u32,
    /// Changes observed while the new server started and settled: charged
    /// to no call (what the old one did while it was stopped is the late
    /// effect of its last call).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<Effect>,
}

/// What the jail-wide observer watched (EFF-05).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JailScope {
    /// The observer kind (`fs`).
    pub observer: String,
    /// Directories of the jail it watched, relative to the jail.
    pub watched: Vec<String>,
    /// What it left to the declared stores' own observers, relative to the
    /// jail: each store itself (a file store's file, with a database's
    /// `-journal`, `-shm` and `-wal`; a tree store's tree), never the folder
    /// around it, so a file written beside a store is seen.
    pub excluded: Vec<String>,
}

/// Values that differ from run to run by nature; nothing else may.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Volatile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
    /// Values the server took from the clock and wrote into what it answered
    /// (file times, row timestamps). They were replaced in this document by a
    /// token, so that a rerun writes the same bytes; the values themselves are
    /// not kept. Each entry says what kind of value was replaced and where.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clock: Vec<ClockReplaced>,
    /// How long the calls a plan bounded (`latency_under`) took to be
    /// answered. The verdict is in `response`; the measurement is here
    /// because it differs from run to run, and a deterministic run leaves
    /// it out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency: Vec<CallLatency>,
    /// Each store's background rate: how many changes the idle controls saw
    /// in how long. Measured, so it differs from run to run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<BackgroundRate>,
}

/// The changes one store saw with no call in flight, over the idle
/// controls' total time.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BackgroundRate {
    pub store: String,
    pub changes: u64,
    pub idle_ms: u64,
}

/// One call's measured latency.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CallLatency {
    pub call: u32,
    pub ms: u64,
}

/// Server clock values of one kind, replaced by a token.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClockReplaced {
    /// What kind of value (`JavaScript Date string`).
    pub kind: String,
    /// What stands in each value's place (`{clock}`).
    pub token: String,
    /// How many values were replaced.
    pub count: usize,
    /// JSON pointers of the strings that held them, in document order. A
    /// replaced frame keeps its `bytes`, the size that crossed the wire.
    pub at: Vec<String>,
}

/// What an audit exercised, and whether it could conclude anything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Coverage {
    /// Tools the server listed.
    pub tools: usize,
    /// Tools with at least one successful call.
    pub exercised: usize,
    /// Of those, the tools whose successful call used no invented value
    /// (every argument literal, harvested or from a store).
    pub on_real_values: usize,
    /// Whether the audit concluded: some effect check rests on what was
    /// observed (a `pass` or a `fail`), and the tools exercised reach
    /// `--min-coverage` when one was given.
    pub concluded: bool,
    /// Why it did not conclude, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_concluded: Option<String>,
    /// `--min-coverage`: the percentage of listed tools that had to be
    /// exercised for the audit to conclude.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_percent: Option<u8>,
    /// The catalog never arrived whole (`tools/list` failed or stopped
    /// part-way): there is no denominator to be a share of, so the share
    /// is 0 and the audit concludes nothing, never "0/0 (100%)".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_catalog: bool,
    /// Every listed tool, in catalog order.
    pub by_tool: Vec<ToolCoverage>,
    /// The safety claims the tools declare ([`Claim::of`]): each a check
    /// that an observation could break.
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub claims: usize,
    /// Of those, the claims whose check rests on an observation (`pass` or
    /// `fail`).
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub claims_tested: usize,
    /// Every claim that was not tested on a tool the planner asked to
    /// write (a `create` or `change` call): while one is left, the audit
    /// does not read PASSED.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub untested_writer_claims: Vec<Claim>,
}

/// One declared safety claim: a tool and the check that holds it to what
/// was observed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Claim {
    pub tool: String,
    pub check: CheckId,
    /// Why its check is not a `pass` or `fail`, when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl Claim {
    /// The checks that hold a tool's declared safety claims: EFF-01 for
    /// `readOnlyHint: true`, EFF-02 for a tool that says it destroys
    /// nothing (read-only, or `destructiveHint: false`), EFF-03 for
    /// `idempotentHint: true`, EFF-04 for `openWorldHint: false`. A claim
    /// of danger (`destructiveHint: true`) is no claim an observation can
    /// break, and an unset hint claims nothing.
    pub fn checks_of(hints: &Hints) -> Vec<CheckId> {
        let mut checks = Vec::new();
        if hints.read_only == Some(true) {
            checks.push(CheckId::Eff01);
        }
        if hints.read_only == Some(true) || hints.destructive == Some(false) {
            checks.push(CheckId::Eff02);
        }
        if hints.idempotent == Some(true) {
            checks.push(CheckId::Eff03);
        }
        if hints.open_world == Some(false) {
            checks.push(CheckId::Eff04);
        }
        checks
    }
}

/// One tool's coverage.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCoverage {
    pub tool: String,
    /// The call that exercised it: its first successful call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u32>,
    /// The kinds of value that call's arguments had (empty: no arguments).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<Provenance>,
    /// Why it was not exercised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl Coverage {
    /// The coverage of `report` (its tools, calls, planner and verdicts),
    /// held to `minimum_percent` of the listed tools when one is given.
    pub fn of(report: &AuditReport, minimum_percent: Option<u8>) -> Self {
        let by_tool: Vec<ToolCoverage> = report
            .tools
            .iter()
            .map(|tool| tool_coverage(report, &tool.name))
            .collect();
        let exercised = by_tool.iter().filter(|t| t.call.is_some()).count();
        let on_real_values = by_tool
            .iter()
            .filter(|t| t.call.is_some() && t.values.iter().all(|v| v.is_real()))
            .count();
        let tools = by_tool.len();
        let (claims, claims_tested, untested_writer_claims) = claims_of(report);
        let mut coverage = Self {
            tools,
            exercised,
            on_real_values,
            concluded: true,
            not_concluded: None,
            minimum_percent,
            no_catalog: !report.catalog.complete,
            by_tool,
            claims,
            claims_tested,
            untested_writer_claims,
        };
        coverage.not_concluded = coverage.why_not_concluded(&report.checks);
        coverage.concluded = coverage.not_concluded.is_none();
        coverage
    }

    /// The exercised share of the listed tools, in whole percent, rounded
    /// down: 100 for a server whose whole catalog lists nothing, 0 when the
    /// catalog never arrived whole.
    pub fn percent(&self) -> usize {
        if self.no_catalog {
            return 0;
        }
        (self.exercised * 100)
            .checked_div(self.tools)
            .unwrap_or(100)
    }

    /// For each kind of value, how many exercised tools used it in the call
    /// that exercised them (kinds no tool used are left out), in
    /// vocabulary order.
    pub fn kinds(&self) -> Vec<(Provenance, usize)> {
        Provenance::ALL
            .into_iter()
            .map(|kind| {
                let n = self
                    .by_tool
                    .iter()
                    .filter(|t| t.call.is_some() && t.values.contains(&kind))
                    .count();
                (kind, n)
            })
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// Whether `--min-coverage` (if any) is reached, counted exactly, by
    /// the tools exercised and by the claims tested alike.
    pub fn meets_minimum(&self) -> bool {
        self.minimum_percent.is_none_or(|min| {
            let min = usize::from(min);
            self.exercised * 100 >= min * self.tools
                && self.claims_tested * 100 >= min * self.claims
        })
    }

    /// The tested share of the declared claims, in whole percent, rounded
    /// down (100 when nothing is claimed).
    pub fn claims_percent(&self) -> usize {
        (self.claims_tested * 100)
            .checked_div(self.claims)
            .unwrap_or(100)
    }

    /// The tools that were not exercised, in catalog order.
    pub fn left(&self) -> impl Iterator<Item = &ToolCoverage> {
        self.by_tool.iter().filter(|t| t.call.is_none())
    }

    fn why_not_concluded(&self, checks: &[CheckResult]) -> Option<String> {
        if self.no_catalog {
            return Some("the tool catalog never arrived whole: coverage is unknown".to_owned());
        }
        let decided = checks
            .iter()
            .any(|c| matches!(c.verdict, Verdict::Pass | Verdict::Fail));
        if !decided {
            let observed = checks.iter().find_map(|c| {
                c.reason
                    .strip_prefix(NOTHING_OBSERVED)
                    .map(|_| c.reason.clone())
            });
            return Some(match observed {
                Some(reason) => format!("no effect check rests on an observation: {reason}"),
                None if self.exercised == 0 => {
                    "no effect check rests on a successful observed call: no tool was exercised"
                        .to_owned()
                }
                None => "no effect check rests on a successful observed call".to_owned(),
            });
        }
        let min = self.minimum_percent.map_or(0, usize::from);
        if self.exercised * 100 < min * self.tools {
            let left: Vec<&str> = self.left().map(|t| t.tool.as_str()).collect();
            return Some(format!(
                "{} of {} tools exercised ({}%), below --min-coverage {}%; not exercised: {}",
                self.exercised,
                self.tools,
                self.percent(),
                min,
                witness_text::clip(&left.join(", "), 400)
            ));
        }
        if !self.untested_writer_claims.is_empty() {
            let left: Vec<String> = self
                .untested_writer_claims
                .iter()
                .map(|c| format!("{} of {}", c.check.as_str(), c.tool))
                .collect();
            return Some(format!(
                "{} declared claim(s) of tools asked to write were never tested: {}",
                left.len(),
                witness_text::clip(&left.join(", "), 400)
            ));
        }
        if self.claims_tested * 100 < min * self.claims {
            return Some(format!(
                "{} of {} declared claims tested ({}%), below --min-coverage {}%",
                self.claims_tested,
                self.claims,
                self.claims_percent(),
                min
            ));
        }
        None
    }
}

/// The declared claims of `report`'s tools, how many were tested, and the
/// untested ones on tools a call was shaped to write.
fn claims_of(report: &AuditReport) -> (usize, usize, Vec<Claim>) {
    let (mut claims, mut tested, mut untested) = (0, 0, Vec::new());
    for tool in &report.tools {
        let asked_to_write = report
            .calls
            .iter()
            .any(|c| c.tool == tool.name && c.form.is_some_and(CallForm::writes));
        for check in Claim::checks_of(&tool.hints) {
            claims += 1;
            let result = report
                .checks
                .iter()
                .find(|c| c.id == check && c.tool == tool.name);
            match result {
                Some(r) if matches!(r.verdict, Verdict::Pass | Verdict::Fail) => tested += 1,
                _ if asked_to_write => untested.push(Claim {
                    tool: tool.name.clone(),
                    check,
                    why: result.map(|r| witness_text::clip(&r.reason, 300)),
                }),
                _ => {}
            }
        }
    }
    (claims, tested, untested)
}

/// How every check's reason begins when there was no channel to observe
/// anything (no store declared, nothing seen in the jail).
pub const NOTHING_OBSERVED: &str = "nothing was observed";

fn tool_coverage(report: &AuditReport, tool: &str) -> ToolCoverage {
    let calls: Vec<&CallRecord> = report.calls.iter().filter(|c| c.tool == tool).collect();
    // A tool that declares an outputSchema promises structuredContent with
    // every success: an answer without isError that lacks it is prose, most
    // often an error the server did not flag, and exercised nothing the
    // declaration describes (RSP-04 fails it too).
    let promises_structure = report
        .tools
        .iter()
        .any(|t| t.name == tool && t.has_output_schema);
    let structured = |c: &CallRecord| {
        !promises_structure
            || c.response
                .as_ref()
                .is_some_and(|r| r.get("structuredContent").is_some())
    };
    if let Some(ok) = calls.iter().find(|c| c.succeeded() && structured(c)) {
        return ToolCoverage {
            tool: tool.to_owned(),
            call: Some(ok.id),
            values: ok.provenances(),
            why: None,
        };
    }
    let why = match (
        calls.last(),
        report.planner.skipped.iter().find(|s| s.tool == tool),
    ) {
        (None, Some(skipped)) => format!("not called: {}", skipped.reason),
        (None, None) if report.planner.origin == "file" => "not named in the plan".to_owned(),
        (None, None) => "not called: the audit ended before it".to_owned(),
        (Some(last), _) => match calls.iter().rev().find(|c| c.succeeded()) {
            Some(unstructured) => format!(
                "answered without isError but without the structuredContent its outputSchema promises, not counted as a success: {}",
                failed_call(unstructured)
            ),
            None => failed_call(last),
        },
    };
    ToolCoverage {
        tool: tool.to_owned(),
        call: None,
        values: Vec::new(),
        why: Some(why),
    }
}

/// `tool error on synthesized values: Entity with name witness not found`.
fn failed_call(call: &CallRecord) -> String {
    let mut why = call.outcome.status.phrase().to_owned();
    if call.outcome.status != CallStatus::NotSent {
        why.push_str(if call.arguments.is_empty() {
            " with no arguments"
        } else if call.used_synthesized() {
            " on synthesized values"
        } else {
            " on real values"
        });
    }
    let said = call.outcome.detail.clone().or_else(|| {
        call.response
            .as_ref()
            .and_then(|r| r.pointer("/content/0/text"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    if let Some(said) = said {
        let line: String = said.split_whitespace().collect::<Vec<_>>().join(" ");
        let clipped: String = line.chars().take(160).collect();
        why.push_str(": ");
        why.push_str(&clipped);
        if clipped.len() < line.len() {
            why.push('…');
        }
    }
    why
}

/// The whole audit document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AuditReport {
    /// Always `mcp-witness.audit/v1`.
    pub schema: String,
    pub generator: String,
    pub target: Target,
    pub era: EraEntry,
    pub isolation: IsolationEntry,
    pub stores: Vec<StoreEntry>,
    /// The jail-wide observer beside the declared stores.
    #[serde(default)]
    pub jail_scope: JailScope,
    pub probe: String,
    /// False when the audit could not conclude (lost transport, incomplete catalog).
    pub complete: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete_reason: Option<String>,
    pub catalog: CatalogEntry,
    pub tools: Vec<ToolEntry>,
    #[serde(default)]
    pub planner: PlannerEntry,
    /// Changes made while the server started, before any call.
    pub startup_effects: Vec<Effect>,
    /// Probes of the objects already in the stores when the session began.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baseline_probes: Vec<ProbeRecord>,
    pub calls: Vec<CallRecord>,
    /// Times the server was started again in the same jail, after a call
    /// that timed out, sent an oversized answer or lost the transport (or
    /// before every call, with a fresh session per call).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restarts: Vec<Restart>,
    /// Changes that appeared while the server shut down.
    pub shutdown_effects: Vec<Effect>,
    /// What each store did with no call in flight, as the idle controls saw
    /// it: the objects the server changes on its own. Absent when no store
    /// changed while idle.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<StoreBackground>,
    /// Failures were reported without being confirmed (`--no-confirm`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unconfirmed: bool,
    /// Outbound attempts outside every call's window: while the server
    /// started, between calls, and while it shut down.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network_outside_calls: Vec<NetworkAttempt>,
    /// The effect lane: declarations held to observed effects.
    pub checks: Vec<CheckResult>,
    /// The response lane: what the server answered held to the protocol,
    /// its own outputSchema and the checks a plan attached (`RSP-xx`).
    #[serde(default)]
    pub response: Vec<CheckResult>,
    /// What the tools' own metadata says that may mislead (never a verdict).
    #[serde(default)]
    pub metadata: Vec<MetadataFinding>,
    pub findings: Vec<Finding>,
    pub summary: Summary,
    /// How many tools were exercised, on what kind of values, why the others
    /// were not, and whether anything could be concluded. Absent only when
    /// a plan file was carried out in full and concluded: every tool it
    /// names was exercised ([`Coverage::of`] gives the same numbers for any
    /// audit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
    /// 0 passed, 1 a check of either lane failed, 3 incomplete or nothing
    /// concluded.
    pub exit_code: i32,
    pub transcripts: Vec<ProcessTranscript>,
    pub volatile: Volatile,
}

impl AuditReport {
    pub fn tool(&self, name: &str) -> Option<&ToolEntry> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The verdict of `id` on `tool`, in whichever lane `id` belongs to.
    pub fn check(&self, id: CheckId, tool: &str) -> Option<&CheckResult> {
        self.lane(id.lane())
            .iter()
            .find(|c| c.id == id && c.tool == tool)
    }

    /// The verdicts of one lane.
    pub fn lane(&self, lane: Lane) -> &[CheckResult] {
        match lane {
            Lane::Effect => &self.checks,
            Lane::Response => &self.response,
        }
    }

    /// The call that carried out plan step `step` (its first call: an
    /// idempotence repeat shares the step, and a harvested value is read
    /// from the first call's result).
    pub fn call_for_step(&self, step: u32) -> Option<&CallRecord> {
        self.calls.iter().find(|c| c.step == step)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::case::{CaseReport, ToolObserved};

    fn results() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../experiments/results")
    }

    fn read<T: serde::de::DeserializeOwned>(path: &Path) -> T {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The tallies must count exactly as the engine and the lab counted the
    /// committed results, so either can switch to them without changing a
    /// byte of what they write.
    #[test]
    fn the_tallies_reproduce_every_committed_summary() {
        let mut audits: Vec<PathBuf> = std::fs::read_dir(results().join("audits"))
            .expect("experiments/results/audits")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        audits.sort();
        assert!(audits.len() > 10, "{audits:?}");
        for path in &audits {
            let report: AuditReport = read(path);
            assert_eq!(
                Summary::of(
                    &report.calls,
                    &report.checks,
                    &report.response,
                    &report.metadata
                ),
                report.summary,
                "{}",
                path.display()
            );
        }
        for name in ["case-filesystem", "case-memory", "case-sqlite"] {
            let case: CaseReport = read(&results().join(format!("{name}.json")));
            let report: AuditReport = read(&results().join(&case.audit));
            let mut by_tool: BTreeMap<String, EffectTally> = BTreeMap::new();
            for call in &report.calls {
                let tally = EffectTally::of(&call.effects);
                let entry = by_tool.entry(call.tool.clone()).or_default();
                entry.creates += tally.creates;
                entry.updates += tally.updates;
                entry.deletes += tally.deletes;
            }
            for (tool, observed) in &case.observed.by_tool {
                let tally = by_tool.get(tool).copied().unwrap_or_default();
                let counted = ToolObserved {
                    creates: tally.creates,
                    updates: tally.updates,
                    deletes: tally.deletes,
                    ..observed.clone()
                };
                assert_eq!(&counted, observed, "{name}: {tool}");
            }
            for (id, summary) in &case.checks {
                let tally = VerdictTally::of(summary.tools.values().copied());
                assert_eq!(
                    [tally.pass, tally.fail, tally.skip, tally.untestable],
                    [summary.pass, summary.fail, summary.skip, summary.untestable],
                    "{name}: {id}"
                );
            }
        }
    }

    #[test]
    fn effects_outside_the_stores_are_counted_apart_whatever_their_op() {
        let effect = |store: &str, op| Effect {
            store: store.into(),
            object: "x".into(),
            op,
            overwrite: None,
            before: None,
            after: None,
        };
        let effects = [
            effect("db", Op::Create),
            effect("db", Op::Create),
            effect("db", Op::Update),
            effect(JAIL_STORE, Op::Delete),
            effect(JAIL_STORE, Op::Create),
        ];
        assert_eq!(
            EffectTally::of(&effects),
            EffectTally {
                creates: 2,
                updates: 1,
                deletes: 0,
                outside_stores: 2
            }
        );
        let verdicts = VerdictTally::of([Verdict::Fail, Verdict::Pass, Verdict::Fail]);
        assert_eq!(verdicts.get(Verdict::Fail), 2);
        assert_eq!(verdicts.get(Verdict::Skip), 0);
    }
}
