//! What a skewed read returned, judged against the reference: the value the reader's release
//! should hold, field by field on the fields both releases declare.
//!
//! The reference goes by name, as TDLib's own JSON does: a field both releases declare keeps its
//! value, a field only the reader declares takes its default, a field only the writer declares is
//! dropped, and a constructor the reader does not declare has no counterpart, so the only right
//! answer to it is an error. A renamed field is, by name, one field dropped and another added.

use std::collections::{BTreeSet, HashMap};

use tdbench_contract::skew::Tally;

use serde_json::Value;

use crate::format::Format;
use crate::release::{Release, fields_by_constructor};

/// One skewed read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Equal to the reference on every shared field.
    Correct,
    /// The reader returned an error: the text it gave.
    Refused(String),
    /// The reader returned a value, without an error, that differs from the reference on these
    /// fields (`constructor.field`), or another constructor than was written (`written read as
    /// read`).
    Wrong(BTreeSet<String>),
}

/// A value of release `W` as release `R` models it, by name (see the module doc); `None` when
/// `R` has no counterpart: a constructor `R` does not declare, or a number that does not fit the
/// type `R` declares for its field.
///
/// A widened or narrowed integer keeps its value where it fits: TDLib JSON writes int64 as a
/// string and int32/int53 as a number, so the tree's numbers are rewritten to what `R` declares
/// before `R`'s models read it.
pub fn convert<W: Release, R: Release>(value: &W::Object) -> Option<R::Object> {
    let mut tree = serde_json::to_value(value).expect("the models serialize to JSON");
    retype(&mut tree, &fields_by_constructor(R::SCHEMA));
    serde_json::from_value(tree).ok()
}

/// Rewrites integers to the JSON form of the type `reader` declares for their field.
fn retype(value: &mut Value, reader: &HashMap<String, Vec<(String, String)>>) {
    match value {
        Value::Array(elements) => elements.iter_mut().for_each(|element| retype(element, reader)),
        Value::Object(members) => {
            let constructor = members.get("@type").and_then(Value::as_str).map(str::to_string);
            let declared = constructor.and_then(|c| reader.get(&c));
            for (name, member) in members.iter_mut() {
                match declared.and_then(|fields| fields.iter().find(|(field, _)| field == name)) {
                    Some((_, ty)) if ty == "int64" || ty == "vector<int64>" => as_integers(member, |n| Value::String(n.to_string())),
                    Some((_, ty)) if ty.starts_with("int") || ty.starts_with("vector<int") => as_integers(member, Value::from),
                    _ => retype(member, reader),
                }
            }
        }
        _ => {}
    }
}

/// Applies `form` to an integer written as a number or a string, or to each element of a vector.
fn as_integers(value: &mut Value, form: fn(i64) -> Value) {
    match value {
        Value::Array(elements) => elements.iter_mut().for_each(|element| as_integers(element, form)),
        Value::Number(n) => {
            if let Some(n) = n.as_i64() {
                *value = form(n);
            }
        }
        Value::String(s) => {
            if let Ok(n) = s.parse::<i64>() {
                *value = form(n);
            }
        }
        _ => {}
    }
}

/// The field names of two releases, for deciding which fields they share.
pub struct SharedFields {
    writer: HashMap<String, Vec<(String, String)>>,
    reader: HashMap<String, Vec<(String, String)>>,
}

impl SharedFields {
    pub fn of<W: Release, R: Release>() -> SharedFields {
        SharedFields { writer: fields_by_constructor(W::SCHEMA), reader: fields_by_constructor(R::SCHEMA) }
    }

    /// The fields `constructor` has in both releases, by name.
    fn shared(&self, constructor: &str) -> Vec<&str> {
        let (Some(writer), Some(reader)) = (self.writer.get(constructor), self.reader.get(constructor)) else {
            return Vec::new();
        };
        reader.iter().filter(|(field, _)| writer.iter().any(|(w, _)| w == field)).map(|(field, _)| field.as_str()).collect()
    }
}

/// Writes `written` with `W`'s models, reads it with `R`'s, and judges what came back.
pub fn judge<W: Release, R: Release>(format: Format, written: &W::Object, fields: &SharedFields) -> Outcome {
    let expected = convert::<W, R>(written);
    let mut bytes = Vec::new();
    if let Err(e) = format.encode::<W>(written, &mut bytes) {
        return Outcome::Refused(format!("the writer refused: {e}"));
    }
    match (format.decode::<R>(&bytes), expected) {
        (Err(message), _) => Outcome::Refused(message),
        (Ok(read), None) => {
            let read = serde_json::to_value(&read).expect("the models serialize to JSON");
            let written = serde_json::to_value(written).expect("the models serialize to JSON");
            Outcome::Wrong(BTreeSet::from([format!("{} read as {}", type_of(&written), type_of(&read))]))
        }
        (Ok(read), Some(expected)) => {
            let read = serde_json::to_value(&read).expect("the models serialize to JSON");
            let expected = serde_json::to_value(&expected).expect("the models serialize to JSON");
            let mut wrong = BTreeSet::new();
            differences(Some(&read), Some(&expected), fields, "payload", &mut wrong);
            if wrong.is_empty() { Outcome::Correct } else { Outcome::Wrong(wrong) }
        }
    }
}

fn type_of(value: &Value) -> &str {
    value.get("@type").and_then(Value::as_str).unwrap_or("?")
}

/// Adds to `wrong` every shared field where `read` differs from `expected`; `place` names where
/// the two values are (`constructor.field`).
fn differences(read: Option<&Value>, expected: Option<&Value>, fields: &SharedFields, place: &str, wrong: &mut BTreeSet<String>) {
    match (read, expected) {
        (None, None) => {}
        (Some(Value::Object(read)), Some(Value::Object(expected))) => {
            let (read_type, expected_type) = (read.get("@type"), expected.get("@type"));
            let Some(constructor) = expected_type.and_then(Value::as_str) else {
                if read != expected {
                    wrong.insert(place.to_string());
                }
                return;
            };
            if read_type != expected_type {
                wrong.insert(format!("{constructor} read as {}", read_type.and_then(Value::as_str).unwrap_or("?")));
                return;
            }
            for field in fields.shared(constructor) {
                differences(read.get(field), expected.get(field), fields, &format!("{constructor}.{field}"), wrong);
            }
        }
        (Some(Value::Array(read)), Some(Value::Array(expected))) if read.len() == expected.len() => {
            for (read, expected) in read.iter().zip(expected) {
                differences(Some(read), Some(expected), fields, place, wrong);
            }
        }
        (read, expected) => {
            if read != expected {
                wrong.insert(place.to_string());
            }
        }
    }
}

/// Counts one outcome into a tally.
pub fn count(tally: &mut Tally, outcome: Outcome) {
    match outcome {
        Outcome::Correct => tally.correct += 1,
        Outcome::Refused(message) => {
            tally.refused += 1;
            tally.first_error.get_or_insert(message);
        }
        Outcome::Wrong(fields) => {
            tally.wrong += 1;
            for field in fields {
                *tally.wrong_fields.entry(field).or_default() += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(pairs: &[(&str, &[&str])]) -> HashMap<String, Vec<(String, String)>> {
        pairs.iter().map(|(c, fs)| (c.to_string(), fs.iter().map(|f| (f.to_string(), String::new())).collect())).collect()
    }

    #[test]
    fn only_shared_fields_are_compared_and_each_wrong_one_is_named() {
        let shared = SharedFields {
            writer: fields(&[("a", &["x", "y", "z", "only_writer"]), ("b", &["v"])]),
            reader: fields(&[("a", &["x", "y", "z", "only_reader"]), ("b", &["v"])]),
        };
        let read = json!({"@type": "a", "x": 1, "y": 2, "only_reader": 9, "z": [{"@type": "b", "v": 1}, {"@type": "b", "v": 5}]});
        let expected = json!({"@type": "a", "x": 1, "y": 3, "only_reader": 0, "z": [{"@type": "b", "v": 1}, {"@type": "b", "v": 6}]});
        let mut wrong = BTreeSet::new();
        differences(Some(&read), Some(&expected), &shared, "payload", &mut wrong);
        assert_eq!(wrong, BTreeSet::from(["a.y".to_string(), "b.v".to_string()]));

        let mut wrong = BTreeSet::new();
        let absent = json!({"@type": "a", "x": 1, "y": 3, "z": []});
        differences(Some(&absent), Some(&expected), &shared, "payload", &mut wrong);
        assert_eq!(wrong, BTreeSet::from(["a.z".to_string()]), "a vector of another length");
        let mut wrong = BTreeSet::new();
        differences(Some(&json!({"@type": "b", "v": 1})), Some(&json!({"@type": "a"})), &shared, "payload", &mut wrong);
        assert_eq!(wrong, BTreeSet::from(["a read as b".to_string()]));
    }

    #[test]
    fn a_tally_calls_any_silent_misread_wrong() {
        let mut tally = Tally::default();
        count(&mut tally, Outcome::Correct);
        assert_eq!(tally.verdict(), "read correctly");
        count(&mut tally, Outcome::Refused("unknown constructor".into()));
        assert_eq!(tally.verdict(), "refused");
        count(&mut tally, Outcome::Wrong(BTreeSet::from(["message.chat_id".to_string()])));
        count(&mut tally, Outcome::Refused("second".into()));
        assert_eq!(tally.verdict(), "wrong values, no error");
        assert_eq!((tally.correct, tally.refused, tally.wrong), (1, 2, 1));
        assert_eq!(tally.first_error.as_deref(), Some("unknown constructor"));
    }
}
