use crate::{Category, Definition, Parameter, ParseError, Type};

/// Parses a whole `.tl` file. Comments (`//` to the end of the line, including TDLib's `//@`
/// doc comments) are dropped; `---functions---` and `---types---` switch the category.
pub fn parse_schema(text: &str) -> Result<Vec<Definition>, ParseError> {
    let mut definitions = Vec::new();
    let mut category = Category::Type;
    // A declaration may span lines; it ends at `;`.
    let mut pending = String::new();
    let mut pending_line = 0;

    for (index, raw_line) in text.lines().enumerate() {
        let line_number = index + 1;
        let line = match raw_line.find("//") {
            Some(at) => &raw_line[..at],
            None => raw_line,
        };
        let trimmed = line.trim();
        if pending.trim().is_empty() {
            match trimmed {
                "---functions---" => {
                    category = Category::Function;
                    continue;
                }
                "---types---" => {
                    category = Category::Type;
                    continue;
                }
                _ => {}
            }
        }
        let mut rest = line;
        while let Some(end) = rest.find(';') {
            if pending.trim().is_empty() {
                pending_line = line_number;
            }
            pending.push(' ');
            pending.push_str(&rest[..end]);
            definitions.push(parse_declaration(&pending, category, pending_line)?);
            pending.clear();
            rest = &rest[end + 1..];
        }
        if !rest.trim().is_empty() {
            if pending.trim().is_empty() {
                pending_line = line_number;
            }
            pending.push(' ');
            pending.push_str(rest);
        }
    }
    if !pending.trim().is_empty() {
        return Err(ParseError { line: pending_line, message: format!("declaration `{}` is not terminated by `;`", pending.trim()) });
    }
    Ok(definitions)
}

fn parse_declaration(text: &str, category: Category, line: usize) -> Result<Definition, ParseError> {
    let error = |message: String| ParseError { line, message };
    let (left, result) = text.split_once('=').ok_or_else(|| error(format!("`{}` has no `=`", text.trim())))?;
    let result: Vec<&str> = result.split_whitespace().collect();
    if result.is_empty() {
        return Err(error(format!("`{}` has no result type", text.trim())));
    }
    let mut tokens = left.split_whitespace();
    let head = tokens.next().ok_or_else(|| error("declaration has no name".into()))?;
    let (name, explicit_id) = match head.split_once('#') {
        Some((name, hex)) => {
            let id = u32::from_str_radix(hex, 16).map_err(|_| error(format!("`{head}` has an invalid explicit id")))?;
            (name, Some(id))
        }
        None => (head, None),
    };
    if !is_identifier(name) {
        return Err(error(format!("`{name}` is not a valid name")));
    }

    let mut params = Vec::new();
    let mut builtin_tokens: Option<Vec<String>> = None;
    let mut normalized_tokens = Vec::new();
    for token in tokens {
        if let Some(inner) = token.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
            // A type variable such as `{t:Type}`: only builtins (vector) use them.
            builtin_tokens.get_or_insert_with(Vec::new);
            normalized_tokens.push(inner.to_string());
        } else if let Some((param_name, ty)) = token.split_once(':') {
            if !is_identifier(param_name) {
                return Err(error(format!("`{param_name}` is not a valid field name in `{name}`")));
            }
            let ty = parse_type(ty).map_err(|message| error(format!("field `{param_name}` of `{name}`: {message}")))?;
            normalized_tokens.push(format!("{param_name}:{}", normalized_type(&ty)));
            params.push(Parameter { name: param_name.to_string(), ty });
        } else {
            // `?`, `#`, `[`, `t`, `]`: the bodies of builtin declarations.
            builtin_tokens.get_or_insert_with(Vec::new);
            normalized_tokens.push(token.to_string());
        }
    }
    if builtin_tokens.is_some() {
        builtin_tokens = Some(normalized_tokens);
        params.clear();
    }

    Ok(Definition { name: name.to_string(), params, result: result.join(" "), category, line, builtin_tokens, explicit_id })
}

fn normalized_type(ty: &Type) -> String {
    match &ty.argument {
        Some(arg) => format!("{} {}", ty.name, normalized_type(arg)),
        None => ty.name.clone(),
    }
}

/// `vector<vector<int32>>` → `Type { vector, Some(Type { vector, Some(int32) }) }`.
fn parse_type(text: &str) -> Result<Type, String> {
    match text.find('<') {
        None => {
            if is_identifier(text) {
                Ok(Type { name: text.to_string(), argument: None })
            } else {
                Err(format!("`{text}` is not a valid type"))
            }
        }
        Some(open) => {
            let inner = text[open + 1..].strip_suffix('>').ok_or_else(|| format!("`{text}` has an unclosed `<`"))?;
            let name = &text[..open];
            if !is_identifier(name) {
                return Err(format!("`{text}` is not a valid type"));
            }
            Ok(Type { name: name.to_string(), argument: Some(Box::new(parse_type(inner)?)) })
        }
    }
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic()) && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Definition {
        let mut all = parse_schema(text).unwrap();
        assert_eq!(all.len(), 1);
        all.remove(0)
    }

    #[test]
    fn known_ids() {
        assert_eq!(one("vector {t:Type} # [ t ] = Vector t;").id(), 0x1cb5c415);
        assert_eq!(one("boolTrue = Bool;").id(), 0x997275b5);
        assert_eq!(one("boolFalse = Bool;").id(), 0xbc799737);
        // Values TDLib's td_api.h prints as `ID`.
        assert_eq!(one("error code:int32 message:string = Error;").id() as i32, -1679978726);
        assert_eq!(one("testString value:string = TestString;").id() as i32, -27891572);
    }

    #[test]
    fn vector_fields_are_hashed_without_angle_brackets() {
        let d = one("messages total_count:int32 messages:vector<message> = Messages;");
        assert_eq!(d.normalized(), "messages total_count:int32 messages:vector message = Messages");
        assert_eq!(d.params[1].ty.to_string(), "vector<message>");
        assert_eq!(d.params[1].ty.vector_element().unwrap().name, "message");
    }

    #[test]
    fn bytes_is_hashed_as_written() {
        let d = one("testBytes value:bytes = TestBytes;");
        assert_eq!(d.normalized(), "testBytes value:bytes = TestBytes");
    }

    #[test]
    fn comments_and_sections() {
        let text = "//@class A @description x\n//@description y\na x:int32 = A; // trailing\n---functions---\n//@description f\nf = Ok;\n";
        let all = parse_schema(text).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].category, Category::Type);
        assert_eq!(all[0].line, 3);
        assert_eq!(all[1].category, Category::Function);
    }

    #[test]
    fn builtins_keep_their_tokens() {
        let d = one("double ? = Double;");
        assert!(d.is_builtin());
        assert_eq!(d.normalized(), "double ? = Double");
        assert!(!one("int32 = Int32;").is_builtin());
    }

    #[test]
    fn explicit_ids_win() {
        assert_eq!(one("null#12345678 = Null;").id(), 0x12345678);
    }

    #[test]
    fn errors_name_the_line() {
        let err = parse_schema("ok = Ok;\nbroken x:vector<int32 = A;\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("unclosed"), "{err}");
        assert_eq!(parse_schema("a x:int32 = A").unwrap_err().line, 1);
        assert!(parse_schema("a x:int32;").is_err());
    }
}
