//! An entry of the official MCP registry (its `server.json` format) as a
//! target: which of its packages to install, and the command line and
//! environment to launch it with (`mcp-witness audit --server-json FILE`).
//!
//! The format lives here, beside [`crate::spec::parse_package`] and the
//! installs, because an entry is one more way to name a pinned package
//! and how it is launched, which is what a sweep target is too; the
//! report only needs to say where its target came from, which is the
//! model's [`witness_model::audit::ServerJsonEntry`].
//!
//! What is read, and what it becomes:
//!
//! - `packages[N]`: `registryType` `npm` or `pypi` with `identifier` and an
//!   exact `version` is the package `npm:IDENTIFIER@VERSION` /
//!   `pypi:IDENTIFIER==VERSION`; any other registry type, or a package
//!   without an exact version, is refused. `transport.type` must be
//!   `stdio` (absent: stdio); a server that listens on a port is audited
//!   with `--url` once it runs. `runtimeHint` and `runtimeArguments` name
//!   the launcher a client would use (`npx`, `uvx`, `docker`): the witness
//!   installs the package and runs its program itself, so they are read
//!   and not used.
//! - `packageArguments`, in order: a positional argument is its `value`; a
//!   named one is its `name` (dashes included) and then its value as the
//!   next word, or joined to it when the name ends in `=` (`--mode=`).
//!   Without a `value`, an argument takes `--var KEY=VALUE` (KEY: a
//!   positional's `valueHint`, a named one's name without its leading
//!   dashes), else its `default`; a required one with neither is refused,
//!   an optional one is left out. `isRepeated` arguments take every
//!   `--var` given for their key.
//! - `environmentVariables`: `--env NAME=VALUE` wins, else `value`, else
//!   `default`; a required one with none is refused, an optional one is
//!   left unset.
//! - `{x}` inside a `value`: a declared store `x` (or `jail`) is left for
//!   the jail to expand to the jailed path, exactly as in an audit's
//!   command line; else `--var x=VALUE`; else the entry's `variables.x`
//!   `value`, then its `default`. A placeholder none of these fills is
//!   refused when it or what holds it is required (or the entry does not
//!   declare it: it would reach the server as literal text); in an
//!   optional argument or variable it leaves that argument out.
//! - A value given for an input that lists `choices` must be one of them.
//! - A secret (`isSecret`) is taken only from the user (`--env` for an
//!   environment variable, `--var` for an argument or a variable), never
//!   from the file's `value` or `default`: a published file holds a
//!   placeholder, not a secret. A required secret not given is refused;
//!   every secret value given is returned for the report's redaction.
//!
//! Unknown fields (`$schema`, `remotes`, `repository`, `_meta`, `icons`,
//! ...) are ignored, and an entry wrapped as the registry's API serves it
//! (`{"server": {...}, "_meta": {...}}`) is read as the entry inside.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use witness_model::sweep::Package;
use witness_text::clip;

/// One registry entry, as much of it as an audit reads.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerJson {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub packages: Vec<RegistryPackage>,
}

/// One of an entry's `packages[]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistryPackage {
    pub registry_type: String,
    pub identifier: String,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub runtime_hint: Option<String>,
    #[serde(default)]
    pub transport: Option<Transport>,
    #[serde(default)]
    pub package_arguments: Vec<Argument>,
    #[serde(default)]
    pub environment_variables: Vec<EnvironmentVariable>,
}

/// How a package's server is spoken to.
#[derive(Clone, Debug, Deserialize)]
pub struct Transport {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub url: Option<String>,
}

/// What the format says of every input: an argument, a variable, an
/// environment variable.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Input {
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub default: Option<String>,
    #[serde(default)]
    pub is_required: bool,
    #[serde(default)]
    pub is_secret: bool,
    #[serde(default)]
    pub format: Option<String>,
    #[serde(default)]
    pub choices: Option<Vec<String>>,
}

/// One of `packageArguments`.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Argument {
    Positional(PositionalArgument),
    Named(NamedArgument),
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PositionalArgument {
    #[serde(flatten)]
    pub input: Input,
    #[serde(default)]
    pub value_hint: Option<String>,
    #[serde(default)]
    pub is_repeated: bool,
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamedArgument {
    pub name: String,
    #[serde(flatten)]
    pub input: Input,
    #[serde(default)]
    pub is_repeated: bool,
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// One of `environmentVariables`.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentVariable {
    pub name: String,
    #[serde(flatten)]
    pub input: Input,
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// Why an entry cannot be audited. Each is one line, said before
/// anything is installed or launched.
#[derive(Debug, thiserror::Error)]
pub enum ServerJsonError {
    #[error("not a server.json entry: {0}")]
    Syntax(String),
    #[error(
        "the entry lists no packages[]: a remote-only server is audited with --url once it runs"
    )]
    NoPackages,
    #[error("--package {index}: the entry lists {count} package(s), numbered from 0")]
    NoSuchPackage { index: usize, count: usize },
    #[error(
        "no package of the entry can be installed here (registryType {found}); \
         mcp-witness installs npm and pypi packages"
    )]
    NothingInstallable { found: String },
    #[error(
        "package {index}: registryType {kind:?} cannot be installed here; \
         mcp-witness installs npm and pypi packages"
    )]
    Unsupported { index: usize, kind: String },
    #[error("package {index}: {why}")]
    Package { index: usize, why: String },
    #[error(
        "package {index}: transport {kind:?} is not stdio; start the server yourself \
         and audit it with `mcp-witness audit --url URL`"
    )]
    Transport { index: usize, kind: String },
    #[error("{what} has no value: give it with {how}")]
    Missing { what: String, how: String },
    #[error("{what}: {why}")]
    Invalid { what: String, why: String },
    #[error(
        "--var {name}: nothing in the entry's package takes it \
         (no {{{name}}} placeholder, and no argument {name} without a value)"
    )]
    UnusedVar { name: String },
}

/// What the user gave for the entry's inputs.
#[derive(Clone, Debug, Default)]
pub struct Given {
    /// The declared stores' names: `{name}` is left for the jail.
    pub stores: BTreeSet<String>,
    /// `--var NAME=VALUE`, in the order given.
    pub vars: Vec<(String, String)>,
    /// `--env NAME=VALUE`, in the order given.
    pub env: Vec<(String, String)>,
}

/// An entry's package, ready to install and launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// Which of `packages[]`, from 0.
    pub index: usize,
    pub package: Package,
    /// The arguments after the package's program, in the entry's order;
    /// `{store}` placeholders are still in (the jail expands them).
    pub args: Vec<String>,
    /// The server's variables: the entry's, in its order, then every other
    /// `--env` in the order given.
    pub env: Vec<(String, String)>,
    /// Every secret value given, for the report's redaction.
    pub secrets: Vec<String>,
}

/// The placeholder the jail itself expands (the jail's root).
const JAIL: &str = "jail";

impl ServerJson {
    /// Reads an entry, bare or wrapped as the registry's API serves it.
    pub fn parse(text: &str) -> Result<Self, ServerJsonError> {
        let syntax = |e: serde_json::Error| ServerJsonError::Syntax(e.to_string());
        let value: serde_json::Value = serde_json::from_str(text).map_err(syntax)?;
        let inner = match value.get("server") {
            Some(server) if server.is_object() && value.get("name").is_none() => server.clone(),
            _ => value,
        };
        serde_json::from_value(inner).map_err(syntax)
    }

    /// The package to audit and how to launch it: `packages[index]`, else
    /// the first whose `registryType` can be installed. Nothing is
    /// installed; every refusal is here.
    pub fn resolve(
        &self,
        index: Option<usize>,
        given: &Given,
    ) -> Result<Resolved, ServerJsonError> {
        if self.packages.is_empty() {
            return Err(ServerJsonError::NoPackages);
        }
        let index = match index {
            Some(index) if index >= self.packages.len() => {
                return Err(ServerJsonError::NoSuchPackage {
                    index,
                    count: self.packages.len(),
                });
            }
            Some(index) => index,
            None => self
                .packages
                .iter()
                .position(|p| installable(&p.registry_type))
                .ok_or_else(|| ServerJsonError::NothingInstallable {
                    found: self
                        .packages
                        .iter()
                        .map(|p| clip(&p.registry_type, 32))
                        .collect::<BTreeSet<_>>()
                        .into_iter()
                        .collect::<Vec<_>>()
                        .join(", "),
                })?,
        };
        let entry = &self.packages[index];
        let package = package_of(index, entry)?;
        if let Some(transport) = &entry.transport
            && transport.kind != "stdio"
        {
            return Err(ServerJsonError::Transport {
                index,
                kind: clip(&transport.kind, 32),
            });
        }
        let mut resolver = Resolver::new(given);
        let mut args = Vec::new();
        for argument in &entry.package_arguments {
            args.extend(resolver.argument(argument)?);
        }
        let mut env = Vec::new();
        for variable in &entry.environment_variables {
            if let Some(value) = resolver.environment(variable)? {
                env.push((variable.name.clone(), value));
            }
        }
        let named: BTreeSet<&str> = entry
            .environment_variables
            .iter()
            .map(|v| v.name.as_str())
            .collect();
        env.extend(
            given
                .env
                .iter()
                .filter(|(k, _)| !named.contains(k.as_str()))
                .cloned(),
        );
        if let Some(name) = given
            .vars
            .iter()
            .map(|(k, _)| k)
            .find(|k| !resolver.used.contains(k.as_str()))
        {
            return Err(ServerJsonError::UnusedVar {
                name: clip(name, 64),
            });
        }
        Ok(Resolved {
            index,
            package,
            args,
            env,
            secrets: resolver.secrets,
        })
    }
}

/// Whether this build installs packages of `registry_type`.
fn installable(registry_type: &str) -> bool {
    matches!(registry_type, "npm" | "pypi")
}

/// The pinned package of `packages[index]`, by the rules of
/// `npm:NAME@VERSION` and `pypi:NAME==VERSION`.
fn package_of(index: usize, entry: &RegistryPackage) -> Result<Package, ServerJsonError> {
    if !installable(&entry.registry_type) {
        return Err(ServerJsonError::Unsupported {
            index,
            kind: clip(&entry.registry_type, 32),
        });
    }
    let identifier = clip(&entry.identifier, 64);
    let Some(version) = entry.version.as_deref().filter(|v| !v.is_empty()) else {
        return Err(ServerJsonError::Package {
            index,
            why: format!(
                "{identifier} has no version; an audit installs exactly one version, \
                 so the entry must give it"
            ),
        });
    };
    let coordinate = match entry.registry_type.as_str() {
        "npm" => format!("npm:{}@{version}", entry.identifier),
        _ => format!("pypi:{}=={version}", entry.identifier),
    };
    crate::spec::parse_package(&coordinate).map_err(|why| ServerJsonError::Package { index, why })
}

/// Fills the inputs of one package from what the user gave, remembering
/// which `--var`s were used and which values were secrets.
struct Resolver<'a> {
    given: &'a Given,
    vars: BTreeMap<&'a str, Vec<&'a str>>,
    used: BTreeSet<&'a str>,
    secrets: Vec<String>,
}

/// What one placeholder-bearing text came to.
enum Filled {
    Text(String),
    /// An optional placeholder nobody gave: what holds it is left out.
    Absent,
}

impl<'a> Resolver<'a> {
    fn new(given: &'a Given) -> Self {
        let mut vars: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (k, v) in &given.vars {
            vars.entry(k.as_str()).or_default().push(v.as_str());
        }
        Self {
            given,
            vars,
            used: BTreeSet::new(),
            secrets: Vec::new(),
        }
    }

    /// Every value `--var key` gave (marked used), none if it was not given.
    fn var(&mut self, key: &str, secret: bool) -> Vec<String> {
        let Some((&key, values)) = self.vars.get_key_value(key) else {
            return Vec::new();
        };
        self.used.insert(key);
        let values: Vec<String> = values.iter().map(|v| (*v).to_owned()).collect();
        if secret {
            self.secrets.extend(values.iter().cloned());
        }
        values
    }

    /// `--var key` given once (or not at all); twice is a mistake unless
    /// what it fills repeats.
    fn single_var(
        &mut self,
        key: &str,
        secret: bool,
        what: &str,
    ) -> Result<Option<String>, ServerJsonError> {
        let mut values = self.var(key, secret);
        if values.len() > 1 {
            return Err(ServerJsonError::Invalid {
                what: format!("--var {}", clip(key, 64)),
                why: format!("given {} times, but {what} takes one value", values.len()),
            });
        }
        Ok(values.pop())
    }

    /// The words of one package argument (none when it is left out).
    fn argument(&mut self, argument: &Argument) -> Result<Vec<String>, ServerJsonError> {
        match argument {
            Argument::Positional(p) => {
                let key = p.value_hint.as_deref();
                let what = match key {
                    Some(hint) => format!("argument <{}>", clip(hint, 64)),
                    None => "a positional argument".to_owned(),
                };
                if p.input.value.is_none() && key.is_none() {
                    return Err(ServerJsonError::Invalid {
                        what,
                        why: "it has neither a value nor a valueHint".into(),
                    });
                }
                self.values(&p.input, &p.variables, key, p.is_repeated, &what)
            }
            Argument::Named(n) => {
                if n.name.is_empty() {
                    return Err(ServerJsonError::Invalid {
                        what: "a named argument".into(),
                        why: "its name is empty".into(),
                    });
                }
                let what = format!("argument {}", clip(&n.name, 64));
                let key = n.name.trim_start_matches('-').trim_end_matches('=');
                let values =
                    self.values(&n.input, &n.variables, Some(key), n.is_repeated, &what)?;
                let mut words = Vec::new();
                for value in values {
                    if n.name.ends_with('=') {
                        words.push(format!("{}{value}", n.name));
                    } else {
                        words.push(n.name.clone());
                        words.push(value);
                    }
                }
                Ok(words)
            }
        }
    }

    /// An argument's values: its `value` (placeholders filled), else
    /// `--var KEY`, else its `default`; none when it is optional and
    /// nothing gave it one.
    fn values(
        &mut self,
        input: &Input,
        variables: &BTreeMap<String, Input>,
        key: Option<&str>,
        repeated: bool,
        what: &str,
    ) -> Result<Vec<String>, ServerJsonError> {
        if let Some(value) = &input.value {
            return Ok(
                match self.fill(value, variables, input.is_required, what)? {
                    Filled::Text(text) => vec![text],
                    Filled::Absent => Vec::new(),
                },
            );
        }
        if let Some(key) = key {
            let given = if repeated {
                self.var(key, input.is_secret)
            } else {
                self.single_var(key, input.is_secret, what)?
                    .into_iter()
                    .collect()
            };
            for value in &given {
                one_of(input, value, what)?;
            }
            if !given.is_empty() {
                return Ok(given);
            }
        }
        if let Some(default) = input.default.as_ref().filter(|_| !input.is_secret) {
            return Ok(vec![default.clone()]);
        }
        if input.is_required {
            return Err(ServerJsonError::Missing {
                what: format!("{}{what}", if input.is_secret { "secret " } else { "" }),
                how: match key {
                    Some(key) => format!("--var {}=VALUE", clip(key, 64)),
                    None => "--var".into(),
                },
            });
        }
        Ok(Vec::new())
    }

    /// An environment variable's value: `--env` wins, else its `value`
    /// (placeholders filled), else its `default`; `None`: left unset.
    fn environment(
        &mut self,
        variable: &EnvironmentVariable,
    ) -> Result<Option<String>, ServerJsonError> {
        let input = &variable.input;
        let name = clip(&variable.name, 64);
        if variable.name.is_empty() || variable.name.contains(['=', '\0']) {
            return Err(ServerJsonError::Invalid {
                what: format!("environment variable {name:?}"),
                why: "not a variable name".into(),
            });
        }
        let given = self
            .given
            .env
            .iter()
            .rev()
            .find(|(k, _)| *k == variable.name)
            .map(|(_, v)| v.clone());
        let what = format!("environment variable {name}");
        if let Some(value) = given {
            if input.is_secret {
                self.secrets.push(value.clone());
            }
            one_of(input, &value, &what)?;
            return Ok(Some(value));
        }
        if input.is_secret {
            if input.is_required {
                return Err(ServerJsonError::Missing {
                    what: format!("secret {what}"),
                    how: format!(
                        "--env {name}=VALUE (a secret is taken only from --env, never from the file)"
                    ),
                });
            }
            return Ok(None);
        }
        if let Some(value) = &input.value {
            return Ok(
                match self.fill(value, &variable.variables, input.is_required, &what)? {
                    Filled::Text(text) => Some(text),
                    Filled::Absent => None,
                },
            );
        }
        if let Some(default) = &input.default {
            return Ok(Some(default.clone()));
        }
        if input.is_required {
            return Err(ServerJsonError::Missing {
                what,
                how: format!("--env {name}=VALUE"),
            });
        }
        Ok(None)
    }

    /// `text` with every `{x}` filled: a store (or `jail`) left for the
    /// jail, else `--var x`, else the variable's `value`, then `default`.
    fn fill(
        &mut self,
        text: &str,
        variables: &BTreeMap<String, Input>,
        required: bool,
        what: &str,
    ) -> Result<Filled, ServerJsonError> {
        let mut out = String::new();
        let mut rest = text;
        while let Some((before, word, after)) = next_placeholder(rest) {
            out.push_str(before);
            rest = after;
            if word == JAIL || self.given.stores.contains(word) {
                out.push('{');
                out.push_str(word);
                out.push('}');
                continue;
            }
            let declared = variables.get(word);
            let secret = declared.is_some_and(|v| v.is_secret);
            let shown = format!("variable {{{}}} of {what}", clip(word, 64));
            if let Some(value) = self.single_var(word, secret, &shown)? {
                if let Some(variable) = declared {
                    one_of(variable, &value, &shown)?;
                }
                out.push_str(&value);
                continue;
            }
            let from_file = declared
                .filter(|v| !v.is_secret)
                .and_then(|v| v.value.clone().or_else(|| v.default.clone()));
            if let Some(value) = from_file {
                out.push_str(&value);
                continue;
            }
            let must = required || declared.is_none_or(|v| v.is_required);
            if must {
                let secret = if secret { "secret " } else { "" };
                return Err(ServerJsonError::Missing {
                    what: format!("{secret}{shown}"),
                    how: format!(
                        "--var {word}=VALUE, or --store {word}=KIND:PATH for a store's path",
                        word = clip(word, 64)
                    ),
                });
            }
            return Ok(Filled::Absent);
        }
        out.push_str(rest);
        Ok(Filled::Text(out))
    }
}

/// A value the user gave for an input that lists its `choices` must be
/// one of them (the format's rule). A secret's value is never repeated.
fn one_of(input: &Input, value: &str, what: &str) -> Result<(), ServerJsonError> {
    let Some(choices) = input.choices.as_ref().filter(|c| !c.is_empty()) else {
        return Ok(());
    };
    if choices.iter().any(|c| c == value) {
        return Ok(());
    }
    let given = if input.is_secret {
        "the value given".to_owned()
    } else {
        format!("{:?}", clip(value, 64))
    };
    let listed: Vec<String> = choices.iter().take(12).map(|c| clip(c, 32)).collect();
    Err(ServerJsonError::Invalid {
        what: what.to_owned(),
        why: format!("{given} is not one of its choices ({})", listed.join(", ")),
    })
}

/// The first `{word}` of `text` (word: letters, digits, `_`, `-`, as the
/// audit's command-line placeholders): the text before it, the word, the
/// text after it.
fn next_placeholder(text: &str) -> Option<(&str, &str, &str)> {
    let mut from = 0;
    while let Some(open) = text[from..].find('{').map(|i| i + from) {
        let after = &text[open + 1..];
        if let Some(close) = after.find('}')
            && close > 0
            && after[..close]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Some((&text[..open], &after[..close], &after[close + 1..]));
        }
        from = open + 1;
    }
    None
}

#[cfg(test)]
mod tests;
