//! A published package as a target: `npm:NAME@VERSION`, `pypi:NAME==VERSION`,
//! or the `npx …`/`uvx …` line a server's README gives, read into one
//! pinned package, installed into the sweep's pinned cache and launched
//! from there. Inside the jail `npx` or `uvx` could not fetch anything
//! (the network is the observer's sink), so such a line is read, never run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use witness_model::sweep::{Ecosystem, Package};
use witness_sweep::install::{Installs, MARKER};
use witness_sweep::package::{self, Installed};
use witness_sweep::server_json::{Given, ServerJson};

use crate::exit::invalid;

/// What a package line asks for: the package, which of its programs (when
/// the line names one) and the arguments after it.
#[derive(Debug, PartialEq, Eq)]
pub struct Line {
    pub package: Package,
    pub entry: Option<String>,
    pub args: Vec<String>,
}

/// Whether `words` is a package line (its first word `npm:…`, `pypi:…`,
/// `npx` or `uvx`), and if so what it asks for. `None`: an ordinary command.
pub fn parse(words: &[String]) -> Option<Result<Line, String>> {
    let first = words.first()?;
    let program = first.rsplit('/').next().unwrap_or(first);
    let rest = &words[1..];
    if first.starts_with("npm:") || first.starts_with("pypi:") {
        return Some(
            witness_sweep::spec::parse_package(first).map(|package| Line {
                package,
                entry: None,
                args: rest.to_vec(),
            }),
        );
    }
    match program {
        "npx" => Some(npx(rest)),
        "uvx" => Some(uvx(rest)),
        _ => None,
    }
}

/// `npx [-y|--yes|-q|--quiet] [-p|--package PKG ENTRY | PKG] [ARGS]`.
fn npx(words: &[String]) -> Result<Line, String> {
    let mut i = 0;
    let mut from: Option<String> = None;
    while let Some(word) = words.get(i) {
        match word.as_str() {
            "-y" | "--yes" | "-q" | "--quiet" | "--no-install" => i += 1,
            "-p" | "--package" => {
                from = Some(words.get(i + 1).ok_or("npx -p needs a package")?.clone());
                i += 2;
            }
            w if w.starts_with("--package=") => {
                from = Some(w["--package=".len()..].to_owned());
                i += 1;
            }
            w if w.starts_with('-') => {
                return Err(format!("npx option {w} is not understood here"));
            }
            _ => break,
        }
    }
    let rest = &words[i..];
    let (spec, entry, args) = match from {
        Some(spec) => {
            let (entry, args) = rest
                .split_first()
                .ok_or("npx -p PKG needs the program to run")?;
            (spec, Some(entry.clone()), args)
        }
        None => {
            let (spec, args) = rest.split_first().ok_or("npx needs a package")?;
            (spec.clone(), None, args)
        }
    };
    if spec.rfind('@').filter(|&i| i > 0).is_none() {
        return Err(format!(
            "{spec}: pin a version (npx -y {spec}@VERSION): an audit runs exactly one version"
        ));
    }
    let package = witness_sweep::spec::parse_package(&format!("npm:{spec}"))?;
    Ok(Line {
        package,
        entry,
        args: args.to_vec(),
    })
}

/// `uvx [--from PKG ENTRY | PKG] [ARGS]`, PKG as `NAME==VERSION` or `NAME@VERSION`.
fn uvx(words: &[String]) -> Result<Line, String> {
    let (spec, entry, args) = match words.split_first() {
        Some((flag, rest)) if flag == "--from" => {
            let (spec, rest) = rest.split_first().ok_or("uvx --from needs a package")?;
            let (entry, args) = rest
                .split_first()
                .ok_or("uvx --from PKG needs the program to run")?;
            (spec.clone(), Some(entry.clone()), args)
        }
        Some((w, _)) if w.starts_with('-') => {
            return Err(format!("uvx option {w} is not understood here"));
        }
        Some((spec, args)) => (spec.clone(), None, args),
        None => return Err("uvx needs a package".into()),
    };
    let pinned = match spec.split_once("==") {
        Some(_) => spec.clone(),
        None => match spec.split_once('@') {
            Some((name, version)) => format!("{name}=={version}"),
            None => {
                return Err(format!(
                    "{spec}: pin a version (uvx {spec}==VERSION): an audit runs exactly one version"
                ));
            }
        },
    };
    let package = witness_sweep::spec::parse_package(&format!("pypi:{pinned}"))?;
    Ok(Line {
        package,
        entry,
        args: args.to_vec(),
    })
}

/// The words of a PACKAGE argument: `npm:…`/`pypi:…` alone, or an
/// `npx`/`uvx` line split as a shell would.
pub fn words(text: &str) -> Result<Vec<String>> {
    if text.starts_with("npm:") || text.starts_with("pypi:") {
        return Ok(vec![text.to_owned()]);
    }
    let words =
        shlex::split(text).ok_or_else(|| invalid(format!("{text:?}: unbalanced quotes")))?;
    match parse(&words) {
        Some(_) => Ok(words),
        None => Err(invalid(format!(
            "{text:?} is not a package: expected npm:NAME@VERSION, pypi:NAME==VERSION \
             or an npx/uvx line (a command goes after --)"
        ))),
    }
}

/// Where packages are installed: `--installs`, else `$MCP_WITNESS_INSTALLS`,
/// else the user's cache directory.
pub fn installs_root(flag: Option<&PathBuf>) -> PathBuf {
    if let Some(dir) = flag {
        return dir.clone();
    }
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = env("MCP_WITNESS_INSTALLS") {
        return dir;
    }
    let cache = env("XDG_CACHE_HOME")
        .or_else(|| env("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("mcp-witness").join("installs")
}

/// Installs the line's package (unless it already is) and finds its program.
pub fn install(line: &Line, root: PathBuf) -> Result<Installed> {
    let installs = Installs { root };
    let dir = installs.dir_for_package(&line.package);
    if !dir.join(MARKER).is_file() {
        errln!(
            "mcp-witness: installing {} into {}",
            line.package.coordinate(),
            dir.display()
        );
    }
    let timeout = Duration::from_secs(witness_sweep::spec::INSTALL_TIMEOUT_S);
    Ok(package::prepare(
        &installs,
        &line.package,
        line.entry.as_deref(),
        timeout,
    )?)
}

/// An official MCP registry entry made a target: its package installed,
/// the command line and environment its inputs resolve to, the secrets
/// among them, and where it came from.
pub struct Entry {
    pub installed: Installed,
    pub command: Vec<String>,
    pub env: Vec<(String, String)>,
    pub secrets: Vec<String>,
    pub source: witness_model::audit::ServerJsonEntry,
}

/// Reads the entry at `path`, resolves `packages[index]` (else the first
/// installable one) against `given`, and only then installs it: every
/// refusal comes before anything is installed or launched.
pub fn entry(
    path: &Path,
    index: Option<usize>,
    given: &Given,
    installs: Option<&PathBuf>,
) -> Result<Entry> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| invalid(format!("--server-json {shown}: cannot read it: {e}")))?;
    let doc =
        ServerJson::parse(&text).map_err(|e| invalid(format!("--server-json {shown}: {e}")))?;
    let resolved = doc
        .resolve(index, given)
        .map_err(|e| invalid(format!("--server-json {shown}: {e}")))?;
    let line = Line {
        package: resolved.package,
        entry: None,
        args: resolved.args,
    };
    let installed = install(&line, installs_root(installs))?;
    let mut command = vec![installed.program.to_string_lossy().into_owned()];
    command.extend(line.args);
    Ok(Entry {
        installed,
        command,
        env: resolved.env,
        secrets: resolved.secrets,
        source: witness_model::audit::ServerJsonEntry {
            name: doc.name,
            version: doc.version,
            package: u32::try_from(resolved.index).unwrap_or(u32::MAX),
        },
    })
}

/// The report's pin of an installed package.
pub fn pin(installed: &Installed) -> witness_model::audit::PackagePin {
    witness_model::audit::PackagePin {
        ecosystem: match installed.package.ecosystem {
            Ecosystem::Npm => "npm".into(),
            _ => "pypi".into(),
        },
        name: installed.package.name.clone(),
        version: installed.package.version.clone(),
        integrity: installed.integrity.clone(),
        entry: installed.entry.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Result<Line, String> {
        let words: Vec<String> = text.split(' ').map(str::to_owned).collect();
        parse(&words).unwrap_or_else(|| Err("not a package line".into()))
    }

    #[test]
    fn the_forms_a_readme_gives_are_one_package() {
        let a = line("npm:@scope/server-x@1.2.3 --flag").unwrap_or_else(|e| panic!("{e}"));
        let b = line("npx -y @scope/server-x@1.2.3 --flag").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a, b);
        assert_eq!(a.package.coordinate(), "npm:@scope/server-x@1.2.3");
        assert_eq!(a.args, vec!["--flag".to_owned()]);
        let c = line("pypi:mcp-server-x==0.4.1").unwrap_or_else(|e| panic!("{e}"));
        let d = line("uvx mcp-server-x==0.4.1").unwrap_or_else(|e| panic!("{e}"));
        let e = line("uvx mcp-server-x@0.4.1").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c, d);
        assert_eq!(d, e);
        let f = line("uvx --from mcp-server-x==0.4.1 other --a").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.entry.as_deref(), Some("other"));
        assert_eq!(f.args, vec!["--a".to_owned()]);
        let g = line("npx -p pkg@2.0.0 tool x").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(g.entry.as_deref(), Some("tool"));
        assert_eq!(g.package.coordinate(), "npm:pkg@2.0.0");
    }

    #[test]
    fn unpinned_and_malformed_lines_are_refused_and_commands_are_not_lines() {
        assert!(line("npx -y @scope/server-x").is_err_and(|e| e.contains("pin a version")));
        assert!(line("uvx mcp-server-x").is_err_and(|e| e.contains("pin a version")));
        assert!(line("npx -y pkg@^1.2").is_err_and(|e| e.contains("exact")));
        assert!(line("npm:Bad Name@1.0.0").is_err());
        assert!(line("npx --registry x pkg@1.0.0").is_err());
        assert!(parse(&["node".to_owned(), "x.js".to_owned()]).is_none());
    }
}
