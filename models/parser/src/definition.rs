use std::fmt;

/// Whether a definition builds an object (before `---functions---`) or is a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    Type,
    Function,
}

/// A field type as written in the schema: `int53`, `message`, `MessageSender`, `vector<vector<int32>>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Type {
    pub name: String,
    /// The element type of `vector<...>`.
    pub argument: Option<Box<Type>>,
}

impl Type {
    /// The element type when this is a `vector<T>`.
    pub fn vector_element(&self) -> Option<&Type> {
        if self.name == "vector" { self.argument.as_deref() } else { None }
    }

    /// The form the constructor-id hash sees: `vector<message>` becomes `vector message`.
    fn write_normalized(&self, out: &mut String) {
        out.push_str(&self.name);
        if let Some(arg) = &self.argument {
            out.push(' ');
            arg.write_normalized(out);
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.argument {
            Some(arg) => write!(f, "{}<{}>", self.name, arg),
            None => f.write_str(&self.name),
        }
    }
}

/// One `name:type` field of a constructor or function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parameter {
    pub name: String,
    pub ty: Type,
}

/// One declaration: `updateFile file:file = Update;`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    pub params: Vec<Parameter>,
    /// The result type as written: `Update`, or `Vector t` for the vector builtin.
    pub result: String,
    pub category: Category,
    /// 1-based line of the schema file the declaration starts on.
    pub line: usize,
    /// Builtins (`double ? = Double`, `vector {t:Type} # [ t ] = Vector t`) carry tokens that are
    /// not `name:type` parameters; they are kept, already normalized, for the id.
    pub builtin_tokens: Option<Vec<String>>,
    /// An id written explicitly as `name#1cb5c415`, which wins over the computed one.
    pub explicit_id: Option<u32>,
}

impl Definition {
    pub fn is_builtin(&self) -> bool {
        self.builtin_tokens.is_some()
    }

    /// The combinator exactly as TDLib hashes it: tokens joined by single spaces, comments
    /// dropped, `vector<message>` written `vector message`, `{t:Type}` written `t:Type`.
    /// `bytes` stays `bytes` (some MTProto code rewrites it to `string`; TDLib does not).
    pub fn normalized(&self) -> String {
        let mut out = self.name.clone();
        if let Some(tokens) = &self.builtin_tokens {
            for token in tokens {
                out.push(' ');
                out.push_str(token);
            }
        } else {
            for param in &self.params {
                out.push(' ');
                out.push_str(&param.name);
                out.push(':');
                param.ty.write_normalized(&mut out);
            }
        }
        out.push_str(" = ");
        out.push_str(&self.result);
        out
    }

    /// The constructor id: zlib CRC32 of [`Definition::normalized`].
    ///
    /// ```
    /// let schema = tl_parser::parse_schema("boolTrue = Bool;\nok = Ok;").unwrap();
    /// assert_eq!(schema[0].id(), 0x997275b5);
    /// assert_eq!(schema[1].id() as i32, -722616727); // as TDLib's bindings print ok::ID
    /// ```
    pub fn id(&self) -> u32 {
        self.explicit_id.unwrap_or_else(|| crc32fast::hash(self.normalized().as_bytes()))
    }
}
