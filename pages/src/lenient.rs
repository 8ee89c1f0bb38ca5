//! Reading one of our documents field by field, when it may not have the
//! model's shape: written by an older or newer mcp-witness, or by hand.
//!
//! There is no second description of the document here. The model's own
//! `Deserialize` decides, field by field, what fits: [`Lenient::read`] starts
//! from the type's default and copies in each field of the file that leaves
//! the whole still readable as the model's type, descending into objects the
//! model has a place for (and into lists, item by item) when a field does
//! not fit as a whole. Whatever does not fit is passed over and stays at its
//! default, and [`Lenient::recorded`] tells a field that was read from one
//! that was not, so a page can say "not recorded" instead of showing a
//! default as if it had been measured.

use std::collections::BTreeSet;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// A document read as far as its shape allows.
#[derive(Clone, Debug)]
pub struct Lenient<T> {
    /// The model's type: every field the file did not provide in the
    /// model's shape holds its default.
    pub value: T,
    /// JSON pointers of the fields taken from the file.
    taken: BTreeSet<String>,
    /// JSON pointers of the fields the file had and the model could not read.
    passed_over: BTreeSet<String>,
}

impl<T: Default + Serialize + DeserializeOwned> Lenient<T> {
    pub fn read(found: &Value) -> Self {
        if let Ok(value) = T::deserialize(found) {
            return Self {
                value,
                taken: BTreeSet::from([String::new()]),
                passed_over: BTreeSet::new(),
            };
        }
        let mut taken = BTreeSet::new();
        let mut passed_over = BTreeSet::new();
        // The default's serialization names every field the model requires,
        // each with a value the model accepts: the frame the file's fields
        // are tried in.
        let mut doc = serde_json::to_value(T::default()).unwrap_or(Value::Null);
        let fits = |doc: &Value| T::deserialize(doc).is_ok();
        match found {
            Value::Object(fields) if fits(&doc) => {
                take(&mut doc, "", fields, &fits, &mut taken, &mut passed_over)
            }
            _ => {
                passed_over.insert(String::new());
            }
        }
        Self {
            value: T::deserialize(&doc).unwrap_or_default(),
            taken,
            passed_over,
        }
    }
}

impl<T> Lenient<T> {
    /// Whether the file gave the field at `pointer` (or something inside
    /// it, or the whole that holds it) in the model's shape.
    pub fn recorded(&self, pointer: &str) -> bool {
        self.taken
            .iter()
            .any(|t| t == pointer || within(pointer, t) || within(t, pointer))
    }

    /// The keys directly under `pointer` that the file had but the model
    /// could not read, in order.
    pub fn passed_over_under(&self, pointer: &str) -> Vec<String> {
        let prefix = format!("{pointer}/");
        self.passed_over
            .iter()
            .filter_map(|p| p.strip_prefix(&prefix))
            .filter(|rest| !rest.contains('/'))
            .map(unescape)
            .collect()
    }
}

/// Whether `inner` is a pointer strictly inside `outer`.
fn within(inner: &str, outer: &str) -> bool {
    inner
        .strip_prefix(outer)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// Copies each of `fields` into the object at `at` in `doc` when `doc`
/// still fits the model with it; otherwise, when both the model's frame and
/// the file hold an object there (a nested struct or a map), tries that
/// object's fields one by one, and when both hold a list, its items.
fn take(
    doc: &mut Value,
    at: &str,
    fields: &Map<String, Value>,
    fits: &dyn Fn(&Value) -> bool,
    taken: &mut BTreeSet<String>,
    passed_over: &mut BTreeSet<String>,
) {
    for (key, value) in fields {
        let pointer = format!("{at}/{}", escape(key));
        let Some(before) = put(doc, at, key, Some(value.clone())) else {
            return;
        };
        if fits(doc) {
            taken.insert(pointer);
            continue;
        }
        put(doc, at, key, before.clone());
        match (before, value) {
            (Some(Value::Object(_)), Value::Object(inner)) => {
                take(doc, &pointer, inner, fits, taken, passed_over);
            }
            (Some(Value::Array(_)), Value::Array(items)) => {
                take_items(doc, &pointer, items, fits, taken, passed_over);
            }
            _ => {
                passed_over.insert(pointer);
            }
        }
    }
}

/// Appends each of `items` to the (empty) array at `at` in `doc` when `doc`
/// still fits the model with it: a list keeps the entries of its type.
fn take_items(
    doc: &mut Value,
    at: &str,
    items: &[Value],
    fits: &dyn Fn(&Value) -> bool,
    taken: &mut BTreeSet<String>,
    passed_over: &mut BTreeSet<String>,
) {
    for (index, item) in items.iter().enumerate() {
        let Some(list) = doc.pointer_mut(at).and_then(Value::as_array_mut) else {
            return;
        };
        let kept = list.len();
        list.push(item.clone());
        if fits(doc) {
            taken.insert(format!("{at}/{kept}"));
            continue;
        }
        if let Some(list) = doc.pointer_mut(at).and_then(Value::as_array_mut) {
            list.truncate(kept);
        }
        passed_over.insert(format!("{at}/{index}"));
    }
}

/// Sets (or with `None` removes) `key` in the object at `at`, returning
/// what was there; `None` when there is no object at `at`.
fn put(doc: &mut Value, at: &str, key: &str, value: Option<Value>) -> Option<Option<Value>> {
    let object = doc.pointer_mut(at)?.as_object_mut()?;
    Some(match value {
        Some(value) => object.insert(key.to_owned(), value),
        None => object.shift_remove(key),
    })
}

/// A key as a JSON pointer token.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;
    use std::collections::BTreeMap;

    use super::*;

    #[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
    struct Inner {
        name: String,
        count: usize,
    }

    #[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
    struct Doc {
        title: String,
        inner: Inner,
        by_key: BTreeMap<String, Inner>,
        notes: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        extra: Option<String>,
    }

    #[test]
    fn a_document_of_the_model_s_shape_is_read_whole() {
        let found = json!({"title": "t", "inner": {"name": "n", "count": 1},
                           "by_key": {}, "notes": ["a"], "extra": "x"});
        let read = Lenient::<Doc>::read(&found);
        assert_eq!(read.value.extra.as_deref(), Some("x"));
        assert!(read.recorded("/inner/count") && read.recorded("/notes"));
    }

    #[test]
    fn each_field_is_read_on_its_own() {
        let found = json!({
            "title": 7,
            "inner": {"name": "n", "count": "three"},
            "by_key": {"a": {"name": "a", "count": 2}, "b/c": {"name": "b"}, "d": 4},
            "notes": ["kept", 3, "also kept"],
            "extra": "x",
            "unknown": true
        });
        let read = Lenient::<Doc>::read(&found);
        assert_eq!(read.value.title, "");
        assert!(!read.recorded("/title"), "a number where a string belongs");
        assert_eq!(read.value.inner.name, "n");
        assert!(read.recorded("/inner/name") && read.recorded("/inner"));
        assert!(!read.recorded("/inner/count"));
        assert_eq!(
            read.value.by_key.keys().collect::<Vec<_>>(),
            ["a"],
            "map entries are read one by one"
        );
        assert_eq!(read.passed_over_under("/by_key"), ["b/c", "d"]);
        assert_eq!(read.value.notes, ["kept", "also kept"]);
        assert!(read.recorded("/notes"));
        assert_eq!(read.value.extra.as_deref(), Some("x"));
    }

    #[test]
    fn a_file_with_nothing_of_the_model_s_shape_records_nothing() {
        for found in [json!([1, 2]), json!("text"), json!(null), json!({})] {
            let read = Lenient::<Doc>::read(&found);
            assert_eq!(read.value, Doc::default());
            assert!(!read.recorded("/title"));
        }
    }
}
