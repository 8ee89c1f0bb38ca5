//! A throwaway PostgreSQL cluster: `initdb` in a directory of the jail,
//! the postmaster listening on a Unix socket there and nowhere else, the
//! store's source restored into it.
//!
//! Roles: `witness` is the bootstrap superuser (the observer's); `server`
//! is the role the MCP server is handed: it owns the database and every
//! object restored, but is no superuser, so it cannot run programs on the
//! cluster's host (`COPY ... TO PROGRAM`) or read its files. The restore
//! runs as a temporary superuser whose objects are then reassigned to
//! `server`. Only `server` may connect without a password
//! (`pg_hba.conf`); every other role must prove one by SCRAM-SHA-256 (so
//! a role a tool creates with a password is exercised by a real login,
//! see `probe`), and the superusers' is
//! drawn at random per cluster and never leaves this process's memory, so
//! a server that names another role on the socket is refused.
//!
//! PostgreSQL refuses to run as root. When the auditor is root, `initdb`
//! and the postmaster run as the `postgres` system account the Debian
//! packages create (or `nobody` without it): the child drops to that uid
//! before exec. The postmaster gets a parent-death signal (SIGINT, a fast
//! shutdown), so it ends even when the auditor is killed outright; a
//! normal end stops it on drop.

use std::ffi::CString;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use witness_process::{Controlled, Launch, Recipients, Signal};

use crate::protocol::{Client, ProtocolError};

/// The port in the socket's name; nothing listens on TCP.
pub const PORT: u16 = 5432;
/// The observer's role: the bootstrap superuser.
pub const OWNER: &str = "witness";
/// The role and database the MCP server is handed.
pub const SERVER_ROLE: &str = "server";
pub const DATABASE: &str = "store";
/// The logical replication slot the observer reads.
pub const SLOT: &str = "mcp_witness";
const RESTORER: &str = "witness_restore";

/// Why a cluster could not be made ready.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error(
        "PostgreSQL server binaries not found (looked in $MCP_WITNESS_PG_BINDIR, /usr/lib/postgresql/*/bin and PATH); install Debian's postgresql package"
    )]
    NoBinaries,
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{what} failed: {detail}")]
    Step { what: String, detail: String },
    #[error("the cluster did not become ready: {0}")]
    NotReady(String),
    #[error("{what}: {source}")]
    Protocol {
        what: String,
        #[source]
        source: ProtocolError,
    },
    #[error("the socket path {0} is longer than a Unix socket allows; use a shorter TMPDIR")]
    SocketPath(PathBuf),
    #[error(
        "a connection string given as a store's source must not carry a password (it would be a secret on the command line and in the report); give it in PGPASSWORD or a password file (~/.pgpass, PGPASSFILE)"
    )]
    PasswordInSource,
}

impl ClusterError {
    /// Whether the store's source is what failed (it would not restore):
    /// the user's input rather than this machine.
    pub fn is_source_error(&self) -> bool {
        matches!(self, ClusterError::Step { what, .. } if what.starts_with("restoring"))
            || matches!(self, ClusterError::PasswordInSource)
    }
}

/// Where a store's data comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A SQL script (what `pg_dump` writes in plain format, or any seed).
    Sql(PathBuf),
    /// A `pg_dump` archive: custom (`-Fc`), directory (`-Fd`) or tar (`-Ft`).
    Archive(PathBuf),
    /// A live database, by a libpq URI without a password: dumped once, in
    /// read-only transactions, and never written.
    Live(String),
}

impl Source {
    /// Whether `text` is a libpq URI (`postgres://` or `postgresql://`)
    /// rather than a path.
    pub fn is_live(text: &str) -> bool {
        text.starts_with("postgres://") || text.starts_with("postgresql://")
    }

    /// A live source; refused when the URI carries a password.
    pub fn live(uri: &str) -> Result<Self, ClusterError> {
        if carries_password(uri) {
            return Err(ClusterError::PasswordInSource);
        }
        Ok(Source::Live(uri.to_owned()))
    }

    /// A file starting with `PGDMP`, a directory, or a `.tar` file is an
    /// archive; anything else is SQL.
    pub fn of_path(path: &Path) -> Self {
        let magic = File::open(path).ok().and_then(|mut f| {
            let mut head = [0u8; 5];
            f.read_exact(&mut head).ok().map(|_| head)
        });
        if path.is_dir()
            || magic.as_ref() == Some(b"PGDMP")
            || path.extension().is_some_and(|e| e == "tar")
        {
            Source::Archive(path.to_path_buf())
        } else {
            Source::Sql(path.to_path_buf())
        }
    }
}

/// Whether a libpq URI has a password: `user:password@` in its authority or
/// a `password` parameter.
fn carries_password(uri: &str) -> bool {
    let rest = uri.split_once("://").map_or(uri, |(_, rest)| rest);
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let in_userinfo = authority
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| userinfo.contains(':'));
    let in_query = rest.split_once('?').is_some_and(|(_, query)| {
        query
            .split('&')
            .any(|pair| pair.split('=').next() == Some("password"))
    });
    in_userinfo || in_query
}

/// The binaries of one PostgreSQL installation.
#[derive(Clone, Debug)]
pub struct Binaries {
    pub dir: PathBuf,
}

impl Binaries {
    /// `$MCP_WITNESS_PG_BINDIR`, else the newest `/usr/lib/postgresql/N/bin`
    /// (Debian keeps the server binaries off PATH), else PATH.
    pub fn find() -> Result<Self, ClusterError> {
        let usable = |dir: &Path| dir.join("initdb").is_file() && dir.join("postgres").is_file();
        if let Some(dir) = std::env::var_os("MCP_WITNESS_PG_BINDIR") {
            let dir = PathBuf::from(dir);
            return if usable(&dir) {
                Ok(Self { dir })
            } else {
                Err(ClusterError::NoBinaries)
            };
        }
        let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let major = e.file_name().to_str()?.parse::<u32>().ok()?;
                Some((major, e.path().join("bin")))
            })
            .filter(|(_, dir)| usable(dir))
            .collect();
        versions.sort();
        if let Some((_, dir)) = versions.pop() {
            return Ok(Self { dir });
        }
        std::env::var_os("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .find(|dir| usable(dir))
            .map(|dir| Self { dir })
            .ok_or(ClusterError::NoBinaries)
    }

    fn tool(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// The account the cluster runs as: `None` means the auditor's own (it is
/// not root).
#[derive(Clone, Copy, Debug)]
struct Account {
    uid: u32,
    gid: u32,
}

fn account() -> Option<Account> {
    if !rustix::process::geteuid().is_root() {
        return None;
    }
    for name in ["postgres", "nobody"] {
        let Ok(c) = CString::new(name) else { continue };
        // SAFETY: getpwnam with a valid C string; the entry it gives (static
        // storage, or null) is read at once, before anything else can call
        // it again.
        let ids = unsafe {
            let entry = libc::getpwnam(c.as_ptr());
            (!entry.is_null()).then(|| ((*entry).pw_uid, (*entry).pw_gid))
        };
        if let Some((uid, gid)) = ids
            && uid != 0
        {
            return Some(Account { uid, gid });
        }
    }
    None
}

/// Makes `cmd` run as `account` (when set): the standard library drops the
/// supplementary groups, then sets the gid and the uid, before the launch's
/// parent-death signal is set (changing credentials would clear it).
fn run_as(cmd: &mut Command, account: Option<Account>) {
    if let Some(a) = account {
        cmd.uid(a.uid).gid(a.gid);
    }
}

/// Where a cluster made in `dir` keeps its socket (short: a socket's path
/// is limited to about a hundred bytes).
pub fn socket_dir_of(dir: &Path) -> PathBuf {
    dir.join("s")
}

/// The libpq connection URI of the server's role to the store's database
/// through the socket in `socket_dir`.
pub fn connection_string(socket_dir: &Path) -> String {
    format!(
        "postgresql://{SERVER_ROLE}@localhost/{DATABASE}?host={}&port={PORT}",
        socket_dir.display()
    )
}

/// A running throwaway cluster. Dropping it stops the postmaster (fast
/// shutdown, then SIGKILL to its process group) and waits for it.
pub struct Cluster {
    dir: PathBuf,
    socket_dir: PathBuf,
    postmaster: Option<Controlled>,
    /// The superusers' password (hex, random per cluster).
    password: String,
}

impl Cluster {
    /// Creates the cluster in `dir` (which must exist and be empty),
    /// starts it and restores `source` into the database [`DATABASE`].
    pub fn create(dir: &Path, source: &Source) -> Result<Self, ClusterError> {
        let bin = Binaries::find()?;
        let account = account();
        let data = dir.join("data");
        let socket_dir = socket_dir_of(dir);
        let sock = crate::protocol::socket_path(&socket_dir, PORT);
        if sock.as_os_str().len() >= 100 {
            return Err(ClusterError::SocketPath(sock));
        }
        let io = |what: &str| {
            let what = what.to_owned();
            move |source| ClusterError::Io { what, source }
        };
        for (path, mode) in [(&data, 0o700), (&socket_dir, 0o755)] {
            std::fs::create_dir_all(path).map_err(io("cannot create the cluster's directory"))?;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
                .map_err(io("cannot set the cluster directory's mode"))?;
            if let Some(a) = account {
                std::os::unix::fs::chown(path, Some(a.uid), Some(a.gid))
                    .map_err(io("cannot hand the cluster's directory to its account"))?;
            }
        }
        let log = dir.join("postgres.log");
        let password = random_password().map_err(io("cannot draw the cluster's password"))?;
        // initdb reads the superuser's password from a file; it is removed
        // as soon as initdb is done.
        let pwfile = dir.join("initdb.pw");
        std::fs::write(&pwfile, &password).map_err(io("cannot write the password file"))?;
        std::fs::set_permissions(&pwfile, std::fs::Permissions::from_mode(0o600))
            .map_err(io("cannot set the password file's mode"))?;
        if let Some(a) = account {
            std::os::unix::fs::chown(&pwfile, Some(a.uid), Some(a.gid))
                .map_err(io("cannot hand the password file to the cluster's account"))?;
        }

        let mut initdb = Command::new(bin.tool("initdb"));
        initdb
            .arg("-D")
            .arg(&data)
            .args(["-U", OWNER, "--auth=password", "-E", "UTF8", "--locale=C"])
            .arg(format!("--pwfile={}", pwfile.display()))
            .arg("--no-sync")
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .stdin(Stdio::null());
        run_as(&mut initdb, account);
        let made = run(initdb, "initdb", Launch::new().death_signal(Signal::KILL));
        let _ = std::fs::remove_file(&pwfile);
        made?;
        // The server's role alone may come in without a password; no TCP
        // line at all (nothing listens there either).
        std::fs::write(
            data.join("pg_hba.conf"),
            format!("local all {SERVER_ROLE} trust\nlocal all all scram-sha-256\n"),
        )
        .map_err(io("cannot write pg_hba.conf"))?;

        let log_file = File::create(&log).map_err(io("cannot create the cluster's log"))?;
        let log_err = log_file
            .try_clone()
            .map_err(io("cannot create the cluster's log"))?;
        let mut postgres = Command::new(bin.tool("postgres"));
        postgres
            .arg("-D")
            .arg(&data)
            .arg("-k")
            .arg(&socket_dir)
            .args(["-p", &PORT.to_string()])
            .args([
                "-c",
                "listen_addresses=",
                "-c",
                "wal_level=logical",
                "-c",
                "max_replication_slots=4",
                "-c",
                "max_wal_senders=4",
                "-c",
                "fsync=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "unix_socket_permissions=0777",
                "-c",
                "logging_collector=off",
                "-c",
                "autovacuum=off",
            ])
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(log_err);
        run_as(&mut postgres, account);
        // An interrupted audit still reads the store: the postmaster is
        // stopped in order when the cluster drops, not by the signal.
        let child = Launch::new()
            .death_signal(Signal::INT)
            .kept_on_interrupt()
            .spawn(&mut postgres)
            .map_err(io("cannot start the cluster's postmaster"))?;
        let mut cluster = Self {
            dir: dir.to_path_buf(),
            socket_dir,
            postmaster: Some(child),
            password,
        };
        remember(&cluster.socket_dir, &cluster.password);
        cluster.wait_ready(&log)?;
        cluster.restore(&bin, source)?;
        Ok(cluster)
    }

    /// The directory holding the socket.
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    /// The cluster's directory (data, socket, log).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The postmaster's pid (its process group's too), while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.postmaster.as_ref().map(Controlled::id)
    }

    /// What the MCP server is handed for `{NAME}`: a libpq connection URI
    /// to the database as the server role through the socket. No password:
    /// the socket is the only door, and it is inside the jail.
    pub fn connection_string(&self) -> String {
        connection_string(&self.socket_dir)
    }

    /// A new session as the superuser (the observer's view: every row,
    /// row-level security or not).
    pub fn connect(&self, database: &str) -> Result<Client, ProtocolError> {
        Client::connect(
            &self.socket_dir,
            PORT,
            OWNER,
            database,
            Some(&self.password),
        )
    }

    fn wait_ready(&mut self, log: &Path) -> Result<(), ClusterError> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(child) = self.postmaster.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                self.postmaster = None;
                return Err(ClusterError::NotReady(format!(
                    "the postmaster exited ({status}): {}",
                    last_line(log)
                )));
            }
            let ready = self
                .connect("postgres")
                .and_then(|mut client| client.query("SELECT 1"))
                .is_ok();
            match ready {
                true => return Ok(()),
                false if Instant::now() > deadline => {
                    return Err(ClusterError::NotReady(last_line(log)));
                }
                _ => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    fn admin(&self, database: &str, sql: &str, what: &str) -> Result<(), ClusterError> {
        let protocol = |source| ClusterError::Protocol {
            what: what.to_owned(),
            source,
        };
        let mut client = self.connect(database).map_err(protocol)?;
        client.query(sql).map_err(protocol)?;
        Ok(())
    }

    fn restore(&self, bin: &Binaries, source: &Source) -> Result<(), ClusterError> {
        // One statement per query: CREATE DATABASE refuses a transaction,
        // and a simple query of several statements is one.
        for sql in [
            format!("CREATE ROLE {SERVER_ROLE} LOGIN"),
            format!(
                "CREATE ROLE {RESTORER} SUPERUSER LOGIN PASSWORD '{}'",
                self.password
            ),
            format!("CREATE DATABASE {DATABASE} OWNER {SERVER_ROLE}"),
        ] {
            self.admin("postgres", &sql, "preparing the cluster")?;
        }
        let pg_restore = |archive: &Path| {
            let mut cmd = Command::new(bin.tool("pg_restore"));
            cmd.args(["--no-owner", "--exit-on-error", "-d", DATABASE])
                .arg(archive);
            cmd
        };
        let (mut cmd, what) = match source {
            Source::Sql(path) => {
                let mut cmd = Command::new(bin.tool("psql"));
                cmd.args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-o", "/dev/null", "-f"])
                    .arg(path);
                (cmd, format!("restoring {}", path.display()))
            }
            Source::Archive(path) => (
                pg_restore(path),
                format!("restoring the archive {}", path.display()),
            ),
            Source::Live(uri) => {
                let archive = self.dump_live(bin, uri)?;
                (pg_restore(&archive), format!("restoring the dump of {uri}"))
            }
        };
        cmd.arg("-h")
            .arg(&self.socket_dir)
            .args(["-p", &PORT.to_string(), "-U", RESTORER])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("PGDATABASE", DATABASE)
            .env("PGPASSWORD", &self.password)
            .env("PGCONNECT_TIMEOUT", "30")
            .stdin(Stdio::null());
        run(cmd, &what, Launch::new())?;
        // Everything restored belongs to the server's role; every table
        // logs its whole old row, so the observer sees old values.
        self.admin(
            DATABASE,
            &format!(
                "REASSIGN OWNED BY {RESTORER} TO {SERVER_ROLE}; DROP OWNED BY {RESTORER}; \
                 DO $$ DECLARE t record; BEGIN \
                 FOR t IN SELECT c.oid::regclass AS name FROM pg_class c \
                 JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') \
                 AND n.nspname NOT LIKE 'pg_toast%' LOOP \
                 EXECUTE format('ALTER TABLE %s REPLICA IDENTITY FULL', t.name); END LOOP; END $$;"
            ),
            "handing the restored objects to the server's role",
        )?;
        self.admin(
            "postgres",
            &format!("DROP ROLE {RESTORER};"),
            "dropping the restore role",
        )?;
        self.admin(
            DATABASE,
            &format!("SELECT pg_create_logical_replication_slot('{SLOT}', 'test_decoding');"),
            "creating the replication slot",
        )?;
        Ok(())
    }

    /// Dumps a live database into this cluster's directory with its own
    /// `pg_dump`: every transaction read-only (`default_transaction_read_only`
    /// on top of pg_dump's own read-only snapshot), no subscriptions or
    /// publications (restoring a subscription would connect out). The
    /// user's libpq settings for reaching it (password, password file, TLS,
    /// service) are passed through; nothing else of the environment is.
    fn dump_live(&self, bin: &Binaries, uri: &str) -> Result<PathBuf, ClusterError> {
        let archive = self.dir.join("source.dump");
        let mut cmd = Command::new(bin.tool("pg_dump"));
        cmd.args(["-Fc", "--no-subscriptions", "--no-publications", "-f"])
            .arg(&archive)
            .arg("-d")
            .arg(uri)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("PGOPTIONS", "-c default_transaction_read_only=on")
            .env("PGCONNECT_TIMEOUT", "30")
            .stdin(Stdio::null());
        for key in [
            "HOME",
            "PGPASSWORD",
            "PGPASSFILE",
            "PGSERVICE",
            "PGSERVICEFILE",
            "PGSSLMODE",
            "PGSSLROOTCERT",
            "PGSSLCERT",
            "PGSSLKEY",
        ] {
            if let Some(value) = std::env::var_os(key) {
                cmd.env(key, value);
            }
        }
        run(
            cmd,
            &format!("dumping the live source {uri}"),
            Launch::new(),
        )?;
        Ok(archive)
    }

    /// Stops the postmaster: a fast shutdown, then SIGKILL to its process
    /// group if it has not ended in ten seconds. Idempotent.
    pub fn stop(&mut self) {
        if let Some(mut postmaster) = self.postmaster.take() {
            let _ = postmaster.terminate(Signal::INT, Recipients::Leader, Duration::from_secs(10));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
        forget(&self.socket_dir);
    }
}

/// The password of every live cluster, by socket directory. An observer is
/// made from a jailed store's directory alone (the engine's stores carry
/// paths, and a password in them would travel into Debug output and
/// reports); it finds its cluster's password here, so the password never
/// leaves this process's memory.
static PASSWORDS: std::sync::Mutex<std::collections::BTreeMap<PathBuf, String>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

fn passwords() -> std::sync::MutexGuard<'static, std::collections::BTreeMap<PathBuf, String>> {
    match PASSWORDS.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

fn remember(socket_dir: &Path, password: &str) {
    passwords().insert(socket_dir.to_path_buf(), password.to_owned());
}

fn forget(socket_dir: &Path) {
    passwords().remove(socket_dir);
}

/// The superusers' password of the live cluster whose socket is in
/// `socket_dir`, if this process made it.
pub fn password_for(socket_dir: &Path) -> Option<String> {
    passwords().get(socket_dir).cloned()
}

/// 32 hex digits from the kernel's random source.
fn random_password() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Runs a step to completion; its failure says the first error line.
fn run(mut cmd: Command, what: &str, launch: Launch<'_>) -> Result<(), ClusterError> {
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    let output = launch
        .spawn(&mut cmd)
        .and_then(|mut child| child.output())
        .map_err(|source| ClusterError::Io {
            what: format!("cannot run {what}"),
            source,
        })?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let detail = stderr
        .lines()
        .find(|l| l.contains("ERROR") || l.contains("FATAL") || l.contains("error"))
        .or_else(|| stderr.lines().next())
        .unwrap_or("no message")
        .chars()
        .take(300)
        .collect::<String>();
    Err(ClusterError::Step {
        what: what.to_owned(),
        detail: format!("{} ({})", detail.trim(), output.status),
    })
}

fn last_line(log: &Path) -> String {
    std::fs::read_to_string(log)
        .ok()
        .and_then(|text| text.lines().last().map(str::to_owned))
        .unwrap_or_else(|| "no log".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_source_with_a_password_is_refused_and_one_without_is_taken() {
        for uri in [
            "postgresql://reader:hunter2@db.example/app",
            "postgres://reader@db.example/app?sslmode=require&password=hunter2",
        ] {
            assert!(Source::is_live(uri));
            assert!(matches!(
                Source::live(uri),
                Err(ClusterError::PasswordInSource)
            ));
        }
        let uri = "postgresql://reader@db.example:5433/app?sslmode=require";
        assert_eq!(Source::live(uri).ok(), Some(Source::Live(uri.into())));
        assert!(!Source::is_live("/srv/app.sql"));
        assert!(
            !ClusterError::PasswordInSource
                .to_string()
                .contains("hunter2")
        );
    }
}
