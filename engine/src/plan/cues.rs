//! What a tool's name, description and parameter names say about the values
//! it wants: a path to something that exists, a fresh name for something it
//! makes, SQL, or nothing in particular.
//!
//! These cues choose *arguments* and order only. A tool's safety class
//! comes from its annotations alone and no cue here ever changes it; nor
//! does the class narrow the cues: a tool named `create_x` that declares
//! `readOnlyHint: true` is still read-only, and is also handed a fresh name
//! to create (a claim probe: if it makes something, EFF-01 sees it).

use witness_model::audit::ToolEntry;

/// What kind of filesystem path a parameter asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// The store's own root: a repository, a project, the allowed directory.
    Root,
}

/// The kinds of SQL statement a planner writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqlKind {
    Select,
    Insert,
    /// The row the plan's own insert made, removed again.
    Delete,
    CreateTable,
    AlterTable,
    DropTable,
}

impl SqlKind {
    /// The statement's leading keywords, as a plan preview shows them.
    pub fn keyword(self) -> &'static str {
        match self {
            SqlKind::Select => "SELECT",
            SqlKind::Insert => "INSERT",
            SqlKind::Delete => "DELETE",
            SqlKind::CreateTable => "CREATE TABLE",
            SqlKind::AlterTable => "ALTER TABLE",
            SqlKind::DropTable => "DROP TABLE",
        }
    }
}

/// What the planner knows about one tool when it fills that tool's arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolCues {
    pub tool: String,
    /// Handed what the store held before what the audit made: every tool
    /// not named to make something (`list_notes`, `get_item`,
    /// `delete_rows`, `merge_cells`: a change shows on the store's data,
    /// where an empty file the plan made holds nothing to change), and a
    /// writer's overwrite form, which must meet a file the server did not
    /// just write. Never the declaration, so that a lie
    /// does not change what the tool is asked.
    pub store_first: bool,
    /// Its name says it makes something new (`create_directory`,
    /// `write_file`, `git_create_branch`), whatever it declares.
    pub creator: bool,
    /// The step is a writer's overwrite form: every file it is told to
    /// write names a file that exists (one the store held, else the one
    /// the create form made), an output place included.
    pub existing_target: bool,
    /// The thing its name is about, singular and lowercase (`directory`,
    /// `branch`, `entity`), when the name has one after its verb.
    pub noun: String,
    /// Its name speaks of directories, trees, listings or searches: a bare
    /// `path` there is a directory.
    pub dir_tool: bool,
    /// Its name and description mention SQL, tables or a database, or its
    /// name is about queries.
    pub speaks_sql: bool,
    /// Its name and description, lowercased (for the kind of SQL it runs).
    pub text: String,
    /// Path parameters whose own words (the schema's description, or the
    /// line the tool's text writes about them) say a file or a directory:
    /// `list_sheets`'s `path: Path to the .xlsx file` is a file, though a
    /// listing's bare `path` is otherwise a directory.
    pub described: Vec<(String, PathKind)>,
}

/// Words in a name that say the tool makes something new. Shared with the
/// planner's ordering, which calls such tools first among writes.
pub const CREATE_WORDS: [&str; 11] = [
    "create", "add", "insert", "append", "new", "save", "write", "put", "mint", "make", "clone",
];

/// Words in a name that say the tool moves or removes the thing it names.
const RELOCATE_WORDS: [&str; 11] = [
    "delete", "remove", "rm", "move", "mv", "rename", "drop", "destroy", "erase", "unlink",
    "archive",
];

/// Words in a name that say the tool changes or removes what exists.
pub const CHANGE_WORDS: [&str; 38] = [
    "delete",
    "remove",
    "rm",
    "overwrite",
    "update",
    "upsert",
    "move",
    "mv",
    "rename",
    "reset",
    "edit",
    "modify",
    "replace",
    "drop",
    "clear",
    "purge",
    "destroy",
    "revoke",
    "patch",
    "erase",
    "truncate",
    "unlink",
    // What changes a thing's state in place: a task completed, a memory
    // forgotten, a project archived, a flag set.
    "archive",
    "unarchive",
    "forget",
    "close",
    "reopen",
    "complete",
    "finish",
    "cancel",
    "set",
    "toggle",
    "assign",
    "unassign",
    "mark",
    "restore",
    "undo",
    "revert",
];

const DIR_WORDS: [&str; 9] = [
    "dir", "folder", "tree", "list", "search", "find", "glob", "ls", "walk",
];

/// Parameter names (lowercased, `_` and `-` removed) that name the store's
/// root: where a repository or project lives.
const ROOT_PARAMS: [&str; 10] = [
    "repopath",
    "repo",
    "repository",
    "repositorypath",
    "root",
    "rootpath",
    "projectpath",
    "projectroot",
    "workdir",
    "workingdirectory",
];

/// Parameter names that name a place something is to be moved or copied to:
/// always a new name.
const NEW_PLACE_PARAMS: [&str; 15] = [
    "destination",
    "dest",
    "destinationpath",
    "newpath",
    "topath",
    "targetpath",
    "output",
    "outputpath",
    "outputfile",
    "out",
    "outpath",
    "outfile",
    "saveas",
    "savepath",
    "exportpath",
];

/// Whether a flattened name is a folder's new place (`new_dir`,
/// `destFolder`, `to_directory`): of a tool that moves things, the
/// destination, which must not be the folder it moves. (Of another tool,
/// `change_dir {new_dir}`, it is a folder that exists.)
fn new_folder_param(flat: &str) -> bool {
    ["new", "dest", "destination", "to"].iter().any(|head| {
        flat.strip_prefix(head)
            .is_some_and(|rest| ["dir", "folder", "directory"].contains(&rest))
    })
}

/// Bare parameter names of the place a creator writes to: new only when
/// the creator makes files ([`ToolCues::makes_files`]).
const FILE_PLACE_PARAMS: [&str; 3] = ["path", "filename", "filepath"];

/// Verbs that make a thing whole when the name has no noun (`write`,
/// `create`): their `path` is the new file.
const WHOLE_WRITE_WORDS: [&str; 7] = ["create", "new", "make", "write", "save", "put", "mint"];

/// Things that are kept as a file or folder of their own: a creator of one
/// is given a new path.
const FILE_NOUNS: [&str; 35] = [
    "file",
    "document",
    "doc",
    "docx",
    "workbook",
    "spreadsheet",
    "xlsx",
    "presentation",
    "pptx",
    "deck",
    "pdf",
    "note",
    "page",
    "directory",
    "dir",
    "folder",
    "image",
    "picture",
    "report",
    "archive",
    "backup",
    "snapshot",
    "template",
    "script",
    "markdown",
    "csv",
    "vault",
    "database",
    "db",
    "repo",
    "repository",
    "project",
    "dataset",
    "notebook",
    "export",
];

/// Parameter names that are a path of an existing file or directory, whose
/// kind the tool decides.
const PATH_PARAMS: [&str; 10] = [
    "path",
    "paths",
    "source",
    "sourcepath",
    "src",
    "location",
    "filepath",
    "input",
    "inputpath",
    "inputfile",
];

/// Document formats a parameter may be named for (`input_pdf`,
/// `source_docx`): such a parameter is a file of that kind.
const NAMED_FORMATS: [&str; 7] = ["pdf", "docx", "xlsx", "pptx", "csv", "xls", "doc"];

/// Parameter names that hold SQL.
const SQL_PARAMS: [&str; 5] = ["query", "sql", "statement", "sqlquery", "stmt"];

impl ToolCues {
    /// The cues of one listed tool.
    pub fn of(tool: &ToolEntry) -> Self {
        let name = tool.name.to_ascii_lowercase();
        let words = words(&name);
        // `register_project` makes a project known: a word of its own, as
        // `unregister` holds it too.
        let creator =
            CREATE_WORDS.iter().any(|w| name.contains(w)) || words.iter().any(|w| w == "register");
        // The thing is the last word of the ones after the verb, up to a
        // preposition: `add_section_dep` makes a dep (of a section, which
        // it refers to), `add_memory_to_project` a memory.
        let noun = words
            .iter()
            .rposition(|w| CREATE_WORDS.contains(&w.as_str()) || is_verb(w))
            .and_then(|i| {
                words
                    .get(i + 1..)?
                    .iter()
                    .take_while(|w| !PREPOSITIONS.contains(&w.as_str()))
                    .last()
            })
            .map(|w| crate::plan::harvest::singular(w))
            .unwrap_or_default();
        let description = tool.description.as_deref().unwrap_or("").to_lowercase();
        let text = format!("{name} {description}");
        // A tool named for queries (`read_query`, `export_query`) runs
        // them even when its description only says "query results".
        let speaks_sql = ["sql", "select", "insert", "table", "database"]
            .iter()
            .any(|w| text.contains(w))
            || words.iter().any(|w| w == "query");
        Self {
            tool: tool.name.clone(),
            store_first: crate::plan::reads_by_name(&tool.name) || !creator,
            creator,
            existing_target: false,
            noun,
            dir_tool: words
                .iter()
                .any(|w| DIR_WORDS.contains(&w.as_str()) || w.starts_with("dir")),
            speaks_sql,
            text,
            described: described_paths(tool),
        }
    }

    /// The path a parameter (or an array's item, by its singular key) asks
    /// for, when it asks for one.
    pub fn path_kind(&self, key: &str) -> Option<PathKind> {
        let flat = flat(key);
        if ROOT_PARAMS.contains(&flat.as_str()) {
            return Some(PathKind::Root);
        }
        if flat.contains("dir") || flat.contains("folder") {
            return Some(PathKind::Dir);
        }
        // `db_path`, `databasePath`: a database is a file, whatever the tool
        // does with it (`list_tables` lists inside the file).
        let stem = flat.strip_suffix("path").unwrap_or("");
        if ["db", "database", "sqlite", "dbfile"].contains(&stem) {
            return Some(PathKind::File);
        }
        // `note_path`, `vault_path`, ...: a path of some thing, its kind
        // decided by the tool as a bare `path` is.
        let bare = PATH_PARAMS.contains(&flat.as_str()) || self.new_place(key) || !stem.is_empty();
        let named_format = NAMED_FORMATS.iter().any(|f| flat.ends_with(f)) && flat.len() > 3;
        if flat.contains("file") || named_format {
            return Some(PathKind::File);
        }
        // A name that says no kind: the parameter's own words, then the
        // tool's.
        if bare && let Some((_, kind)) = self.described.iter().find(|(n, _)| n == key) {
            return Some(*kind);
        }
        if bare && !self.dir_tool {
            return Some(PathKind::File);
        }
        bare.then_some(PathKind::Dir)
    }

    /// Whether `key` names where something goes (`destination`): such a
    /// value is always fresh.
    pub fn new_place(&self, key: &str) -> bool {
        let flat = flat(key);
        NEW_PLACE_PARAMS.contains(&flat.as_str()) || (self.relocates() && new_folder_param(&flat))
    }

    /// Whether `key` names where a tool writes what it produces (`output`,
    /// `out_path`, `save_as`, `export_path`): pointed at a file that exists,
    /// such a tool replaces it, which is what its overwrite form asks.
    /// Not a move's or copy's `destination`, whose source is the file.
    pub fn output_place(&self, key: &str) -> bool {
        let flat = flat(key);
        self.new_place(key)
            && ["out", "save", "export"]
                .iter()
                .any(|w| flat.starts_with(w))
    }

    /// Whether `key` is the name of the new thing this tool makes, so it gets
    /// a fresh value of its own rather than one that exists: the bare
    /// `name`, `path`, `id`, `key`, `title` of a creator, or a
    /// `<noun>_name` / `<noun>Id` whose noun is the tool's
    /// (`git_create_branch`'s `branch_name`). A creator's reference to
    /// another thing (`add_observations`'s `entityName`) is not new.
    pub fn new_name(&self, key: &str) -> bool {
        if self.existing_target && self.path_kind(key) == Some(PathKind::File) {
            return false;
        }
        if self.new_place(key) {
            return true;
        }
        if !self.creator {
            return false;
        }
        let flat = flat(key);
        if FILE_PLACE_PARAMS.contains(&flat.as_str()) {
            return self.makes_files();
        }
        if ["name", "id", "key", "title"].contains(&flat.as_str()) {
            return true;
        }
        // Named for the thing itself (`create_branch`'s `branch`).
        if !self.noun.is_empty() && crate::plan::harvest::singular(&flat) == self.noun {
            return true;
        }
        !self.noun.is_empty()
            && ["name", "id"].iter().any(|suffix| {
                flat.strip_suffix(suffix)
                    .is_some_and(|stem| crate::plan::harvest::singular(stem) == self.noun)
            })
    }

    /// Whether what this creator makes is kept as a file or folder of its
    /// own, so that its bare `path` names the new thing: a verb alone that
    /// writes whole (`write`, `create`, `save`), or a noun that is a file
    /// (`create_workbook`, `write_page`, `create_directory`). A creator of
    /// a part of a file (`append_rows`, `create_chart`, `insert_columns`,
    /// `add_sheet`) is told the file it goes into, which exists; so is
    /// anything that appends, which extends what is there.
    pub fn makes_files(&self) -> bool {
        let words = words(&self.tool);
        if words.iter().any(|w| w == "append") {
            return false;
        }
        if self.noun.is_empty() {
            // A verb with nothing after it (`write`, `repo_add`) makes
            // files when it writes whole; a name with no verb at all
            // (`manage_note`, asked to `create` by its operation) when a
            // word of it is a file.
            if words.iter().any(|w| CREATE_WORDS.contains(&w.as_str())) {
                return words
                    .iter()
                    .any(|w| WHOLE_WRITE_WORDS.contains(&w.as_str()));
            }
            return words
                .iter()
                .any(|w| FILE_NOUNS.contains(&crate::plan::harvest::singular(w).as_str()));
        }
        FILE_NOUNS.contains(&self.noun.as_str())
    }

    /// The SQL a parameter asks for, when the parameter is named for SQL
    /// and the tool speaks of SQL, tables or a database.
    pub fn sql_kind(&self, key: &str) -> Option<SqlKind> {
        let flat = flat(key);
        // `raw_ddl_sql`, `dml_query`: named for SQL at its end.
        let sql_prefix = |end: &str| {
            flat.strip_suffix(end).is_some_and(|stem| {
                ["sql", "ddl", "dml", "dcl", "raw"]
                    .iter()
                    .any(|w| stem.contains(w))
            })
        };
        let named = SQL_PARAMS.contains(&flat.as_str())
            || (flat.len() > 3 && flat.ends_with("sql"))
            || sql_prefix("query")
            || sql_prefix("statement");
        if !self.speaks_sql || !named {
            return None;
        }
        let has = |w: &str| self.text.contains(w);
        let words = words(&self.tool);
        let word = |w: &str| words.iter().any(|x| x == w);
        // A search over a database's index (`search`: "full-text search
        // over the local SQLite index") is asked for words, not SQL,
        // unless its name or text speaks of statements.
        let searches = ["search", "find", "grep", "lookup", "recall", "locate"]
            .iter()
            .any(|w| word(w));
        let says = |w: &str| {
            self.text
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|t| t == w)
        };
        if searches
            && flat == "query"
            && !word("sql")
            && !word("query")
            && !says("select")
            && !has("sql query")
        {
            return None;
        }
        Some(if (has("create") && has("table")) || word("ddl") {
            SqlKind::CreateTable
        } else if has("alter") || has("add column") || (has("modify") && has("schema")) {
            SqlKind::AlterTable
        } else if has("insert") || has("update") || has("write") || word("dml") {
            SqlKind::Insert
        } else if has("drop") {
            SqlKind::DropTable
        } else {
            SqlKind::Select
        })
    }
}

/// Whether `object`, after `verb` in a tool's name, is what the tool takes
/// out of the file it reads rather than that file: pictures extracted
/// (`extract_images`), a format exported to (`export_csv`, `export_pdf`).
/// A document exported or a PDF extracted from is what the tool reads
/// (`export_notebook`, `extract_pdf`): after `export`, a format named by
/// its extension (`export_xlsx`) is made, a document named by what it is
/// (`export_workbook`) is read.
fn takes_out(verb: &str, object: &str) -> bool {
    let kind = object.strip_suffix('s').unwrap_or(object);
    match verb {
        "extract" => matches!(kind, "image" | "png"),
        "export" => !matches!(
            kind,
            "notebook" | "workbook" | "spreadsheet" | "excel" | "powerpoint"
        ),
        _ => false,
    }
}

/// Words of a tool's text that name a kind of file, and the extensions of
/// that kind, in order of preference. Only words that name a file format:
/// `json`, which many tools say of their answers, is not one.
const FILE_TYPES: [(&str, &[&str]); 16] = [
    ("xlsx", &["xlsx", "xlsm", "xls"]),
    ("workbook", &["xlsx", "xlsm", "xls", "ods"]),
    ("excel", &["xlsx", "xlsm", "xls"]),
    ("spreadsheet", &["xlsx", "ods", "xlsm", "xls", "csv"]),
    ("ods", &["ods"]),
    ("csv", &["csv"]),
    ("docx", &["docx"]),
    ("pdf", &["pdf"]),
    ("markdown", &["md", "markdown"]),
    ("notebook", &["ipynb"]),
    ("yaml", &["yaml", "yml"]),
    ("toml", &["toml"]),
    ("pptx", &["pptx"]),
    ("powerpoint", &["pptx"]),
    ("image", &["png", "jpg", "jpeg", "gif"]),
    ("png", &["png"]),
];

impl ToolCues {
    /// The file extensions parameter `param` asks for: those its own name
    /// says (`image_path` of a workbook tool wants an image), else the
    /// tool's ([`Self::file_types`]), where a place it writes to asks for
    /// the kind the tool's name says it makes (`convert_to_pdf`'s
    /// `output`: a PDF) first.
    pub fn file_types_for(&self, param: &str) -> Vec<&'static str> {
        let own = types_named(&words(param));
        if !own.is_empty() {
            return own;
        }
        let flat = flat(param);
        let output = self.output_place(param)
            || ["out", "dest", "target", "save", "export", "to"]
                .iter()
                .any(|w| flat.starts_with(w));
        // A converter names both kinds, what it reads first
        // (`pdf_to_excel`, `csv_excel_convert`): its input is the first,
        // its output the last.
        let named: Vec<Vec<&'static str>> = words(&self.tool)
            .iter()
            .map(|w| types_named(std::slice::from_ref(w)))
            .filter(|t| !t.is_empty())
            .collect();
        let made = self.made_types();
        // Unless the name says which it makes (`extract_images_from_pdf`
        // reads the PDF it names last and makes the images it names first).
        if !made.is_empty()
            && !output
            && let Some(read) = named
                .iter()
                .find(|kinds| !kinds.iter().any(|e| made.contains(e)))
        {
            return read.clone();
        }
        if let (Some(first), Some(last)) = (named.first(), named.last())
            && first != last
        {
            return match (output, made.is_empty()) {
                (true, true) => last.clone(),
                (true, false) => made,
                (false, _) => first.clone(),
            };
        }
        if output && !made.is_empty() {
            let mut out = made;
            for ext in self.file_types() {
                if !out.contains(&ext) {
                    out.push(ext);
                }
            }
            return out;
        }
        self.file_types()
    }

    /// The kinds the tool's name says it makes: those after `to`, `as` or
    /// `into` (`convert_to_pdf`, `save_as_docx`), and what an extracting
    /// or exporting verb takes out ([`takes_out`]) when the name ends with
    /// it or goes on with `from` (`extract_images` reads a workbook and
    /// makes images; `extract_pdf_text` reads a PDF, its kind a modifier
    /// of `text`).
    fn made_types(&self) -> Vec<&'static str> {
        let name = words(&self.tool);
        let after = name
            .iter()
            .position(|w| matches!(w.as_str(), "to" | "as" | "into"))
            .map_or(&[][..], |at| &name[at + 1..]);
        let mut made = types_named(after);
        for (at, verb) in name.iter().enumerate() {
            let Some(object) = name.get(at + 1) else {
                continue;
            };
            let ends = name.get(at + 2).is_none_or(|next| next == "from");
            if ends && takes_out(verb, object) {
                for ext in types_named(std::slice::from_ref(object)) {
                    if !made.contains(&ext) {
                        made.push(ext);
                    }
                }
            }
        }
        made
    }

    /// The file extensions its name and text ask for (a workbook tool asks
    /// for `.xlsx`), most wanted first; empty when it names no kind of
    /// file. The kind its name says it reads comes first, then the kinds
    /// its text says in the order it says them, and last the kind its name
    /// says it makes: `read_pdf` whose text mentions the images it
    /// extracts wants a PDF, `edit_pptx` whose text says "not for PDFs" a
    /// deck, and `convert_to_pdf` ("Converts DOCX or XLSX to PDF") reads a
    /// document, not a PDF.
    pub fn file_types(&self) -> Vec<&'static str> {
        let name = words(&self.tool);
        let made = self.made_types();
        let mut out: Vec<&'static str> = Vec::new();
        let read_first = types_named(&name).into_iter().filter(|e| !made.contains(e));
        for ext in read_first
            .chain(types_named(&words(&self.text)))
            .chain(made.iter().copied())
        {
            if !out.contains(&ext) {
                out.push(ext);
            }
        }
        // What it makes is what it reads last, after every other kind.
        if !made.is_empty() && out.len() > made.len() {
            out.retain(|e| !made.contains(e));
            out.extend(made);
        }
        out
    }

    /// Whether its text says the table it writes into is made when it does
    /// not exist (`If the table doesn't exist, it will be created`): such a
    /// creator has a form that names a table of its own.
    pub fn makes_missing_tables(&self) -> bool {
        let has = |w: &str| self.text.contains(w);
        self.creator
            && has("table")
            && [
                "doesn't exist",
                "does not exist",
                "not exist",
                "if missing",
                "will be created",
                "is created",
                "creates it",
                "create it",
            ]
            .iter()
            .any(|w| has(w))
    }
}

/// The extensions the kinds of file in `words` name, in the order the
/// words name them, each kind's own extensions most wanted first.
fn types_named(words: &[String]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for w in words {
        for (word, extensions) in FILE_TYPES {
            if w == word || w.strip_suffix('s') == Some(word) {
                for ext in extensions {
                    if !out.contains(ext) {
                        out.push(ext);
                    }
                }
            }
        }
    }
    out
}

impl ToolCues {
    /// Whether its name says it writes a thing's content whole (`write_file`,
    /// `save_note`, `put_object`): such a tool has an overwrite form.
    pub fn overwrites(&self) -> bool {
        let name = self.tool.to_ascii_lowercase();
        words(&name)
            .iter()
            .any(|w| ["write", "save", "put"].contains(&w.as_str()))
    }

    /// Whether its name says it changes, overwrites, moves or removes
    /// what its arguments name (`delete_note`, `updateTask`, `move_file`,
    /// `git_reset`): its calls on an existing object are the ones a claim
    /// that it destroys nothing rests on. A name that says it writes a
    /// thing whole ([`Self::overwrites`]) changes what it is pointed at
    /// when that exists; its create form is told apart by its fresh name.
    pub fn changes(&self) -> bool {
        words(&self.tool)
            .iter()
            .any(|w| CHANGE_WORDS.contains(&w.as_str()))
    }

    /// Whether its name says it moves, renames or removes what it is
    /// pointed at (`move_folder`, `delete_directory`): the thing it is
    /// given must be one the store holds below its root.
    pub fn relocates(&self) -> bool {
        words(&self.tool)
            .iter()
            .any(|w| RELOCATE_WORDS.contains(&w.as_str()))
    }

    /// Every form of SQL a parameter asks for, the first the one
    /// [`Self::sql_kind`] gives: a statement that writes rows, or a
    /// general executor (its text names no statement at all), is also
    /// asked to delete the row its insert made; an executor to insert one
    /// first. A tool's text that names only reads keeps to them.
    pub fn sql_forms(&self, key: &str) -> Vec<SqlKind> {
        let Some(kind) = self.sql_kind(key) else {
            return Vec::new();
        };
        let has = |w: &str| self.text.contains(w);
        let names_none = ![
            "select", "insert", "update", "delete", "create", "alter", "drop",
        ]
        .iter()
        .any(|w| has(w))
            && !has("read");
        match kind {
            SqlKind::Insert if has("delete") || has("execute") || has("run") => {
                vec![SqlKind::Insert, SqlKind::Delete]
            }
            SqlKind::Select if names_none && (has("execute") || has("run")) => {
                vec![SqlKind::Select, SqlKind::Insert, SqlKind::Delete]
            }
            kind => vec![kind],
        }
    }
}

/// Words that end a tool name's thing: what follows says where it goes.
const PREPOSITIONS: [&str; 8] = ["to", "for", "in", "into", "on", "from", "of", "by"];

/// Verbs that may stand before the noun in a tool name (`delete_entities`,
/// `git_checkout`, `describe_table`, `register_project`): what follows is
/// the thing the tool is about.
pub(crate) fn is_verb(word: &str) -> bool {
    [
        "get", "read", "list", "delete", "remove", "drop", "describe", "show", "open", "search",
        "move", "edit", "update", "alter", "export", "query", "checkout", "reset", "commit",
        "register",
    ]
    .contains(&word)
}

/// What each parameter of `tool` is said to be, where its words say a
/// file or a directory (see [`said_kind`]).
fn described_paths(tool: &ToolEntry) -> Vec<(String, PathKind)> {
    let text = tool.description.as_deref().unwrap_or("");
    let Some(properties) = tool
        .input_schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(serde_json::Value::as_object)
    else {
        return Vec::new();
    };
    properties
        .iter()
        .filter_map(|(name, sub)| {
            let doc = sub
                .get("description")
                .and_then(serde_json::Value::as_str)
                .filter(|d| !d.trim().is_empty())
                .map(str::to_owned)
                .or_else(|| crate::plan::synth::parameter_doc(text, name))?;
            said_kind(&doc).map(|kind| (name.clone(), kind))
        })
        .collect()
}

/// A file or a directory, as a parameter's own words say (`Path to the
/// .xlsx file`, `Directory to search`): a file when they name a file or a
/// file format's extension and no folder, a directory when they name a
/// folder and no file; neither when they say both or none (`a file or a
/// directory`).
fn said_kind(doc: &str) -> Option<PathKind> {
    let lowered = doc.to_lowercase();
    let said = words(&lowered);
    // `parent directory must exist` says where the thing goes, not what
    // it is.
    let dir = said.iter().enumerate().any(|(at, w)| {
        matches!(w.as_str(), "directory" | "folder" | "dir")
            && (at == 0 || said[at - 1] != "parent")
    });
    let extension = FILE_TYPES
        .iter()
        .flat_map(|(_, extensions)| extensions.iter())
        .any(|e| lowered.contains(&format!(".{e}")));
    let file = extension || said.iter().any(|w| w == "file");
    match (file, dir) {
        (true, false) => Some(PathKind::File),
        (false, true) => Some(PathKind::Dir),
        _ => None,
    }
}

/// `git_create_branch` → `git`, `create`, `branch`; `readFile` → `read`, `file`.
pub(crate) fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && previous_lower && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_ascii_lowercase();
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// `repo_path` → `repopath`, `entityName` → `entityname`.
/// A parameter name lowercased with everything but letters and digits
/// dropped (`old_text`, `oldText` → `oldtext`): how names are compared.
pub(crate) fn flat(key: &str) -> String {
    key.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::Hints;

    use super::*;

    fn tool(name: &str, annotations: serde_json::Value, description: &str) -> ToolCues {
        entry(name, Some(annotations), None, description)
    }

    fn entry(
        name: &str,
        annotations: Option<serde_json::Value>,
        schema: Option<serde_json::Value>,
        description: &str,
    ) -> ToolCues {
        let hints = Hints::from_annotations(annotations.as_ref());
        ToolCues::of(&ToolEntry {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            class: hints.class(),
            hints,
            annotations,
            input_schema: schema,
            execution: None,
            has_output_schema: false,
            output_schema: None,
        })
    }

    fn read() -> serde_json::Value {
        json!({"readOnlyHint": true})
    }

    fn write() -> serde_json::Value {
        json!({"readOnlyHint": false, "destructiveHint": true})
    }

    #[test]
    fn a_creator_of_files_names_a_new_path_and_a_creator_of_parts_the_file_they_go_in() {
        // Whole files: the bare path is the new thing.
        for name in [
            "write_file",
            "create_workbook",
            "write_page",
            "write",
            "create_directory",
        ] {
            assert!(tool(name, write(), "").new_name("path"), "{name}");
        }
        // A creator's `file_path` is the new file as its `path` is.
        assert!(tool("create_excel_file", write(), "").new_name("file_path"));
        assert!(tool("create_excel_file", write(), "").new_name("filePath"));
        assert!(!tool("append_rows", write(), "").new_name("file_path"));
        // Parts of a file, and anything that appends: the file exists.
        for name in [
            "append_rows",
            "create_chart",
            "insert_columns",
            "create_sheet",
            "append_file",
            "append",
            "tf_repo_add",
        ] {
            assert!(!tool(name, write(), "").new_name("path"), "{name}");
        }
        // The thing's own name stays new whatever it is.
        assert!(tool("create_chart", write(), "").new_name("name"));
        // Registering makes a thing known; unregistering does not.
        let register = tool("register_project", write(), "");
        assert!(register.creator && register.noun == "project" && register.new_name("name"));
        assert!(!tool("unregister_project", write(), "").creator);
        // An overwrite form names a file that exists, its output too.
        let mut overwrite = tool("create_excel", write(), "");
        assert!(overwrite.new_name("out_path"));
        overwrite.existing_target = true;
        assert!(!overwrite.new_name("out_path"));
        assert!(!overwrite.new_name("filename"));
    }

    #[test]
    fn paths_are_files_directories_or_the_root_by_parameter_then_by_tool() {
        let read_file = tool("read_file", read(), "");
        assert_eq!(read_file.path_kind("path"), Some(PathKind::File));
        assert_eq!(read_file.path_kind("paths"), Some(PathKind::File));
        let list = tool("list_directory", read(), "");
        assert_eq!(list.path_kind("path"), Some(PathKind::Dir));
        let mkdir = tool("create_directory", write(), "");
        assert_eq!(mkdir.path_kind("path"), Some(PathKind::Dir));
        let search = tool("search_files", read(), "");
        assert_eq!(search.path_kind("path"), Some(PathKind::Dir), "search in");
        // What a converter reads and writes: files, the output a new one.
        let convert = tool("convert_to_pdf", write(), "");
        assert_eq!(convert.path_kind("input_pdf"), Some(PathKind::File));
        assert_eq!(convert.path_kind("input"), Some(PathKind::File));
        assert_eq!(convert.path_kind("output"), Some(PathKind::File));
        assert!(convert.new_place("output") && convert.new_place("out_path"));
        assert!(convert.new_place("target_path"));
        let git = tool("git_status", read(), "");
        assert_eq!(git.path_kind("repo_path"), Some(PathKind::Root));
        assert_eq!(git.path_kind("files"), Some(PathKind::File));
        assert_eq!(git.path_kind("file"), Some(PathKind::File));
        // A database's path is its file, even for a tool that lists.
        let lister = tool("list_tables", read(), "");
        assert_eq!(lister.path_kind("db_path"), Some(PathKind::File));
        assert_eq!(lister.path_kind("databasePath"), Some(PathKind::File));
        assert_eq!(lister.path_kind("notePath"), Some(PathKind::Dir));
        assert_eq!(git.path_kind("note_path"), Some(PathKind::File));
        assert_eq!(git.path_kind("xpath_query"), None);
        assert_eq!(git.path_kind("target"), None, "a revision, not a path");
        assert_eq!(git.path_kind("message"), None);
        let mover = tool("move_file", write(), "");
        assert_eq!(mover.path_kind("source"), Some(PathKind::File));
        assert_eq!(mover.path_kind("destination"), Some(PathKind::File));
        assert_eq!(
            tool("x", read(), "").path_kind("output_dir"),
            Some(PathKind::Dir)
        );
    }

    #[test]
    fn a_creator_gets_fresh_names_for_its_own_thing_and_real_ones_for_references() {
        let mkdir = tool(
            "create_directory",
            json!({"readOnlyHint": false, "destructiveHint": false}),
            "",
        );
        assert!(mkdir.creator);
        assert!(mkdir.new_name("path"));
        let branch = tool(
            "git_create_branch",
            json!({"readOnlyHint": false, "destructiveHint": false}),
            "",
        );
        assert_eq!(branch.noun, "branch");
        assert!(branch.new_name("branch_name"));
        assert!(branch.new_name("branch"), "named for the thing itself");
        assert!(!branch.new_name("base_branch"));
        let dep = tool("add_section_dep", json!({}), "");
        assert_eq!(dep.noun, "dep", "the thing is the last word after the verb");
        assert!(!dep.new_name("section_id"), "a reference to a section");
        let observe = tool(
            "add_observations",
            json!({"readOnlyHint": false, "destructiveHint": false}),
            "",
        );
        assert!(observe.creator);
        assert!(!observe.new_name("entityName"), "a reference to an entity");
        let entities = tool(
            "create_entities",
            json!({"readOnlyHint": false, "destructiveHint": false}),
            "",
        );
        assert_eq!(entities.noun, "entity");
        assert!(entities.new_name("name"));
        assert!(entities.new_name("entityName"));
        // The annotations never narrow the cues: a read-only "create" is
        // still handed a fresh name, so that a lie would make something.
        let liar = tool("create_report", read(), "");
        assert!(!liar.store_first, "a declaration never makes a reader");
        assert!(liar.creator);
        assert!(liar.new_name("name"));
        // Moving somewhere is always to a new place.
        assert!(tool("move_file", write(), "").new_name("destination"));
    }

    #[test]
    fn sql_is_written_only_for_sql_parameters_of_tools_that_speak_of_it() {
        let unknown = json!({});
        let kind = |name: &str, description: &str| {
            tool(name, unknown.clone(), description).sql_kind("query")
        };
        assert_eq!(
            kind("read_query", "Execute SELECT queries to read data"),
            Some(SqlKind::Select)
        );
        assert_eq!(
            kind("write_query", "Execute INSERT, UPDATE, or DELETE queries"),
            Some(SqlKind::Insert)
        );
        assert_eq!(
            kind("create_table", "Create new tables in the database"),
            Some(SqlKind::CreateTable)
        );
        assert_eq!(
            kind("alter_table", "Modify existing table schema"),
            Some(SqlKind::AlterTable)
        );
        assert_eq!(
            kind(
                "export_query",
                "Export query results to various formats (CSV, JSON)"
            ),
            Some(SqlKind::Select),
            "named for queries"
        );
        assert_eq!(
            kind("export", "Export results to various formats (CSV, JSON)"),
            None,
            "nothing says SQL, a table, a database or a query"
        );
        assert_eq!(
            kind("search_nodes", "Search for nodes in the knowledge graph"),
            None,
            "a search query is not SQL"
        );
        assert_eq!(
            kind("search", "Full-text search over the local SQLite index"),
            None,
            "a search over a database's index is asked for words"
        );
        assert_eq!(
            kind("search_rows", "Run a SELECT over the table"),
            Some(SqlKind::Select),
            "a search that says it runs statements"
        );
        assert_eq!(
            tool("read_query", unknown.clone(), "Execute SELECT queries").sql_kind("limit"),
            None
        );
        // Named for SQL at its end, and a DDL or DML tool by its name.
        let ddl = tool(
            "run_ddl_query",
            unknown.clone(),
            "Run a query on PostgreSQL",
        );
        assert_eq!(ddl.sql_kind("raw_ddl_sql"), Some(SqlKind::CreateTable));
        let dml = tool(
            "run_dml_query",
            unknown.clone(),
            "Run a query on PostgreSQL",
        );
        assert_eq!(dml.sql_kind("raw_dml_sql"), Some(SqlKind::Insert));
        let search = tool("search", unknown, "Search the notes database");
        assert_eq!(search.sql_kind("search_query"), None, "a search is no SQL");
    }

    #[test]
    fn a_converter_reads_the_kind_it_names_first_and_writes_the_last() {
        let pdf = tool(
            "pdf_to_excel",
            json!({}),
            "Extract the tables of a PDF into Excel",
        );
        assert_eq!(pdf.file_types_for("input_path"), ["pdf"]);
        assert_eq!(pdf.file_types_for("output_path")[0], "xlsx");
        let csv = tool(
            "csv_excel_convert",
            json!({}),
            "Convert between CSV and Excel",
        );
        assert_eq!(csv.file_types_for("input"), ["csv"]);
        // One kind named: every file parameter wants it, as before.
        let sheet = tool("read_sheet", json!({}), "Read a sheet of an Excel workbook");
        assert_eq!(sheet.file_types_for("path")[0], "xlsx");
        assert_eq!(
            sheet.file_types_for("image_path"),
            ["png", "jpg", "jpeg", "gif"]
        );
    }

    #[test]
    fn the_kind_a_name_says_comes_before_the_kinds_its_text_mentions() {
        let read = tool(
            "read_pdf",
            json!({}),
            "Reads PDF text and embedded images for agent vision",
        );
        assert_eq!(read.file_types_for("path")[0], "pdf");
        let deck = tool(
            "edit_pptx",
            json!({}),
            "Modifies a deck in place. Do not use for PDFs",
        );
        assert_eq!(deck.file_types_for("input_path")[0], "pptx");
        // No kind in the name: the text's, in the order it says them.
        let extract = tool(
            "extract_structured",
            json!({}),
            "Extracts tables from PDF pages to Markdown",
        );
        assert_eq!(
            extract.file_types_for("input_path"),
            ["pdf", "md", "markdown"]
        );
        // A converter reads the other kinds and makes the one its name
        // says after `to`.
        let convert = tool("convert_to_pdf", json!({}), "Converts DOCX or XLSX to PDF");
        assert_eq!(
            convert.file_types_for("input_file"),
            ["docx", "xlsx", "xlsm", "xls", "pdf"]
        );
        assert_eq!(convert.file_types_for("output")[0], "pdf");
    }

    #[test]
    fn an_extracting_verbs_object_is_what_the_tool_makes_not_what_it_reads() {
        // Sent `logo.png`, a workbook tool answered `unsupported file`.
        let images = tool(
            "extract_images",
            json!({}),
            "Extract embedded images from an Excel workbook",
        );
        assert_eq!(images.file_types_for("file_path")[0], "xlsx");
        assert_eq!(images.file_types_for("output_dir")[0], "png");
        // With `from`, the kind after it is read.
        let from = tool("extract_images_from_pdf", json!({}), "");
        assert_eq!(from.file_types_for("path")[0], "pdf");
        assert_eq!(from.file_types_for("output_dir")[0], "png");
        // A kind that modifies the object is what the tool reads.
        let text = tool("extract_pdf_text", json!({}), "Extract the text of a PDF");
        assert_eq!(text.file_types_for("path"), ["pdf"]);
        // A kind named alone is still wanted when nothing else is named.
        let alone = tool("export_csv", json!({}), "Export the rows");
        assert_eq!(alone.file_types_for("path"), ["csv"]);
        // A document exported, or a PDF extracted from, is what is read.
        let notebook = tool("export_notebook", json!({}), "Export a notebook to PDF");
        assert_eq!(notebook.file_types_for("path")[0], "ipynb");
        let pdf = tool("extract_pdf", json!({}), "Extract text and images");
        assert_eq!(pdf.file_types_for("path")[0], "pdf");
    }

    #[test]
    fn names_split_into_words_on_separators_and_case() {
        assert_eq!(words("git_create_branch"), ["git", "create", "branch"]);
        assert_eq!(words("readFile"), ["read", "file"]);
        assert_eq!(words("get-env"), ["get", "env"]);
    }

    fn with_schema(name: &str, schema: serde_json::Value, description: &str) -> ToolCues {
        entry(name, None, Some(schema), description)
    }

    #[test]
    fn a_path_its_own_words_call_a_file_or_a_folder_is_one() {
        let path = json!({"properties": {"path": {"type": "string"}}});
        // A listing's bare path is a folder, unless its words say a file,
        // in the schema or on the tool's docstring line.
        let listing = with_schema("list_sheets", path.clone(), "List every sheet.");
        assert_eq!(listing.path_kind("path"), Some(PathKind::Dir));
        let docstring = "List every sheet.\n\n    Args:\n        path: Path to the .xlsx file, or the name of a preloaded one.";
        let sheets = with_schema("list_sheets", path.clone(), docstring);
        assert_eq!(sheets.path_kind("path"), Some(PathKind::File));
        let described = json!({"properties": {"path": {"type": "string", "description": "The file to search"}}});
        assert_eq!(
            with_schema("search_in", described, "").path_kind("path"),
            Some(PathKind::File)
        );
        // A writer's path said to be a folder is one.
        let folder = json!({"properties": {"path": {"type": "string", "description": "Folder the note goes in"}}});
        assert_eq!(
            with_schema("update_note", folder, "").path_kind("path"),
            Some(PathKind::Dir)
        );
        // A name that says a file is one, whatever its words add; the
        // parent folder a place needs is not what the place is.
        let place = json!({"properties": {
            "file_path": {"type": "string", "description": "Output folder"},
            "path": {"type": "string", "description": "Destination path; parent directory must exist"}}});
        let maker = with_schema("create_note", place, "");
        assert_eq!(maker.path_kind("file_path"), Some(PathKind::File));
        assert_eq!(maker.path_kind("path"), Some(PathKind::File));
        // Words that say both, or a parameter that is no path, change nothing.
        let both = json!({"properties": {
            "path": {"type": "string", "description": "A file or directory"},
            "content": {"type": "string", "description": "Text of the file"}}});
        let either = with_schema("list_entries", both.clone(), "");
        assert_eq!(either.path_kind("path"), Some(PathKind::Dir));
        assert_eq!(
            with_schema("write_note", both, "").path_kind("content"),
            None
        );
    }
}
