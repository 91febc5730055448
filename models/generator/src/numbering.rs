//! Protobuf numbers: which number each field of a message, and each member of a oneof, is
//! written under.
//!
//! Numbered by position, a field inserted in the middle of a TL declaration renumbers every field
//! after it, and a reader one schema release behind reads them as the wrong fields. Users of
//! protobuf keep a number map instead: a field keeps its number for life, a new field gets the
//! next free one, a removed field's number is reserved and never given again. [`NumberMap`] is
//! that map, committed as text (`models/proto/numbers.txt`) and grown by
//! `cargo run -p tl-gen --bin grow-proto-numbers` when the schema changes.
//!
//! The map's text, one line per message or oneof, members in number order:
//!
//! ```text
//! message id=1 sender_id=2 chat_id=3 ... receiver_id=43
//! Object error=1 ok=2 ...
//! ```
//!
//! A line is keyed by a constructor's TL name (its fields), an abstract type's TL name or
//! `Object` (their constructors). Names are TL names, so a renamed TL field is a new field.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::GenError;
use crate::model::Model;

/// How the generated protobuf code numbers fields and oneof members.
#[derive(Clone, Copy)]
pub enum Numbering<'a> {
    /// Declaration order, from 1: what the schema alone gives.
    ByPosition,
    /// The committed map's numbers; a name the map lacks is an error.
    Stable(&'a NumberMap),
}

impl Numbering<'_> {
    /// The number of `member` (a field or constructor name), the `position`-th of `owner`.
    pub fn number(&self, owner: &str, member: &str, position: usize) -> Result<u32, GenError> {
        match self {
            Numbering::ByPosition => Ok(position as u32 + 1),
            Numbering::Stable(map) => map.get(owner, member).ok_or_else(|| {
                GenError(format!(
                    "`{member}` of `{owner}` has no protobuf number in the number map: grow the map with \
                     `cargo run -p tl-gen --bin grow-proto-numbers`"
                ))
            }),
        }
    }

    /// Numbers the map holds for `owner` that none of `members` uses any more: reserved.
    pub fn reserved(&self, owner: &str, members: &[&str]) -> Vec<(String, u32)> {
        match self {
            Numbering::ByPosition => Vec::new(),
            Numbering::Stable(map) => map.members(owner).iter().filter(|(name, _)| !members.contains(&name.as_str())).cloned().collect(),
        }
    }
}

/// Per message or oneof, each member's number, in number order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NumberMap {
    owners: BTreeMap<String, Vec<(String, u32)>>,
}

impl NumberMap {
    /// Reads the committed text; refuses a number or name given twice in one line.
    pub fn parse(text: &str) -> Result<NumberMap, GenError> {
        let mut map = NumberMap::default();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let error = |what: String| GenError(format!("number map line {}: {what}", index + 1));
            let mut words = line.split_whitespace();
            let owner = words.next().expect("a non-empty line has a word");
            let mut members: Vec<(String, u32)> = Vec::new();
            for word in words {
                let (name, number) = word.split_once('=').ok_or_else(|| error(format!("`{word}` is not name=number")))?;
                let number: u32 = number.parse().map_err(|_| error(format!("`{word}`: the number is not a positive integer")))?;
                if number == 0 || members.iter().any(|(n, k)| n == name || *k == number) {
                    return Err(error(format!("`{word}`: zero, or a name or number given twice")));
                }
                members.push((name.to_string(), number));
            }
            if map.owners.insert(owner.to_string(), members).is_some() {
                return Err(error(format!("`{owner}` has two lines")));
            }
        }
        Ok(map)
    }

    pub fn get(&self, owner: &str, member: &str) -> Option<u32> {
        self.members(owner).iter().find(|(name, _)| name == member).map(|(_, number)| *number)
    }

    /// How many numbers the map gives, reserved ones included.
    pub fn len(&self) -> usize {
        self.owners.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn members(&self, owner: &str) -> &[(String, u32)] {
        self.owners.get(owner).map_or(&[], Vec::as_slice)
    }

    /// The map with a number for every field and constructor of `model`: what it already numbers
    /// keeps its number, anything new gets the owner's next number. Nothing is ever removed.
    pub fn grown(&self, model: &Model) -> NumberMap {
        let mut grown = self.clone();
        let mut give = |owner: &str, members: &mut dyn Iterator<Item = &str>| {
            let numbered = grown.owners.entry(owner.to_string()).or_default();
            for member in members {
                if !numbered.iter().any(|(name, _)| name == member) {
                    let next = numbered.iter().map(|(_, number)| *number).max().unwrap_or(0) + 1;
                    numbered.push((member.to_string(), next));
                }
            }
        };
        for s in &model.structs {
            give(&s.tl_name, &mut s.fields.iter().map(|f| f.tl_name.as_str()));
        }
        for sum in model.sum_types() {
            give(sum.tl_name, &mut sum.variants.iter().map(|(_, s)| s.tl_name.as_str()));
        }
        grown
    }

    /// The committed text: owners by name, members in number order.
    pub fn to_text(&self) -> String {
        let mut out = String::from(
            "# Protobuf numbers of tdbench's `protobuf` implementation, by TL name: a field or constructor\n\
             # keeps its number for life, a new one gets its owner's next number, a removed one's stays\n\
             # here (reserved). Grown, never edited: cargo run -p tl-gen --bin grow-proto-numbers\n",
        );
        for (owner, members) in &self.owners {
            let mut members = members.clone();
            members.sort_by_key(|(_, number)| *number);
            write!(out, "{owner}").unwrap();
            for (name, number) in members {
                write!(out, " {name}={number}").unwrap();
            }
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(schema: &str) -> Model {
        Model::resolve(&tl_parser::parse_schema(schema).unwrap()).unwrap()
    }

    #[test]
    fn growing_keeps_every_number_and_gives_new_members_the_next_one() {
        let old = model("a x:int32 y:int32 = T;\nb z:int32 = T;\n");
        let map = NumberMap::default().grown(&old);
        assert_eq!(map.get("a", "y"), Some(2));
        // `w` is inserted before `y`, `x` is removed, and constructor `c` comes first.
        let new = model("c = T;\na w:int32 y:int32 = T;\nb z:int32 = T;\n");
        let grown = map.grown(&new);
        assert_eq!((grown.get("a", "x"), grown.get("a", "y"), grown.get("a", "w")), (Some(1), Some(2), Some(3)));
        assert_eq!((grown.get("T", "a"), grown.get("T", "b"), grown.get("T", "c")), (Some(1), Some(2), Some(3)));
        let numbering = Numbering::Stable(&grown);
        assert_eq!(numbering.reserved("a", &["w", "y"]), vec![("x".to_string(), 1)]);
        assert_eq!(numbering.number("a", "w", 0).unwrap(), 3);
        assert_eq!(Numbering::ByPosition.number("a", "w", 0).unwrap(), 1);
        assert_eq!(grown.grown(&new), grown, "a grown map grows no further on its own schema");
    }

    #[test]
    fn the_text_reads_back_and_bad_lines_are_refused() {
        let map = NumberMap::default().grown(&model("a x:int32 y:string = T;\nb = T;\n"));
        assert_eq!(NumberMap::parse(&map.to_text()).unwrap(), map);
        assert!(NumberMap::parse("a x=1 y=1\n").is_err(), "a number given twice");
        assert!(NumberMap::parse("a x=1 x=2\n").is_err(), "a name given twice");
        assert!(NumberMap::parse("a x=0\n").is_err());
        assert!(NumberMap::parse("a x\n").is_err());
        assert!(NumberMap::parse("a x=1\na y=2\n").is_err(), "an owner given twice");
        let missing = Numbering::Stable(&map).number("a", "z", 0).unwrap_err();
        assert!(missing.0.contains("grow-proto-numbers"), "{missing}");
    }
}
