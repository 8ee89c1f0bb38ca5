//! A consistent page image of a live database, read without locks and
//! without opening it.
//!
//! What SQLite itself would read is the main file's pages, overlaid with the
//! last committed version of each page in the `-wal` file, cut to the size
//! the last commit recorded. That is rebuilt here byte for byte, into a
//! private file SQLite can then open as an ordinary database:
//!
//! - **The WAL is read like SQLite's recovery reads it**: frames count only
//!   while their salts match the header's and their cumulative checksum
//!   holds, and only up to the last commit frame. A writer appending while
//!   we read costs nothing: whatever it has not finished is not committed.
//! - **The main file must hold still** while it is read, or else the WAL must
//!   still be the same WAL afterwards (same header: a checkpoint copies only
//!   frames the WAL still holds, so pages it rewrote under us are overlaid
//!   anyway). Only a WAL *restarted* during the read, or a rollback-journal
//!   database rewritten during it, makes a read start again; a writer that
//!   merely commits never does (issue 13: the old copy-until-nothing-moved
//!   loop was starved by exactly that).
//! - **A hot rollback journal** (a writer mid-transaction, or one that
//!   crashed) is left to SQLite: the file set is copied and SQLite rolls the
//!   copy back, as a reader of the live database would.
//!
//! Between observations only what changed is read: nothing when no stamp
//! moved (clearly after the last write, [`crate::stamp`]); only the new
//! frames when the WAL grew and the main file held still; every page,
//! compared with the image, otherwise. Two images are kept, the previous and
//! the current one, so the rows of a changed page can be read as they were
//! and as they are.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::stamp::{Stamp, now_ns};
use crate::watch::FileSetWatch;
use crate::{Budget, ObserveError};

/// Suffixes of the files SQLite keeps beside a database.
pub(crate) const WAL: &str = "-wal";
pub(crate) const JOURNAL: &str = "-journal";

const WAL_HEADER: usize = 32;
const FRAME_HEADER: usize = 24;
const HEADER_MAGIC: &[u8; 16] = b"SQLite format 3\0";
const JOURNAL_MAGIC: [u8; 8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7];

/// How many times a read restarts when the WAL was restarted (or a
/// rollback-mode database rewritten) under it, before giving up.
const MAX_ATTEMPTS: u32 = 25;

pub(crate) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Where the WAL was read up to, to read only what follows next time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WalCursor {
    header: [u8; WAL_HEADER],
    /// End of the last committed frame.
    offset: u64,
    /// The cumulative checksum at `offset`.
    sum: (u32, u32),
}

/// What the WAL holds: for each page, where its last committed frame is.
#[derive(Debug, Default)]
struct WalScan {
    frames: BTreeMap<u32, u64>,
    /// Size of the database in pages after the last commit read.
    commit_pages: Option<u32>,
    cursor: Option<WalCursor>,
}

/// The pages an observation found different from the current image.
#[derive(Debug, Default)]
pub(crate) struct Changed {
    pub pages: BTreeMap<u32, Vec<u8>>,
    pub page_count: u32,
    pub page_size: u32,
}

/// The two images and what the live files looked like when last read.
pub(crate) struct Images {
    /// Registered, so an auditor that exits at once still removes it.
    dir: witness_process::scratch::ScratchDir,
    files: [File; 2],
    /// Which of `files` is the current image.
    cur: usize,
    pub page_size: u32,
    pub page_count: u32,
    pub prev_page_count: u32,
    /// Pages in which the previous image differs from the current one.
    behind: BTreeSet<u32>,
    db_stamp: Option<Stamp>,
    wal_stamp: Option<Stamp>,
    journal_stamp: Option<Stamp>,
    taken_at: i128,
    wal: Option<WalCursor>,
}

impl std::fmt::Debug for Images {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Images")
            .field("page_size", &self.page_size)
            .field("page_count", &self.page_count)
            .finish()
    }
}

/// Both stamps and the moment before they were taken.
struct Stamps {
    db: Option<Stamp>,
    wal: Option<Stamp>,
    journal: Option<Stamp>,
    taken_at: i128,
}

fn io_err(path: &Path) -> impl Fn(io::Error) -> ObserveError + '_ {
    move |source| ObserveError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn stamps(path: &Path) -> Result<Stamps, ObserveError> {
    let taken_at = now_ns();
    let read = |p: PathBuf| Stamp::read(&p).map_err(io_err(path));
    Ok(Stamps {
        db: read(path.to_path_buf())?,
        wal: read(with_suffix(path, WAL))?,
        journal: read(with_suffix(path, JOURNAL))?,
        taken_at,
    })
}

impl Images {
    /// The current image's path (for SQLite to open).
    pub fn current(&self) -> PathBuf {
        self.dir.path().join(Self::name(self.cur))
    }

    /// The previous image's path.
    pub fn previous(&self) -> PathBuf {
        self.dir.path().join(Self::name(1 - self.cur))
    }

    fn name(index: usize) -> &'static str {
        if index == 0 { "a.db" } else { "b.db" }
    }

    /// Reads the database for the first time. `Ok(None)` when it does not
    /// exist (yet).
    pub fn first(
        path: &Path,
        budget: &Budget,
        deadline: Instant,
    ) -> Result<Option<Self>, ObserveError> {
        let dir = witness_process::scratch::tempdir("witness-sqlite-").map_err(io_err(path))?;
        let open = |name: &str| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(dir.path().join(name))
                .map_err(io_err(path))
        };
        let files = [open(Self::name(0))?, open(Self::name(1))?];
        let mut images = Self {
            dir,
            files,
            cur: 0,
            page_size: 0,
            page_count: 0,
            prev_page_count: 0,
            behind: BTreeSet::new(),
            db_stamp: None,
            wal_stamp: None,
            journal_stamp: None,
            taken_at: 0,
            wal: None,
        };
        match images.refresh(path, budget, deadline, None, None)? {
            Refreshed::Missing => Ok(None),
            Refreshed::Unchanged | Refreshed::Changed(_) => {
                // The previous image starts equal to the current one.
                images.catch_up_previous(path)?;
                Ok(Some(images))
            }
        }
    }

    /// Reads what changed since the last read and brings the images up to
    /// date: the previous image becomes what was current.
    ///
    /// `quiet` is what file-system events say: `Some(true)` when none named
    /// the files since the last read (watched from before it). Equal stamps
    /// still decide; events only vouch for them in the clock tick right
    /// after a write, where stamps alone cannot.
    pub fn refresh(
        &mut self,
        path: &Path,
        budget: &Budget,
        deadline: Instant,
        quiet: Option<bool>,
        mut events: Option<&mut FileSetWatch>,
    ) -> Result<Refreshed, ObserveError> {
        let mut attempt = 0;
        loop {
            let before = stamps(path)?;
            let Some(db) = before.db else {
                return Ok(Refreshed::Missing);
            };
            if self.unchanged(&before, quiet == Some(true) && attempt == 0) {
                return Ok(Refreshed::Unchanged);
            }
            let read = if journal_is_hot(&with_suffix(path, JOURNAL), &before) {
                self.read_recovered(path, budget, deadline)?
            } else if self.wal_only_grew(&before) {
                self.read_wal_tail(path, budget, deadline, Held::new(&mut events))?
            } else {
                self.read_all(path, db.size, budget, deadline, Held::new(&mut events))?
            };
            match read {
                Some((changed, wal)) => {
                    // The stamps from before the read: whatever moved after
                    // them moves them for the next comparison too.
                    self.db_stamp = before.db;
                    self.wal_stamp = before.wal;
                    self.journal_stamp = before.journal;
                    self.taken_at = before.taken_at;
                    self.wal = wal;
                    if changed.pages.is_empty() && changed.page_count == self.page_count {
                        self.page_size = changed.page_size;
                        return Ok(Refreshed::Unchanged);
                    }
                    self.apply(path, changed)?;
                    return Ok(Refreshed::Changed(self.behind.clone()));
                }
                None => {
                    attempt += 1;
                    if attempt >= MAX_ATTEMPTS || Instant::now() > deadline {
                        return Err(ObserveError::Unusable {
                            path: path.to_path_buf(),
                            reason: format!(
                                "its WAL was restarted (or, in rollback mode, the file rewritten) during each of {attempt} attempts to read it"
                            ),
                        });
                    }
                    std::thread::sleep(Duration::from_millis(1 << attempt.min(5)));
                }
            }
        }
    }

    /// No stamp moved since the last read, and that read was clearly after
    /// the last write.
    fn unchanged(&self, now: &Stamps, quiet: bool) -> bool {
        let settled = |s: &Option<Stamp>| quiet || s.is_none_or(|s| s.settled_at(self.taken_at));
        self.page_size != 0
            && now.journal == self.journal_stamp
            && now.db == self.db_stamp
            && now.wal == self.wal_stamp
            && settled(&now.db)
            && settled(&now.wal)
    }

    /// The main file is as it was (clearly), and a WAL was read before.
    fn wal_only_grew(&self, now: &Stamps) -> bool {
        self.page_size != 0
            && self.wal.is_some()
            && now.db == self.db_stamp
            && now.db.is_some_and(|s| s.settled_at(self.taken_at))
            && now.wal.is_some()
    }

    /// New frames only. Anything unexpected (a restarted WAL, a main file
    /// that moved) reads everything instead, a read that may itself be
    /// torn (`Ok(None)`).
    #[allow(clippy::type_complexity)]
    fn read_wal_tail(
        &mut self,
        path: &Path,
        budget: &Budget,
        deadline: Instant,
        held: Held<'_>,
    ) -> Result<Option<(Changed, Option<WalCursor>)>, ObserveError> {
        let wal_path = with_suffix(path, WAL);
        let Some(cursor) = self.wal else {
            return Ok(None);
        };
        let (wal, scan) = open_and_scan(&wal_path, self.page_size, Some(cursor), deadline)
            .map_err(io_err(path))?;
        let after = stamps(path)?;
        let continued = scan.cursor.is_some_and(|c| c.header == cursor.header);
        let tail = match (wal, continued && after.db == self.db_stamp) {
            (Some(wal), true) => self.tail_pages(&wal, &scan).map_err(io_err(path))?,
            _ => None,
        };
        match tail {
            Some(changed) => Ok(Some((changed, scan.cursor))),
            // Restarted (before or while its frames were read), or
            // checkpointed into a main file that moved: read everything,
            // with the consistency rules of a full read.
            None => {
                let size = after.db.map_or(0, |s| s.size);
                self.read_all(path, size, budget, deadline, held)
            }
        }
    }

    /// The pages of the frames `scan` found, read through the handle it
    /// scanned; `None` when the WAL was restarted or cut short meanwhile.
    fn tail_pages(&self, wal: &File, scan: &WalScan) -> io::Result<Option<Changed>> {
        let Some(now) = scan.cursor else {
            return Ok(None);
        };
        let page_count = scan.commit_pages.unwrap_or(self.page_count);
        let mut changed = Changed {
            pages: BTreeMap::new(),
            page_count,
            page_size: self.page_size,
        };
        for (&page, &offset) in &scan.frames {
            if page > page_count {
                continue;
            }
            let mut content = vec![0u8; self.page_size as usize];
            if read_up_to(wal, &mut content, offset)? < content.len() {
                return Ok(None);
            }
            self.keep_if_changed(page, content, &mut changed)?;
        }
        // Checked after the frames: a restart writes its header first.
        Ok(same_wal(wal, &now)?.then_some(changed))
    }

    /// Every page of the main file, overlaid with the WAL. `Ok(None)` when
    /// the read was torn and must start again.
    #[allow(clippy::type_complexity)]
    fn read_all(
        &mut self,
        path: &Path,
        db_size: u64,
        budget: &Budget,
        deadline: Instant,
        mut held: Held<'_>,
    ) -> Result<Option<(Changed, Option<WalCursor>)>, ObserveError> {
        held.begin();
        let before = stamps(path)?;
        let wal_path = with_suffix(path, WAL);
        let wal_before = read_wal_header(&wal_path).map_err(io_err(path))?;
        let db = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(path)(e)),
        };
        let mut header = [0u8; 100];
        let got = read_up_to(&db, &mut header, 0).map_err(io_err(path))?;
        // Not a database: read it as 4096-byte pages all the same, and let
        // SQLite say what is wrong with it when the image is opened.
        let page_size = page_size_of(&header, got).unwrap_or(if self.page_size == 0 {
            4096
        } else {
            self.page_size
        });
        if db_size > budget.max_bytes {
            return Err(ObserveError::OverBudget {
                path: path.to_path_buf(),
                size: db_size,
                budget: budget.max_bytes,
            });
        }
        if self.page_size != 0 && page_size != self.page_size {
            // A VACUUM with a new page size: every page is new.
            self.page_count = 0;
        }
        let mut changed = Changed {
            pages: BTreeMap::new(),
            page_count: 0,
            page_size,
        };
        // A partial last page counts (zero-filled), as it does for SQLite,
        // which then calls a 14-byte file "not a database" rather than empty.
        let file_pages = u32::try_from(db_size.div_ceil(u64::from(page_size))).unwrap_or(u32::MAX);
        self.compare_main(&db, page_size, file_pages, &mut changed, deadline)
            .map_err(|e| match e {
                Torn::Io(e) => io_err(path)(e),
                Torn::Late => ObserveError::OutOfTime {
                    path: path.to_path_buf(),
                    budget: budget.max_time,
                },
            })?;
        let (wal, scan) =
            open_and_scan(&wal_path, page_size, None, deadline).map_err(io_err(path))?;
        let wal_after = read_wal_header(&wal_path).map_err(io_err(path))?;
        let after = stamps(path)?;
        let wal_held = scan.cursor.is_some() && wal_before.is_some() && wal_before == wal_after;
        let db_held = after.db == before.db
            && (before.db.is_some_and(|s| s.settled_at(before.taken_at)) || held.quiet())
            && after.journal == before.journal
            && wal_before == wal_after;
        if !(wal_held || db_held || held.private) {
            if before.db.is_some_and(|s| !s.settled_at(before.taken_at)) && after.db == before.db {
                // Just written: wait out the clock tick so a write during the
                // next read cannot hide in it.
                std::thread::sleep(Duration::from_millis(25));
            }
            return Ok(None);
        }
        changed.page_count = scan
            .commit_pages
            .unwrap_or_else(|| header_page_count(&header, got).unwrap_or(file_pages));
        if !self
            .overlay(wal.as_ref(), &scan, &mut changed)
            .map_err(io_err(path))?
        {
            return Ok(None);
        }
        Ok(Some((changed, scan.cursor)))
    }

    /// Lays the WAL's committed frames over what the main file gave, and
    /// drops pages past the committed size. `Ok(false)` when the WAL was
    /// restarted or cut short while its frames were read: the read is torn.
    fn overlay(
        &self,
        wal: Option<&File>,
        scan: &WalScan,
        changed: &mut Changed,
    ) -> io::Result<bool> {
        if let (Some(wal), Some(cursor)) = (wal, scan.cursor) {
            for (&page, &offset) in &scan.frames {
                let mut content = vec![0u8; changed.page_size as usize];
                if read_up_to(wal, &mut content, offset)? < content.len() {
                    return Ok(false);
                }
                changed.pages.remove(&page);
                self.keep_if_changed(page, content, changed)?;
            }
            // Checked after the frames: a restart writes its header first.
            if !same_wal(wal, &cursor)? {
                return Ok(false);
            }
        }
        let count = changed.page_count;
        changed.pages.retain(|&p, _| p <= count);
        Ok(true)
    }

    /// Reads the main file page by page, keeping those that differ from
    /// the current image.
    fn compare_main(
        &self,
        db: &File,
        page_size: u32,
        pages: u32,
        changed: &mut Changed,
        deadline: Instant,
    ) -> Result<(), Torn> {
        const CHUNK_PAGES: u32 = 256;
        let size = page_size as usize;
        let mut fresh = vec![0u8; size * CHUNK_PAGES as usize];
        let mut known = vec![0u8; size * CHUNK_PAGES as usize];
        let mut first = 1u32;
        while first <= pages {
            if Instant::now() > deadline {
                return Err(Torn::Late);
            }
            let n = CHUNK_PAGES.min(pages - first + 1);
            let bytes = size * n as usize;
            let at = u64::from(first - 1) * u64::from(page_size);
            let got = read_up_to(db, &mut fresh[..bytes], at).map_err(Torn::Io)?;
            let known_pages = self.page_count.saturating_sub(first - 1).min(n);
            let known_bytes = size * known_pages as usize;
            if known_bytes > 0 && self.page_size == page_size {
                self.files[self.cur]
                    .read_exact_at(&mut known[..known_bytes], at)
                    .map_err(Torn::Io)?;
            }
            for i in 0..n {
                let page = first + i;
                let range = size * i as usize..size * (i as usize + 1);
                let content = &mut fresh[range.clone()];
                if range.start >= got {
                    content.fill(0);
                }
                if page == 1 {
                    patch_header(content);
                }
                let same =
                    i < known_pages && self.page_size == page_size && known[range] == *content;
                if !same {
                    changed.pages.insert(page, content.to_vec());
                }
            }
            first += n;
        }
        Ok(())
    }

    /// Keeps `content` for `page` when it differs from the current image.
    fn keep_if_changed(
        &self,
        page: u32,
        mut content: Vec<u8>,
        changed: &mut Changed,
    ) -> io::Result<()> {
        if page == 1 {
            patch_header(&mut content);
        }
        if page <= self.page_count && changed.page_size == self.page_size {
            let mut known = vec![0u8; content.len()];
            let at = u64::from(page - 1) * u64::from(self.page_size);
            self.files[self.cur].read_exact_at(&mut known, at)?;
            if known == content {
                return Ok(());
            }
        }
        changed.pages.insert(page, content);
        Ok(())
    }

    /// A hot journal: SQLite rolls a copy of the file set back, and the
    /// copy is then read like a main file with no WAL.
    #[allow(clippy::type_complexity)]
    fn read_recovered(
        &mut self,
        path: &Path,
        budget: &Budget,
        deadline: Instant,
    ) -> Result<Option<(Changed, Option<WalCursor>)>, ObserveError> {
        let scratch =
            witness_process::scratch::tempdir("witness-sqlite-recover-").map_err(io_err(path))?;
        let copy = scratch.path().join("store.db");
        let before = stamps(path)?;
        for (suffix, target) in [
            ("", copy.clone()),
            (JOURNAL, with_suffix(&copy, JOURNAL)),
            (WAL, with_suffix(&copy, WAL)),
        ] {
            match std::fs::copy(with_suffix(path, suffix), &target) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound && !suffix.is_empty() => {}
                Err(e) => return Err(io_err(path)(e)),
            }
        }
        let after = stamps(path)?;
        if after.db != before.db || after.journal != before.journal || after.wal != before.wal {
            return Ok(None);
        }
        {
            let conn =
                rusqlite::Connection::open(&copy).map_err(|source| ObserveError::Sqlite {
                    path: path.to_path_buf(),
                    source,
                })?;
            // Any read makes SQLite roll the hot journal back, in the copy.
            conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
                r.get::<_, i64>(0)
            })
            .map_err(|source| ObserveError::Sqlite {
                path: path.to_path_buf(),
                source,
            })?;
        }
        let size = std::fs::metadata(&copy).map_err(io_err(path))?.len();
        let saved = (self.db_stamp, self.wal);
        // The copy is ours alone: nothing writes it while it is read.
        let read = self.read_all(&copy, size, budget, deadline, Held::private())?;
        (self.db_stamp, self.wal) = saved;
        // The live WAL (if any) was folded into the copy; reading it again
        // next time starts from scratch.
        Ok(read.map(|(changed, _)| (changed, None)))
    }

    /// Writes the changed pages: the previous image is brought to the
    /// current state and then to the new one, and the two swap roles.
    fn apply(&mut self, path: &Path, changed: Changed) -> Result<(), ObserveError> {
        let size = u64::from(changed.page_size);
        let stale = 1 - self.cur;
        // Bring the stale image level with the current one first.
        if self.page_size == changed.page_size {
            let mut buffer = vec![0u8; self.page_size as usize];
            for &page in &self.behind {
                if page > self.page_count {
                    continue;
                }
                let at = u64::from(page - 1) * size;
                self.files[self.cur]
                    .read_exact_at(&mut buffer, at)
                    .map_err(io_err(path))?;
                self.files[stale]
                    .write_all_at(&buffer, at)
                    .map_err(io_err(path))?;
            }
            self.files[stale]
                .set_len(u64::from(self.page_count) * size)
                .map_err(io_err(path))?;
        } else {
            // Another page size: the stale image is rebuilt from nothing.
            self.files[stale].set_len(0).map_err(io_err(path))?;
            copy_file(&self.files[self.cur], &self.files[stale]).map_err(io_err(path))?;
        }
        let written = self.files[stale].metadata().map_err(io_err(path))?.len();
        for (&page, content) in &changed.pages {
            let at = u64::from(page - 1) * size;
            // A hole stays a hole: a sparse store must not fill the disk
            // through its image.
            if at >= written && content.iter().all(|b| *b == 0) {
                continue;
            }
            self.files[stale]
                .write_all_at(content, at)
                .map_err(io_err(path))?;
        }
        self.files[stale]
            .set_len(u64::from(changed.page_count) * size)
            .map_err(io_err(path))?;
        self.behind = changed.pages.keys().copied().collect();
        if self.page_size != changed.page_size {
            self.behind = (1..=changed.page_count.max(self.page_count)).collect();
        }
        // Pages cut off or added are differences too.
        let (low, high) = (
            self.page_count.min(changed.page_count),
            self.page_count.max(changed.page_count),
        );
        self.behind.extend(low + 1..=high);
        self.prev_page_count = self.page_count;
        self.page_count = changed.page_count;
        self.page_size = changed.page_size;
        self.cur = stale;
        Ok(())
    }

    /// After the first read: the previous image is a copy of the current.
    fn catch_up_previous(&mut self, path: &Path) -> Result<(), ObserveError> {
        let stale = 1 - self.cur;
        self.files[stale].set_len(0).map_err(io_err(path))?;
        copy_file(&self.files[self.cur], &self.files[stale]).map_err(io_err(path))?;
        self.behind.clear();
        self.prev_page_count = self.page_count;
        Ok(())
    }

    /// Reads one page of the current (`current`) or previous image.
    pub fn page(&self, current: bool, page: u32, buffer: &mut Vec<u8>) -> io::Result<bool> {
        let (file, count) = if current {
            (&self.files[self.cur], self.page_count)
        } else {
            (&self.files[1 - self.cur], self.prev_page_count)
        };
        if page == 0 || page > count {
            return Ok(false);
        }
        buffer.resize(self.page_size as usize, 0);
        file.read_exact_at(buffer, u64::from(page - 1) * u64::from(self.page_size))?;
        Ok(true)
    }
}

/// What says a file held still while it was read, besides its stamp:
/// file-system events that saw no write to it meanwhile (only they can,
/// within the clock tick of a previous write), or its being ours alone.
pub(crate) struct Held<'a> {
    events: Option<&'a mut FileSetWatch>,
    private: bool,
}

impl<'a> Held<'a> {
    fn new(events: &'a mut Option<&mut FileSetWatch>) -> Self {
        Self {
            events: events.as_deref_mut(),
            private: false,
        }
    }

    fn private() -> Self {
        Self {
            events: None,
            private: true,
        }
    }

    /// Starts a read: what events [`Self::quiet`] asks about is what comes
    /// after this. A write queued before it is one the read will see; left
    /// counted, a single write during a first attempt would make every
    /// retry look disturbed, and a store written more often than the clock
    /// tick settles (a busy indexer) could never be read.
    fn begin(&mut self) {
        if let Some(events) = self.events.as_mut() {
            let _ = events.take_touched();
        }
    }

    /// Events saw no write to the files since the read began.
    fn quiet(&mut self) -> bool {
        self.events.as_mut().and_then(|e| e.touched()) == Some(false)
    }
}

/// What a refresh found.
#[derive(Debug)]
pub(crate) enum Refreshed {
    Missing,
    Unchanged,
    /// The pages in which the previous image now differs from the current.
    Changed(BTreeSet<u32>),
}

enum Torn {
    Io(io::Error),
    Late,
}

/// A `-journal` that exists with a valid header is a transaction not yet
/// committed (or one a crash left): a reader must roll it back.
fn journal_is_hot(journal: &Path, stamps: &Stamps) -> bool {
    if stamps.journal.is_none_or(|s| s.size == 0) {
        return false;
    }
    let mut magic = [0u8; 8];
    match File::open(journal).and_then(|mut f| f.read_exact(&mut magic)) {
        Ok(()) => magic == JOURNAL_MAGIC,
        Err(_) => false,
    }
}

/// Makes the image an ordinary rollback-journal database, so SQLite opens
/// it without looking for a WAL (bytes 18 and 19: file format versions).
fn patch_header(page: &mut [u8]) {
    if page.len() > 19 && page[..16] == *HEADER_MAGIC && page[18] == 2 {
        page[18] = 1;
        page[19] = 1;
    }
}

fn page_size_of(header: &[u8; 100], got: usize) -> Option<u32> {
    if got < 100 || header[..16] != *HEADER_MAGIC {
        return None;
    }
    let raw = u16::from_be_bytes([header[16], header[17]]);
    let size = if raw == 1 { 65536 } else { u32::from(raw) };
    (size >= 512 && size.is_power_of_two()).then_some(size)
}

/// The in-header database size, where SQLite would trust it: non-zero and
/// written by the same change as the version-valid-for number.
fn header_page_count(header: &[u8; 100], got: usize) -> Option<u32> {
    if got < 100 {
        return None;
    }
    let be = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let pages = be(28);
    (pages > 0 && be(24) == be(92)).then_some(pages)
}

fn read_up_to(file: &File, buffer: &mut [u8], at: u64) -> io::Result<usize> {
    let mut got = 0;
    while got < buffer.len() {
        match file.read_at(&mut buffer[got..], at + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Copies `from` into the empty `to`, leaving runs of zeros as holes.
fn copy_file(from: &File, to: &File) -> io::Result<()> {
    let mut buffer = vec![0u8; 1 << 20];
    let mut at = 0u64;
    loop {
        let n = read_up_to(from, &mut buffer, at)?;
        if n == 0 {
            return to.set_len(at);
        }
        if buffer[..n].iter().any(|b| *b != 0) {
            to.write_all_at(&buffer[..n], at)?;
        }
        at += n as u64;
    }
}

/// The WAL at `wal_path`, opened (`None` when there is none), and what
/// it holds. The frames' pages are to be read through the handle given:
/// a WAL deleted or restarted after its scan (a writer closing
/// checkpoints and removes it) must not leave an image of the main file
/// without its frames.
fn open_and_scan(
    wal_path: &Path,
    page_size: u32,
    from: Option<WalCursor>,
    deadline: Instant,
) -> io::Result<(Option<File>, WalScan)> {
    match File::open(wal_path) {
        Ok(file) => {
            let scan = scan_wal(&file, page_size, from, deadline)?;
            Ok((Some(file), scan))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok((None, WalScan::default())),
        Err(e) => Err(e),
    }
}

/// The WAL behind `wal` still has the header `cursor` was read under: not
/// restarted (a restart rewrites the header before any frame).
fn same_wal(wal: &File, cursor: &WalCursor) -> io::Result<bool> {
    let mut header = [0u8; WAL_HEADER];
    Ok(read_up_to(wal, &mut header, 0)? == WAL_HEADER && header == cursor.header)
}

fn read_wal_header(path: &Path) -> io::Result<Option<[u8; WAL_HEADER]>> {
    match File::open(path) {
        Ok(file) => {
            let mut header = [0u8; WAL_HEADER];
            let got = read_up_to(&file, &mut header, 0)?;
            Ok((got == WAL_HEADER).then_some(header))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn be32(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// SQLite's WAL checksum: pairs of 32-bit words, summed into two
/// accumulators, in the byte order the header's magic number names.
fn checksum(big_endian: bool, data: &[u8], mut s0: u32, mut s1: u32) -> (u32, u32) {
    for pair in data.chunks_exact(8) {
        let word = |b: &[u8]| {
            let w = [b[0], b[1], b[2], b[3]];
            if big_endian {
                u32::from_be_bytes(w)
            } else {
                u32::from_le_bytes(w)
            }
        };
        s0 = s0.wrapping_add(word(&pair[..4])).wrapping_add(s1);
        s1 = s1.wrapping_add(word(&pair[4..])).wrapping_add(s0);
    }
    (s0, s1)
}

/// Reads the WAL's committed frames (all of them, or those after `from`
/// when it is the same WAL), as SQLite's recovery would accept them.
fn scan_wal(
    file: &File,
    page_size: u32,
    from: Option<WalCursor>,
    deadline: Instant,
) -> io::Result<WalScan> {
    let mut header = [0u8; WAL_HEADER];
    if read_up_to(file, &mut header, 0)? < WAL_HEADER {
        return Ok(WalScan::default());
    }
    let magic = be32(&header, 0);
    if magic & !1 != 0x377f_0682 || be32(&header, 4) != 3_007_000 || be32(&header, 8) != page_size {
        return Ok(WalScan::default());
    }
    let big_endian = magic & 1 == 1;
    if checksum(big_endian, &header[..24], 0, 0) != (be32(&header, 24), be32(&header, 28)) {
        return Ok(WalScan::default());
    }
    let (mut offset, mut sum) = match from {
        Some(c) if c.header == header => (c.offset, c.sum),
        _ => (WAL_HEADER as u64, (be32(&header, 24), be32(&header, 28))),
    };
    let mut scan = WalScan {
        cursor: Some(WalCursor {
            header,
            offset,
            sum,
        }),
        ..WalScan::default()
    };
    let frame_size = FRAME_HEADER + page_size as usize;
    let mut frame = vec![0u8; frame_size];
    let mut pending: Vec<(u32, u64)> = Vec::new();
    // Only the frames there now: a writer appending faster than we read
    // must not keep the scan going (what it adds is for the next read).
    let end = file.metadata()?.len();
    loop {
        if Instant::now() > deadline || offset + frame_size as u64 > end {
            break;
        }
        if read_up_to(file, &mut frame, offset)? < frame_size {
            break;
        }
        let page = be32(&frame, 0);
        let commit = be32(&frame, 4);
        if page == 0 || frame[8..16] != header[16..24] {
            break;
        }
        sum = checksum(big_endian, &frame[..8], sum.0, sum.1);
        sum = checksum(big_endian, &frame[FRAME_HEADER..], sum.0, sum.1);
        if sum != (be32(&frame, 16), be32(&frame, 20)) {
            break;
        }
        pending.push((page, offset + FRAME_HEADER as u64));
        offset += frame_size as u64;
        if commit != 0 {
            scan.frames.extend(pending.drain(..));
            scan.commit_pages = Some(commit);
            scan.cursor = Some(WalCursor {
                header,
                offset,
                sum,
            });
        }
    }
    Ok(scan)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store in WAL mode whose image holds the empty table `t`, and a
    /// writer, still open, whose insert into `t` sits in the WAL.
    fn images_behind_a_wal() -> (tempfile::TempDir, PathBuf, Images, rusqlite::Connection) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("store.db");
        rusqlite::Connection::open(&path)
            .and_then(|c| c.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(x);"))
            .expect("create");
        let budget = Budget::DEFAULT;
        let images = Images::first(&path, &budget, budget.deadline())
            .expect("read")
            .expect("exists");
        let writer = rusqlite::Connection::open(&path).expect("open");
        writer
            .execute_batch("INSERT INTO t VALUES (randomblob(100));")
            .expect("insert");
        (dir, path, images, writer)
    }

    fn scanned(path: &Path, images: &Images) -> (File, WalScan) {
        let wal = File::open(with_suffix(path, WAL)).expect("wal");
        let scan =
            scan_wal(&wal, images.page_size, None, Budget::DEFAULT.deadline()).expect("scan");
        assert!(!scan.frames.is_empty(), "the insert is in the WAL");
        (wal, scan)
    }

    #[test]
    fn frames_are_read_through_the_handle_scanned_even_when_the_wal_is_removed_meanwhile() {
        // A writer that closes checkpoints the WAL into the main file and
        // removes it; a read that looked for the frames by name after that
        // laid none over a main file it had read before the checkpoint.
        let (_dir, path, images, _writer) = images_behind_a_wal();
        let (wal, scan) = scanned(&path, &images);
        std::fs::remove_file(with_suffix(&path, WAL)).expect("remove");
        let mut changed = Changed {
            pages: BTreeMap::new(),
            page_count: scan.commit_pages.expect("a commit"),
            page_size: images.page_size,
        };
        assert!(
            images
                .overlay(Some(&wal), &scan, &mut changed)
                .expect("overlay")
        );
        assert!(!changed.pages.is_empty(), "the frames' pages are laid over");
        let tail = images.tail_pages(&wal, &scan).expect("tail");
        assert!(tail.is_some_and(|c| !c.pages.is_empty()));
    }

    #[test]
    fn frames_of_a_wal_restarted_while_they_were_read_make_the_read_torn() {
        let (_dir, path, images, _writer) = images_behind_a_wal();
        let (wal, scan) = scanned(&path, &images);
        // A restart writes a new header (new salts) before any new frame.
        let rewrite = OpenOptions::new()
            .write(true)
            .open(with_suffix(&path, WAL))
            .expect("open");
        rewrite.write_all_at(&[0xA5; 8], 16).expect("salts");
        let mut changed = Changed {
            pages: BTreeMap::new(),
            page_count: scan.commit_pages.expect("a commit"),
            page_size: images.page_size,
        };
        assert!(
            !images
                .overlay(Some(&wal), &scan, &mut changed)
                .expect("overlay")
        );
        assert!(images.tail_pages(&wal, &scan).expect("tail").is_none());
    }

    #[test]
    fn a_read_is_judged_by_the_writes_during_it_not_by_one_before_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("store.db");
        std::fs::write(&file, b"zero").expect("write");
        let mut watch = FileSetWatch::new(std::slice::from_ref(&file));
        // The observation begins (its own count), then a write lands: during
        // a first attempt that failed, say.
        let _ = watch.take_touched();
        std::fs::write(&file, b"one").expect("write");
        let mut events = Some(&mut watch);
        let mut held = Held::new(&mut events);
        held.begin();
        assert!(held.quiet(), "nothing was written since this read began");
        std::fs::write(&file, b"two").expect("write");
        assert!(!held.quiet(), "a write during the read is seen");
    }
}
