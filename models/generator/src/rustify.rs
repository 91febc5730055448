//! TL names to Rust names.

/// `updateNewMessage` → `UpdateNewMessage`.
pub fn type_name(tl_name: &str) -> String {
    let mut chars = tl_name.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// `updateNewMessage` → `update_new_message` (protobuf oneof field names).
pub fn snake_name(tl_name: &str) -> String {
    let mut out = String::with_capacity(tl_name.len() + 8);
    for c in tl_name.chars() {
        if c.is_ascii_uppercase() {
            if !out.is_empty() {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Field names are already snake_case in TDLib; Rust keywords become raw identifiers.
pub fn field_name(tl_name: &str) -> String {
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn", "for", "gen", "if",
        "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static", "struct", "trait", "true", "type",
        "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv", "try", "typeof",
        "unsized", "virtual", "yield",
    ];
    if KEYWORDS.contains(&tl_name) { format!("r#{tl_name}") } else { tl_name.to_string() }
}

/// `UserStatusOnline` in enum `UserStatus` → `Online`; the full name when stripping would leave
/// nothing usable.
pub fn variant_name(enum_name: &str, struct_name: &str) -> String {
    match struct_name.strip_prefix(enum_name) {
        Some(rest) if rest.starts_with(|c: char| c.is_ascii_uppercase()) => rest.to_string(),
        _ => struct_name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(type_name("updateNewMessage"), "UpdateNewMessage");
        assert_eq!(snake_name("textEntityTypeBold"), "text_entity_type_bold");
        assert_eq!(field_name("type"), "r#type");
        assert_eq!(field_name("user_id"), "user_id");
        assert_eq!(variant_name("UserStatus", "UserStatusOnline"), "Online");
        assert_eq!(variant_name("MessageContent", "MessageText"), "MessageText");
        assert_eq!(variant_name("Update", "Update"), "Update");
    }
}
