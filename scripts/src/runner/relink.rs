//! Linking a code layout without recompiling: the linker command rustc ran once, replayed
//! with another shuffle seed.
//!
//! Why: `cargo rustc -- -C link-arg=…` recompiles the crate whenever its flags change, so each
//! layout cost about 2 s here, and a further look or a confirmation links one layout per new
//! sample in each tree — more time than the samples themselves take to measure. The link alone
//! takes about 0.25 s. rustc prints its linker command (`--print link-args`) and keeps the
//! objects it names (`-C save-temps`); replaying it with only the seed and the output changed
//! links the same objects in another order. The first replay is checked against the layout
//! cargo linked: a byte-for-byte different result turns replaying off for the invocation.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The argument of the linker command that carries the shuffle seed.
const SHUFFLE: &str = "-Wl,--shuffle-sections=.text*=";

/// A linker command as rustc printed it, with where its seed and output go.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkCommand {
    env: Environment,
    program: String,
    args: Vec<String>,
    seed_at: usize,
    output_at: usize,
}

impl LinkCommand {
    /// The command in rustc's `--print link-args` output (the line that runs the linker), or
    /// `None` when there is none this parser can read exactly, or it has no seed or output.
    pub fn parse(printed: &str) -> Option<LinkCommand> {
        printed.lines().filter_map(parse_line).find_map(|(env, mut words)| {
            if words.is_empty() {
                return None;
            }
            let program = words.remove(0);
            let seed_at = words.iter().position(|w| w.starts_with(SHUFFLE))?;
            let output_at = words.iter().position(|w| w == "-o")? + 1;
            (output_at < words.len()).then_some(LinkCommand { env, program, args: words, seed_at, output_at })
        })
    }

    /// Links the same objects with layout `seed` into `output`.
    pub fn link(&self, seed: u32, output: &Path) -> Result<(), String> {
        let mut args = self.args.clone();
        args[self.seed_at] = format!("{SHUFFLE}{seed}");
        args[self.output_at] = output.display().to_string();
        let out = Command::new(&self.program)
            .args(&args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .map_err(|e| format!("cannot run the linker {}: {e}", self.program))?;
        match out.status.success() {
            true => Ok(()),
            false => Err(format!("the linker failed: {}", String::from_utf8_lossy(&out.stderr).trim())),
        }
    }

    /// The folder rustc kept its temporary objects in (`symbols.o`), to remove when this
    /// command is no longer needed.
    pub fn temporary_folder(&self) -> Option<PathBuf> {
        self.args.iter().find(|a| a.ends_with("/symbols.o")).and_then(|a| Path::new(a).parent().map(Path::to_path_buf))
    }
}

/// Environment variables a command sets, as (name, value).
type Environment = Vec<(String, String)>;

/// One line of `KEY="value" … "program" "arg" …`, each word quoted with Rust's debug escapes.
fn parse_line(line: &str) -> Option<(Environment, Vec<String>)> {
    let mut env = Vec::new();
    let mut words = Vec::new();
    let mut rest = line.trim();
    while !rest.is_empty() {
        let key_end = rest.find('"')?;
        let key = &rest[..key_end];
        let (word, after) = quoted(&rest[key_end..])?;
        match key {
            "" => words.push(word),
            _ => env.push((key.strip_suffix('=')?.to_string(), word)),
        }
        rest = after.trim_start();
    }
    (!words.is_empty()).then_some((env, words))
}

/// A debug-quoted string at the start of `text`, and what follows it; `None` for an escape
/// this parser does not know (the command is then not replayed, never guessed at).
fn quoted(text: &str) -> Option<(String, &str)> {
    let mut chars = text.strip_prefix('"')?.char_indices();
    let mut word = String::new();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((word, &text[i + 2..])),
            '\\' => match chars.next()?.1 {
                '\\' => word.push('\\'),
                '"' => word.push('"'),
                '\'' => word.push('\''),
                'n' => word.push('\n'),
                't' => word.push('\t'),
                _ => return None,
            },
            c => word.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRINTED: &str = concat!(
        "   Compiling tdbench-kernels v0.1.0\n",
        r#"LC_ALL="C" PATH="/a b:/c" VSLANG="1033" "cc" "-Wl,--version-script=/t/rustcX/list" "-m64" "/t/rustcX/symbols.o" "#,
        r#""/t/k.o" "-Wl,--shuffle-sections=.text*=3" "-o" "/t/libk.so" "-Wl,a\"b""#,
        "\n"
    );

    #[test]
    fn a_printed_linker_command_is_read_exactly() {
        let command = LinkCommand::parse(PRINTED).unwrap();
        assert_eq!(command.program, "cc");
        assert_eq!(command.env, [("LC_ALL", "C"), ("PATH", "/a b:/c"), ("VSLANG", "1033")].map(|(k, v)| (k.into(), v.into())));
        assert_eq!(command.args[command.seed_at], "-Wl,--shuffle-sections=.text*=3");
        assert_eq!(command.args[command.output_at], "/t/libk.so");
        assert_eq!(command.args.last().unwrap(), "-Wl,a\"b");
        assert_eq!(command.temporary_folder(), Some(PathBuf::from("/t/rustcX")));
    }

    #[test]
    fn what_cannot_be_read_exactly_is_not_replayed() {
        assert_eq!(LinkCommand::parse(r#""cc" "-o" "/t/x""#), None, "no seed");
        assert_eq!(LinkCommand::parse(r#""cc" "-Wl,--shuffle-sections=.text*=1" "-o""#), None, "no output");
        assert_eq!(LinkCommand::parse(r#""cc" "-Wl,--shuffle-sections=.text*=1" "\u{e9}" "-o" "/x""#), None, "unknown escape");
        assert_eq!(LinkCommand::parse(r#""cc" "unterminated"#), None);
    }
}
