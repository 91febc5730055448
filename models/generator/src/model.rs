//! The schema resolved into what the emitters need: one struct per constructor, one enum per
//! abstract type with several constructors, one placeholder per type the schema references but
//! does not declare, and the decision of which fields are boxed.

use std::collections::{BTreeMap, HashMap};

use crate::{GenError, rustify};
use tl_parser::{Category, Definition, Type};

/// Result types the TL builtins produce: fields of these types are scalars, not objects.
const BUILTIN_RESULTS: &[&str] = &["Double", "String", "Int32", "Int53", "Int64", "Bytes", "Bool", "Vector t"];

/// An inline field whose type is estimated to be larger than this many bytes is boxed, so that a
/// small object (and the `Object` enum) does not grow to the size of its largest optional part.
const BOX_THRESHOLD_BYTES: usize = 128;

pub struct Model {
    pub structs: Vec<Struct>,
    pub enums: Vec<Enum>,
    pub absents: Vec<Absent>,
}

/// One constructor, e.g. `updateFile file:file = Update`.
pub struct Struct {
    pub tl_name: String,
    pub rust_name: String,
    pub id: u32,
    /// The declaration as hashed, for doc comments.
    pub declaration: String,
    pub fields: Vec<Field>,
}

pub struct Field {
    pub tl_name: String,
    pub rust_name: String,
    pub kind: Kind,
    /// `Option<Box<T>>` instead of `Option<T>`: on a type cycle, or large.
    pub boxed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Int32,
    Int53,
    Int64,
    Double,
    Bool,
    String,
    Bytes,
    /// A nullable object pointer; elements of vectors are not nullable.
    Object(Target),
    Vector(Box<Kind>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    Struct(usize),
    Enum(usize),
    Absent(usize),
}

/// An abstract type with its constructors, e.g. `UserStatus`.
pub struct Enum {
    pub tl_name: String,
    pub rust_name: String,
    pub variants: Vec<Variant>,
}

pub struct Variant {
    pub rust_name: String,
    pub target: usize,
}

/// An enum as the emitters see it: its name and, per variant, the variant name and its struct.
pub struct SumType<'a> {
    pub rust_name: &'a str,
    pub tl_name: &'a str,
    pub variants: Vec<(&'a str, &'a Struct)>,
}

/// A type referenced by the schema but not declared in it (e.g. `linkPreview`): always absent.
pub struct Absent {
    pub tl_name: String,
    pub rust_name: String,
}

impl Model {
    pub fn resolve(definitions: &[Definition]) -> Result<Model, GenError> {
        let constructors: Vec<&Definition> = definitions
            .iter()
            .filter(|d| d.category == Category::Type && !d.is_builtin() && !BUILTIN_RESULTS.contains(&d.result.as_str()))
            .collect();

        let mut by_name = HashMap::new();
        let mut by_result: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (index, def) in constructors.iter().enumerate() {
            if by_name.insert(def.name.as_str(), index).is_some() {
                return Err(GenError(format!("constructor `{}` is declared twice (line {})", def.name, def.line)));
            }
            by_result.entry(def.result.as_str()).or_default().push(index);
        }

        // An abstract type whose only constructor has its own name (`file = File`) is that struct.
        let mut enums = Vec::new();
        let mut enum_by_type = HashMap::new();
        let mut struct_by_type = HashMap::new();
        for (&result, members) in &by_result {
            if members.len() == 1 && rustify::type_name(&constructors[members[0]].name) == result {
                struct_by_type.insert(result, members[0]);
                continue;
            }
            let rust_name = result.to_string();
            let mut variants: Vec<Variant> = Vec::new();
            for &member in members {
                let struct_name = rustify::type_name(&constructors[member].name);
                let mut name = rustify::variant_name(&rust_name, &struct_name);
                if variants.iter().any(|v| v.rust_name == name) {
                    name = struct_name;
                }
                variants.push(Variant { rust_name: name, target: member });
            }
            enum_by_type.insert(result, enums.len());
            enums.push(Enum { tl_name: result.to_string(), rust_name, variants });
        }

        let mut absents: Vec<Absent> = Vec::new();
        let mut resolver =
            Resolver { by_name: &by_name, struct_by_type: &struct_by_type, enum_by_type: &enum_by_type, absents: &mut absents };
        let mut structs = Vec::new();
        for def in &constructors {
            let mut fields = Vec::new();
            for param in &def.params {
                let kind = resolver
                    .kind(&param.ty)
                    .map_err(|e| GenError(format!("{} (field `{}` of `{}`, line {})", e.0, param.name, def.name, def.line)))?;
                fields.push(Field { tl_name: param.name.clone(), rust_name: rustify::field_name(&param.name), kind, boxed: false });
            }
            structs.push(Struct {
                tl_name: def.name.clone(),
                rust_name: rustify::type_name(&def.name),
                id: def.id(),
                declaration: def.normalized(),
                fields,
            });
        }

        let mut model = Model { structs, enums, absents };
        model.check_names()?;
        model.decide_boxing();
        Ok(model)
    }

    /// Every Rust enum the emitters write a `match` for: each abstract type, then `Object`
    /// (every constructor, variants named like the structs).
    pub fn sum_types(&self) -> Vec<SumType<'_>> {
        let mut sums: Vec<SumType> = self
            .enums
            .iter()
            .map(|e| SumType {
                rust_name: &e.rust_name,
                tl_name: &e.tl_name,
                variants: e.variants.iter().map(|v| (v.rust_name.as_str(), &self.structs[v.target])).collect(),
            })
            .collect();
        sums.push(SumType {
            rust_name: "Object",
            tl_name: "Object",
            variants: self.structs.iter().map(|s| (s.rust_name.as_str(), s)).collect(),
        });
        sums
    }

    pub fn target_rust_name(&self, target: Target) -> &str {
        match target {
            Target::Struct(i) => &self.structs[i].rust_name,
            Target::Enum(i) => &self.enums[i].rust_name,
            Target::Absent(i) => &self.absents[i].rust_name,
        }
    }

    fn check_names(&self) -> Result<(), GenError> {
        let mut seen = HashMap::new();
        let reserved = [("Object", "the enum of every constructor")];
        for (name, what) in reserved {
            seen.insert(name.to_string(), what.to_string());
        }
        let names = self
            .structs
            .iter()
            .map(|s| (&s.rust_name, format!("constructor `{}`", s.tl_name)))
            .chain(self.enums.iter().map(|e| (&e.rust_name, format!("type `{}`", e.tl_name))))
            .chain(self.absents.iter().map(|a| (&a.rust_name, format!("absent type `{}`", a.tl_name))));
        for (name, what) in names {
            if let Some(previous) = seen.insert(name.clone(), what.clone()) {
                return Err(GenError(format!("{what} and {previous} would both be named `{name}` in Rust")));
            }
        }
        Ok(())
    }

    /// Boxes every field on a type cycle (so types have a finite size) and every inline field
    /// estimated above [`BOX_THRESHOLD_BYTES`].
    fn decide_boxing(&mut self) {
        let node_count = self.structs.len() + self.enums.len();
        let node = |t: Target, structs: usize| match t {
            Target::Struct(i) => Some(i),
            Target::Enum(i) => Some(structs + i),
            Target::Absent(_) => None,
        };
        let mut edges = vec![Vec::new(); node_count];
        for (i, s) in self.structs.iter().enumerate() {
            for f in &s.fields {
                if let Kind::Object(t) = f.kind {
                    edges[i].extend(node(t, self.structs.len()));
                }
            }
        }
        for (i, e) in self.enums.iter().enumerate() {
            edges[self.structs.len() + i].extend(e.variants.iter().map(|v| v.target));
        }
        let component = strongly_connected_components(&edges);
        let struct_count = self.structs.len();
        for (i, s) in self.structs.iter_mut().enumerate() {
            for f in &mut s.fields {
                if let Kind::Object(t) = f.kind
                    && let Some(n) = node(t, struct_count)
                {
                    f.boxed = component[n] == component[i];
                }
            }
        }
        let mut sizes = vec![None; node_count];
        for n in 0..node_count {
            self.estimate_size(n, &mut sizes);
        }
    }

    /// A rough `size_of` of node `n` (structs first, then enums), boxing large fields on the way.
    fn estimate_size(&mut self, n: usize, sizes: &mut Vec<Option<usize>>) -> usize {
        if let Some(size) = sizes[n] {
            return size;
        }
        let struct_count = self.structs.len();
        let size = if n < struct_count {
            let mut total = 0;
            for f in 0..self.structs[n].fields.len() {
                let field = &self.structs[n].fields[f];
                total += match (&field.kind, field.boxed) {
                    (Kind::Int32, _) => 4,
                    (Kind::Bool, _) => 1,
                    (Kind::Int53 | Kind::Int64 | Kind::Double, _) | (Kind::Object(_), true) => 8,
                    (Kind::String | Kind::Bytes | Kind::Vector(_), _) => 24,
                    (Kind::Object(Target::Absent(_)), false) => 1,
                    (Kind::Object(t), false) => {
                        let target = match *t {
                            Target::Struct(i) => i,
                            Target::Enum(i) => struct_count + i,
                            Target::Absent(_) => unreachable!(),
                        };
                        let inner = self.estimate_size(target, sizes);
                        if inner > BOX_THRESHOLD_BYTES {
                            self.structs[n].fields[f].boxed = true;
                            8
                        } else {
                            inner + 8
                        }
                    }
                };
            }
            total
        } else {
            let targets: Vec<usize> = self.enums[n - struct_count].variants.iter().map(|v| v.target).collect();
            8 + targets.into_iter().map(|t| self.estimate_size(t, sizes)).max().unwrap_or(0)
        };
        sizes[n] = Some(size);
        size
    }
}

struct Resolver<'a> {
    by_name: &'a HashMap<&'a str, usize>,
    struct_by_type: &'a HashMap<&'a str, usize>,
    enum_by_type: &'a HashMap<&'a str, usize>,
    absents: &'a mut Vec<Absent>,
}

impl Resolver<'_> {
    fn kind(&mut self, ty: &Type) -> Result<Kind, GenError> {
        if let Some(element) = ty.vector_element() {
            return Ok(Kind::Vector(Box::new(self.kind(element)?)));
        }
        if ty.argument.is_some() {
            return Err(GenError(format!("generic type `{ty}` is not supported")));
        }
        Ok(match ty.name.as_str() {
            "int32" => Kind::Int32,
            "int53" => Kind::Int53,
            "int64" => Kind::Int64,
            "double" => Kind::Double,
            "string" => Kind::String,
            "bytes" => Kind::Bytes,
            "Bool" => Kind::Bool,
            "vector" => return Err(GenError("`vector` needs an element type".into())),
            name => Kind::Object(self.object(name)),
        })
    }

    fn object(&mut self, name: &str) -> Target {
        let bare = name.starts_with(|c: char| c.is_ascii_lowercase());
        let found = if bare {
            self.by_name.get(name).map(|&i| Target::Struct(i))
        } else {
            self.struct_by_type.get(name).map(|&i| Target::Struct(i)).or_else(|| self.enum_by_type.get(name).map(|&i| Target::Enum(i)))
        };
        found.unwrap_or_else(|| {
            let rust_name = rustify::type_name(name);
            let index = match self.absents.iter().position(|a| a.rust_name == rust_name) {
                Some(index) => index,
                None => {
                    self.absents.push(Absent { tl_name: name.to_string(), rust_name });
                    self.absents.len() - 1
                }
            };
            Target::Absent(index)
        })
    }
}

/// Tarjan's algorithm; returns the component index of every node.
fn strongly_connected_components(edges: &[Vec<usize>]) -> Vec<usize> {
    struct State<'a> {
        edges: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next_index: usize,
        component: Vec<usize>,
        next_component: usize,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.next_index);
        s.low[v] = s.next_index;
        s.next_index += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &s.edges[v] {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(wi) if s.on_stack[w] => s.low[v] = s.low[v].min(wi),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            loop {
                let w = s.stack.pop().expect("Tarjan stack holds v");
                s.on_stack[w] = false;
                s.component[w] = s.next_component;
                if w == v {
                    break;
                }
            }
            s.next_component += 1;
        }
    }
    let n = edges.len();
    let mut s = State {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next_index: 0,
        component: vec![0; n],
        next_component: 0,
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.component
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(text: &str) -> Model {
        Model::resolve(&tl_parser::parse_schema(text).unwrap()).unwrap()
    }

    #[test]
    fn single_constructor_types_are_structs_and_others_enums() {
        let m = model("file id:int32 = File;\nupdateFile file:file = Update;\nupdateX f:File = Update;\n");
        assert_eq!(m.structs.len(), 3);
        assert_eq!(m.enums.len(), 1);
        assert_eq!(m.enums[0].rust_name, "Update");
        assert_eq!(m.enums[0].variants[0].rust_name, "File");
        assert_eq!(m.structs[1].fields[0].kind, Kind::Object(Target::Struct(0)));
        assert_eq!(m.structs[2].fields[0].kind, Kind::Object(Target::Struct(0)));
    }

    #[test]
    fn undeclared_types_are_absent_once() {
        let m = model("a x:linkPreview y:vector<linkPreview> z:ReplyMarkup = A;\n");
        assert_eq!(m.absents.len(), 2);
        assert_eq!(m.structs[0].fields[1].kind, Kind::Vector(Box::new(Kind::Object(Target::Absent(0)))));
    }

    #[test]
    fn cycles_are_boxed_and_small_fields_inline() {
        let m = model("node next:node v:int32 = Node;\nholder n:node s:small = Holder;\nsmall v:int32 = Small;\n");
        assert!(m.structs[0].fields[0].boxed, "self-reference must be boxed");
        assert!(!m.structs[1].fields[0].boxed, "holder is not on the cycle");
        assert!(!m.structs[1].fields[1].boxed);
    }

    #[test]
    fn name_collisions_are_refused() {
        let defs = tl_parser::parse_schema("object = Thing;\nother = Thing;\n").unwrap();
        let err = Model::resolve(&defs).err().expect("collision");
        assert!(err.0.contains("`Object`"), "{err}");
    }
}
