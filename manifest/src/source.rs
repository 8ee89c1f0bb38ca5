//! Where a manifest comes from: a pin file or a live server.
//!
//! A live server is a [`Target`] opened exactly the way an audit opens one —
//! launched in a jail with no stores, a scrubbed environment and (where the
//! kernel allows) no network, or reached at its `url:` endpoint — and asked
//! only for `tools/list`. No tool is ever called.

use std::path::PathBuf;
use std::sync::Arc;

use std::time::Duration;
use witness_wire::http::Endpoint;

use witness_jail::{JailSpec, Target};
use witness_wire::clock::{Clock, MonotonicClock};
use witness_wire::session::{EraChoice, Session};

use witness_model::manifest::{Pin, ServerId};

use super::ManifestError;
use witness_jail::redact::Redactor;

/// The prefix that marks a live server in `manifest diff` arguments.
pub const LIVE_PREFIX: &str = "live:";

/// One side of a comparison, or what `manifest pin` reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A pin file written by `manifest pin`.
    File(PathBuf),
    /// A server started over stdio from this command line.
    Live(Vec<String>),
    /// A server already running behind a Streamable HTTP endpoint (the text
    /// as given, for reports, and the validated endpoint).
    Remote(String, Endpoint),
}

/// Marks a `manifest diff` side that is a Streamable HTTP endpoint.
pub const URL_PREFIX: &str = "url:";

/// How live servers are fetched.
#[derive(Clone, Debug)]
pub struct FetchOptions {
    pub era: EraChoice,
    pub timeout: Duration,
    /// Variables passed to the server (credentials that gate tools, say).
    /// Their values are never written anywhere.
    pub env: Vec<(String, String)>,
    pub isolate_network: bool,
    /// How long to let the server settle after the handshake before the
    /// catalog is read: some servers register tools a moment later.
    pub settle: Duration,
}

impl Source {
    /// Reads a `manifest diff` argument: `live:COMMAND`, `url:URL` or a pin
    /// file path. A non-loopback URL needs `allow_remote` (and https).
    pub fn parse_with(argument: &str, allow_remote: bool) -> Result<Self, ManifestError> {
        if let Some(url) = argument.strip_prefix(URL_PREFIX) {
            let endpoint = Endpoint::parse(url, allow_remote)
                .map_err(|e| ManifestError::Invalid(e.to_string()))?;
            return Ok(Source::Remote(url.to_owned(), endpoint));
        }
        Self::parse(argument)
    }

    /// Reads a `manifest diff` argument: `live:COMMAND` or a pin file path.
    pub fn parse(argument: &str) -> Result<Self, ManifestError> {
        if let Some(rest) = argument.strip_prefix(LIVE_PREFIX) {
            let words = split_command(rest).map_err(|e| {
                ManifestError::Invalid(format!("{:?}: {e}", witness_text::clip(argument, 120)))
            })?;
            if words.is_empty() {
                return Err(ManifestError::Invalid(format!(
                    "{argument:?}: no command after {LIVE_PREFIX:?}"
                )));
            }
            return Ok(Source::Live(words));
        }
        if argument.is_empty() {
            return Err(ManifestError::Invalid(
                "an empty manifest argument: give a pin file or live:COMMAND".into(),
            ));
        }
        Ok(Source::File(PathBuf::from(argument)))
    }

    /// How the source is named in reports. A diff is committed and shared,
    /// so nothing secret-shaped in a command line or URL reaches it: a URL's
    /// query (where hosted servers put their keys) is shown as a digest, and
    /// credential-shaped words anywhere are masked like an audit's secrets.
    pub fn describe(&self) -> String {
        let named = match self {
            Source::File(path) => return path.display().to_string(),
            Source::Live(words) => format!("{LIVE_PREFIX}{}", join_command(words)),
            Source::Remote(url, _) => format!("{URL_PREFIX}{}", digest_query(url)),
        };
        masked(&named)
    }

    /// The pin file, when this source is one.
    pub fn file(&self) -> Option<&PathBuf> {
        match self {
            Source::File(path) => Some(path),
            Source::Live(_) | Source::Remote(..) => None,
        }
    }

    /// Loads a pin file or fetches a live server's catalog. A live catalog is
    /// pinned under `environment`; a file keeps the environment it names.
    pub fn fetch(&self, options: &FetchOptions, environment: &str) -> Result<Pin, ManifestError> {
        let target = match self {
            Source::File(path) => return super::load_pin(path),
            // Launched the way an audit launches a server, with no stores.
            Source::Live(command) => Target::launched(JailSpec {
                command: command.clone(),
                stores: Vec::new(),
                env: options.env.clone(),
                keep: false,
                isolate_network: options.isolate_network,
            }),
            Source::Remote(_, endpoint) => Target::remote(endpoint.clone(), Vec::new()),
        };
        fetch_catalog(&target, options, environment)
    }
}

/// Reaches the server (started in a jail and stopped after, or a remote one
/// only asked) and reads its whole catalog; only `tools/list` is sent. An
/// incomplete catalog is an error, never a shorter pin: half a manifest as
/// a baseline would hide every later change to the other half.
pub fn fetch_catalog(
    target: &Target,
    options: &FetchOptions,
    environment: &str,
) -> Result<Pin, ManifestError> {
    let mut target = target
        .open(options.timeout)
        .map_err(|e| ManifestError::Fetch(e.to_string()))?;
    let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::start());
    let mut launch = || target.connect(clock.clone()).map_err(|e| e.to_string());
    let opened = Session::open(&mut launch, options.era, options.timeout);
    let opened = opened.map(|(mut session, handshake)| {
        session.server.rpc.listen(options.settle);
        (session, handshake)
    });
    let (mut session, handshake) = match opened {
        Ok(pair) => pair,
        Err((error, mut discarded)) => {
            for server in &mut discarded {
                server.shutdown();
            }
            return Err(ManifestError::Fetch(format!("no session: {error}")));
        }
    };
    let listed = session.list_tools();
    session.server.shutdown();
    let catalog = listed.map_err(|e| ManifestError::Fetch(format!("tools/list failed: {e}")))?;
    if !catalog.complete {
        return Err(ManifestError::Incomplete(
            catalog.problem.unwrap_or_else(|| "no reason given".into()),
        ));
    }
    let server = ServerId::from_server_info(handshake.server_info.as_ref());
    Ok(Pin::from_catalog(&catalog.tools, environment, server))
}

/// Splits the text after `live:` into words the way a plain shell would for
/// simple cases: whitespace separates words; `'…'` is literal; `"…"` is
/// literal except that `\"` and `\\` stand for `"` and `\`; outside quotes a
/// backslash makes the next character literal. No variables, globs or
/// substitutions: nothing is ever passed to a shell.
pub fn split_command(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unterminated double quote".into()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => word.push(c),
                    None => return Err("a trailing backslash escapes nothing".into()),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// The inverse of [`split_command`] for display: words that need it are
/// single-quoted.
pub fn join_command(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%{}".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` (a command line, a URL) with credential-shaped words masked as
/// an audit masks secrets: for anything a diff shows or prints.
pub(super) fn masked(text: &str) -> String {
    let mut redactor = Redactor::default();
    redactor.learn_text(text);
    redactor.text(text)
}

/// `url` with its query replaced by a digest: two sides that differ only in
/// their query still read as different, and no key in it is shown.
pub(super) fn digest_query(url: &str) -> String {
    match url.split_once('?') {
        Some((base, query)) => {
            let digest = blake3::hash(query.as_bytes()).to_hex();
            format!("{base}?[query blake3:{}]", &digest[..16])
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_described_source_shows_no_key_from_its_url_or_command() {
        let key = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789";
        let url = format!("http://127.0.0.1:9/mcp?api_key={key}");
        let remote = Source::parse_with(&format!("{URL_PREFIX}{url}"), false).unwrap();
        let shown = remote.describe();
        assert!(!shown.contains(key), "{shown}");
        assert!(shown.starts_with("url:http://127.0.0.1:9/mcp?[query blake3:"));
        let other = Source::parse_with("url:http://127.0.0.1:9/mcp?api_key=other", false).unwrap();
        assert_ne!(
            other.describe(),
            shown,
            "different queries must stay distinguishable"
        );
        let live = Source::parse(&format!("live:server --token={key}")).unwrap();
        assert!(!live.describe().contains(key), "{}", live.describe());
        assert!(live.describe().starts_with("live:server --token="));
        let plain = Source::parse("live:node server.js --root /data").unwrap();
        assert_eq!(plain.describe(), "live:node server.js --root /data");
    }

    fn split(s: &str) -> Vec<String> {
        split_command(s).unwrap()
    }

    #[test]
    fn commands_split_on_whitespace_with_simple_quotes() {
        assert_eq!(split("  a  b\tc "), ["a", "b", "c"]);
        assert_eq!(
            split("python3 'my server.py' --x"),
            ["python3", "my server.py", "--x"]
        );
        assert_eq!(split(r#"say "a \"b\" c" d"#), ["say", r#"a "b" c"#, "d"]);
        assert_eq!(split(r#""C:\dir""#), [r#"C:\dir"#]);
        assert_eq!(split(r"a\ b"), ["a b"]);
        assert_eq!(split("x''"), ["x"]);
        assert_eq!(split("''"), [""]);
        assert_eq!(split("a'b'\"c\"d"), ["abcd"]);
        assert!(split_command("'open").is_err());
        assert!(split_command("\"open").is_err());
        assert!(split_command("end\\").is_err());
    }

    #[test]
    fn join_quotes_what_split_needs() {
        let words: Vec<String> = ["python3", "my server.py", "it's", "{jail}/db"]
            .map(String::from)
            .to_vec();
        let joined = join_command(&words);
        assert_eq!(joined, r"python3 'my server.py' 'it'\''s' {jail}/db");
        assert_eq!(split_command(&joined).unwrap(), words);
    }

    #[test]
    fn arguments_are_files_or_live_commands() {
        assert_eq!(
            Source::parse("manifests/prod.json").unwrap(),
            Source::File("manifests/prod.json".into())
        );
        assert_eq!(
            Source::parse("live:mcp-witness testbed serve").unwrap(),
            Source::Live(vec!["mcp-witness".into(), "testbed".into(), "serve".into()])
        );
        assert!(Source::parse("live:").unwrap_err().is_invalid());
        assert!(Source::parse("live:  ").unwrap_err().is_invalid());
        assert!(Source::parse("live:'x").unwrap_err().is_invalid());
        assert!(Source::parse("").unwrap_err().is_invalid());
    }
}
