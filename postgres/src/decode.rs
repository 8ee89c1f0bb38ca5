//! Reads the lines of PostgreSQL's `test_decoding` output plugin.
//!
//! One line per row change: `table SCHEMA.TABLE: OP: COLUMNS`, where an
//! UPDATE of a table with full replica identity carries `old-key: OLD
//! new-tuple: NEW`, and COLUMNS are `name[type]:value` separated by one
//! space. A value is `null`, `unchanged-toast-datum`, a number or boolean
//! as is, a bit string as `B'...'`, anything else quoted with `'` (a quote
//! inside doubled). Values are given back in the type's text form, which is
//! what a query in text format returns: `true`/`false` become `t`/`f`.

/// One column of a decoded tuple.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub value: Value,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Null,
    Text(String),
    /// A TOASTed value the UPDATE did not change (not written to WAL).
    Unchanged,
}

/// What one line says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    Begin,
    Commit,
    Insert {
        table: String,
        new: Vec<Column>,
    },
    Update {
        table: String,
        old: Option<Vec<Column>>,
        new: Vec<Column>,
    },
    Delete {
        table: String,
        old: Option<Vec<Column>>,
    },
    Truncate {
        table: String,
    },
    /// Anything else (a logical message): nothing to record.
    Other,
}

/// Parses one line. An error names what could not be read.
pub fn parse_line(line: &str) -> Result<Line, String> {
    if line.starts_with("BEGIN") {
        return Ok(Line::Begin);
    }
    if line.starts_with("COMMIT") {
        return Ok(Line::Commit);
    }
    let Some(rest) = line.strip_prefix("table ") else {
        return Ok(Line::Other);
    };
    let (table, rest) = split_table(rest).ok_or_else(|| format!("no table name in {rest:?}"))?;
    let (op, body) = rest
        .split_once(": ")
        .map(|(op, body)| (op, body.to_owned()))
        .unwrap_or((rest.trim_end_matches(':'), String::new()));
    let no_data = body.starts_with("(no-tuple-data)");
    match op {
        "INSERT" => Ok(Line::Insert {
            table,
            new: columns(&body)?,
        }),
        "UPDATE" => match body.strip_prefix("old-key: ") {
            Some(both) => {
                let at = both
                    .find(" new-tuple: ")
                    .ok_or_else(|| "old-key without new-tuple".to_owned())?;
                Ok(Line::Update {
                    table,
                    old: Some(columns(&both[..at])?),
                    new: columns(&both[at + " new-tuple: ".len()..])?,
                })
            }
            None => Ok(Line::Update {
                table,
                old: None,
                new: columns(&body)?,
            }),
        },
        "DELETE" => Ok(Line::Delete {
            table,
            old: if no_data { None } else { Some(columns(&body)?) },
        }),
        "TRUNCATE" => Ok(Line::Truncate { table }),
        other => Err(format!("unknown operation {other:?}")),
    }
}

/// `public."My T": INSERT: ...` → (`public."My T"`, `INSERT: ...`): the
/// name as PostgreSQL quotes it, up to the `: ` outside quotes.
fn split_table(text: &str) -> Option<(String, &str)> {
    let mut quoted = false;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b':' if !quoted && bytes.get(i + 1) == Some(&b' ') => {
                return Some((text[..i].to_owned(), &text[i + 2..]));
            }
            _ => {}
        }
    }
    None
}

fn columns(text: &str) -> Result<Vec<Column>, String> {
    let mut out = Vec::new();
    let mut rest = text.trim_end();
    while !rest.is_empty() {
        let (name, after) = identifier(rest)?;
        let after = after
            .strip_prefix('[')
            .ok_or_else(|| format!("no type after column {name:?}"))?;
        let end = after
            .find("]:")
            .ok_or_else(|| format!("unterminated type of column {name:?}"))?;
        let type_name = &after[..end];
        let (value, after) = value(&after[end + 2..], type_name)?;
        out.push(Column { name, value });
        rest = after.strip_prefix(' ').unwrap_or(after);
    }
    Ok(out)
}

/// A column name, unquoted: `"a ""b"""` → `a "b"`.
fn identifier(text: &str) -> Result<(String, &str), String> {
    if let Some(inner) = text.strip_prefix('"') {
        let mut name = String::new();
        let mut chars = inner.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '"' {
                if chars.peek().map(|(_, c)| *c) == Some('"') {
                    chars.next();
                    name.push('"');
                } else {
                    return Ok((name, &inner[i + 1..]));
                }
            } else {
                name.push(c);
            }
        }
        Err("unterminated quoted column name".into())
    } else {
        let end = text.find('[').ok_or("no type after a column name")?;
        Ok((text[..end].to_owned(), &text[end..]))
    }
}

fn value<'a>(text: &'a str, type_name: &str) -> Result<(Value, &'a str), String> {
    let quoted = text
        .strip_prefix('\'')
        .map(|inner| (inner, false))
        .or_else(|| text.strip_prefix("B'").map(|inner| (inner, true)));
    if let Some((inner, _bits)) = quoted {
        let mut out = String::new();
        let mut chars = inner.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '\'' {
                if chars.peek().map(|(_, c)| *c) == Some('\'') {
                    chars.next();
                    out.push('\'');
                } else {
                    return Ok((Value::Text(out), &inner[i + 1..]));
                }
            } else {
                out.push(c);
            }
        }
        return Err("unterminated quoted value".into());
    }
    let end = text.find(' ').unwrap_or(text.len());
    let (word, rest) = text.split_at(end);
    let value = match word {
        "null" => Value::Null,
        "unchanged-toast-datum" => Value::Unchanged,
        "true" if type_name == "boolean" => Value::Text("t".into()),
        "false" if type_name == "boolean" => Value::Text("f".into()),
        other => Value::Text(other.to_owned()),
    };
    Ok((value, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(name: &str, value: &str) -> Column {
        Column {
            name: name.into(),
            value: Value::Text(value.into()),
        }
    }

    #[test]
    fn inserts_read_quoted_text_numbers_booleans_nulls_and_arrays() {
        let line = r#"table public."My Notes": INSERT: id[integer]:7 "the body"[text]:'it''s here: ok' done[boolean]:true tags[text[]]:'{a,b}' note[character varying]:null"#;
        assert_eq!(
            parse_line(line),
            Ok(Line::Insert {
                table: r#"public."My Notes""#.into(),
                new: vec![
                    text("id", "7"),
                    text("the body", "it's here: ok"),
                    text("done", "t"),
                    text("tags", "{a,b}"),
                    Column {
                        name: "note".into(),
                        value: Value::Null
                    },
                ],
            })
        );
    }

    #[test]
    fn updates_carry_old_values_under_full_identity_and_deletes_may_carry_none() {
        let line = "table public.t: UPDATE: old-key: id[integer]:1 b[text]:'x' new-tuple: id[integer]:1 b[text]:unchanged-toast-datum";
        assert_eq!(
            parse_line(line),
            Ok(Line::Update {
                table: "public.t".into(),
                old: Some(vec![text("id", "1"), text("b", "x")]),
                new: vec![
                    text("id", "1"),
                    Column {
                        name: "b".into(),
                        value: Value::Unchanged
                    }
                ],
            })
        );
        assert_eq!(
            parse_line("table public.t: DELETE: (no-tuple-data)"),
            Ok(Line::Delete {
                table: "public.t".into(),
                old: None
            })
        );
        assert_eq!(
            parse_line("table public.t: TRUNCATE: (no-flags)"),
            Ok(Line::Truncate {
                table: "public.t".into()
            })
        );
        assert_eq!(parse_line("BEGIN"), Ok(Line::Begin));
        assert!(parse_line("table public.t: INSERT: id[integer]:'1").is_err());
    }
}
