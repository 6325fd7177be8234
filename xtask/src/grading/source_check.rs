//! The source check: what a graded crate may not contain.
//!
//! A grade is only as good as the channel its verdicts come through. The
//! student's code runs inside the test process, so anything that process can
//! do, the code can do: print a fake `test NAME ... ok`, end the process with
//! status 0, write a file, replace the panic hook. The grader closes that at
//! the source: the lab's code needs none of those powers, so a crate that
//! names one of them is refused before it is built, with the file, the line
//! and the reason. `unsafe` is also forbidden from outside the crate (the
//! grader's manifest sets `unsafe_code = "forbid"`, which no attribute in the
//! source can lower), so FFI, `extern` blocks and the unsafe attributes
//! (`no_mangle`, `link_section`, ...) stay closed even if this list missed a
//! spelling.
//!
//! The check reads tokens, not text: comments, strings and character
//! literals are skipped, raw identifiers (`r#fs`) count as what they name,
//! and every path to a forbidden item has to spell one of these names (Rust
//! has no stable way to build an identifier from pieces), however it is
//! aliased afterwards. Attributes go further: only those on an allowed
//! list pass, so one that reads a file or changes the link is refused
//! whatever it is called, a new one included.

use std::fs;
use std::path::Path;

/// Names refused anywhere in the code, with why the lab never needs them.
const FORBIDDEN: &[(&str, &str)] = &[
    ("unsafe", "unsafe code can forge anything the process does"),
    (
        "extern",
        "foreign functions (atexit, write) run outside the suite's control",
    ),
    ("asm", "inline assembly runs outside the suite's control"),
    (
        "global_asm",
        "inline assembly runs outside the suite's control",
    ),
    (
        "naked_asm",
        "inline assembly runs outside the suite's control",
    ),
    (
        "process",
        "the process (exit, abort, commands) belongs to the test harness",
    ),
    ("env", "the environment belongs to the test harness"),
    ("option_env", "the environment belongs to the test harness"),
    ("fs", "the file system is not part of the lab"),
    // A `Path` reaches the file system through its own methods (it lists a
    // folder, says whether a file exists and how long it is); a value of it
    // cannot be had without naming it or `fs` or `env`.
    ("Path", "the file system is not part of the lab"),
    ("PathBuf", "the file system is not part of the lab"),
    ("read_dir", "the file system is not part of the lab"),
    ("symlink_metadata", "the file system is not part of the lab"),
    ("canonicalize", "the file system is not part of the lab"),
    ("read_link", "the file system is not part of the lab"),
    ("try_exists", "the file system is not part of the lab"),
    ("os", "operating-system handles are not part of the lab"),
    ("net", "the network is not part of the lab"),
    (
        "io",
        "output handles would let the code write the test report",
    ),
    (
        "stdout",
        "output handles would let the code write the test report",
    ),
    (
        "stderr",
        "output handles would let the code write the test report",
    ),
    ("stdin", "input handles are not part of the lab"),
    (
        "print",
        "output would mix with the test report; remove debugging output",
    ),
    (
        "println",
        "output would mix with the test report; remove debugging output",
    ),
    (
        "eprint",
        "output would mix with the test report; remove debugging output",
    ),
    (
        "eprintln",
        "output would mix with the test report; remove debugging output",
    ),
    (
        "dbg",
        "output would mix with the test report; remove debugging output",
    ),
    ("include", "code from outside starter/src is not graded"),
    (
        "include_str",
        "files from outside starter/src are not graded",
    ),
    (
        "include_bytes",
        "files from outside starter/src are not graded",
    ),
    ("set_hook", "the panic hook belongs to the test harness"),
    ("take_hook", "the panic hook belongs to the test harness"),
    ("update_hook", "the panic hook belongs to the test harness"),
    (
        "set_output_capture",
        "the output capture belongs to the test harness",
    ),
];

/// The attributes a graded crate may use, by the first segment of their
/// name: what the lab's code needs (derives and their helpers, lints,
/// `cfg`, tests, docs, inlining). Any other is refused whatever it is
/// called, so an attribute that reads a file or changes the link
/// (`path`, `debugger_visualizer`, `link_section`, one a later Rust adds)
/// is closed by construction, not by being on a list.
const ALLOWED_ATTRIBUTES: &[&str] = &[
    "allow",
    "cfg",
    "cold",
    "default",
    "deny",
    "deprecated",
    "derive",
    "diagnostic",
    "doc",
    "error",
    "expect",
    "forbid",
    "from",
    "ignore",
    "inline",
    "must_use",
    "non_exhaustive",
    "pin",
    "repr",
    "rustfmt",
    "clippy",
    "should_panic",
    "source",
    "test",
    "tokio",
    "track_caller",
    "warn",
];

/// Why an attribute outside [`ALLOWED_ATTRIBUTES`] is refused.
const UNLISTED_ATTRIBUTE: &str = "an attribute the lab never needs: a graded crate may use derive, allow, warn, deny, forbid, expect, cfg, doc, inline, cold, must_use, non_exhaustive, repr, deprecated, track_caller, diagnostic, test, should_panic, ignore, tokio::test, rustfmt and clippy tool attributes, and the derive helpers error, from, source, default and pin";

/// Names refused inside an attribute (`#[...]`, `#![...]`), where they
/// change how the code is linked or which files make up the crate: a
/// second line behind [`ALLOWED_ATTRIBUTES`], for a name inside an allowed
/// attribute (`#[doc(...)]`, `#[cfg(...)]`).
const FORBIDDEN_ATTRIBUTES: &[(&str, &str)] = &[
    ("path", "modules come from starter/src/*.rs only"),
    (
        "no_mangle",
        "exported symbols run outside the suite's control",
    ),
    (
        "export_name",
        "exported symbols run outside the suite's control",
    ),
    (
        "link_section",
        "linker sections run code outside the suite's control",
    ),
    ("link", "linking foreign code is not part of the lab"),
    ("link_name", "linking foreign code is not part of the lab"),
    ("used", "linker tricks are not part of the lab"),
    (
        "global_allocator",
        "the allocator belongs to the test harness",
    ),
    ("no_std", "the lab's crate is a std crate"),
    (
        "no_main",
        "the test binary's entry point belongs to the harness",
    ),
    ("no_core", "the lab's crate is a std crate"),
];

/// One thing the check refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The file, as the student names it (`starter/src/circuit.rs`).
    pub file: String,
    pub line: usize,
    pub name: String,
    pub why: &'static str,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: `{}`: {}",
            self.file, self.line, self.name, self.why
        )
    }
}

/// Checks every `*.rs` file in `src` and its folders, naming them as
/// `shown/PATH`.
pub fn check_dir(src: &Path, shown: &str) -> Result<Vec<Refusal>, String> {
    let files = crate::scratch::rs_files(src)?;
    let mut refusals = Vec::new();
    for name in files {
        let text = fs::read_to_string(src.join(&name))
            .map_err(|e| format!("cannot read {}/{name}: {e}", src.display()))?;
        refusals.extend(check(&format!("{shown}/{name}"), &text));
    }
    Ok(refusals)
}

/// The refusals in one file's text.
pub fn check(file: &str, text: &str) -> Vec<Refusal> {
    let tokens = tokens(text);
    let mut refusals = Vec::new();
    // Brackets opened since the last `#[` or `#![`, while inside one.
    let mut attribute_depth: Option<usize> = None;
    for (index, token) in tokens.iter().enumerate() {
        match token.kind {
            Kind::Punct('[') => {
                if let Some(depth) = attribute_depth.as_mut() {
                    *depth += 1;
                } else if opens_attribute(&tokens, index) {
                    attribute_depth = Some(1);
                    // The attribute's name: its first identifier. One
                    // outside the allowed list is refused, whatever it is.
                    if let Some(Token {
                        kind: Kind::Ident(name),
                        line,
                    }) = tokens.get(index + 1)
                    {
                        // A name on the lists below is refused there, with
                        // its own reason.
                        let listed = FORBIDDEN
                            .iter()
                            .chain(FORBIDDEN_ATTRIBUTES)
                            .any(|(forbidden, _)| forbidden == name);
                        if !ALLOWED_ATTRIBUTES.contains(&name.as_str()) && !listed {
                            refusals.push(Refusal {
                                file: file.to_owned(),
                                line: *line,
                                name: name.clone(),
                                why: UNLISTED_ATTRIBUTE,
                            });
                        }
                    }
                }
            }
            Kind::Punct(']') => {
                if let Some(depth) = attribute_depth.as_mut() {
                    *depth -= 1;
                    if *depth == 0 {
                        attribute_depth = None;
                    }
                }
            }
            Kind::Ident(ref name) => {
                let refused = FORBIDDEN
                    .iter()
                    .chain(attribute_depth.map_or(&[][..], |_| FORBIDDEN_ATTRIBUTES))
                    .find(|(forbidden, _)| forbidden == name);
                if let Some((_, why)) = refused {
                    refusals.push(Refusal {
                        file: file.to_owned(),
                        line: token.line,
                        name: name.clone(),
                        why,
                    });
                }
            }
            // `#[$name = ...]`: a macro writes the attribute, so its name
            // (`path`, say) is not in it for the check to see.
            Kind::Punct('$') if attribute_depth.is_some() => refusals.push(Refusal {
                file: file.to_owned(),
                line: token.line,
                name: "$".to_owned(),
                why: MACRO_ATTRIBUTE,
            }),
            Kind::Punct(_) => {}
        }
    }
    refusals
}

/// Why an attribute a macro writes is refused.
const MACRO_ATTRIBUTE: &str =
    "an attribute a macro writes hides its name from this check; write the attribute out";

/// Whether the `[` at `index` follows `#` or `#!`.
fn opens_attribute(tokens: &[Token], index: usize) -> bool {
    let before = |back: usize| index.checked_sub(back).map(|at| &tokens[at].kind);
    matches!(before(1), Some(Kind::Punct('#')))
        || (matches!(before(1), Some(Kind::Punct('!')))
            && matches!(before(2), Some(Kind::Punct('#'))))
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Ident(String),
    Punct(char),
}

#[derive(Debug, Clone)]
struct Token {
    kind: Kind,
    line: usize,
}

/// The identifiers and punctuation of Rust source, without comments and
/// literals. Not a full lexer: numbers are dropped, and anything it does not
/// recognise is punctuation, which is all the check needs.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut at = 0;
    let count_lines = |from: usize, to: usize, line: &mut usize| {
        *line += chars[from..to.min(chars.len())]
            .iter()
            .filter(|c| **c == '\n')
            .count();
    };
    while at < chars.len() {
        let c = chars[at];
        let next = chars.get(at + 1).copied();
        if c == '\n' {
            line += 1;
            at += 1;
        } else if c.is_whitespace() {
            at += 1;
        } else if c == '/' && next == Some('/') {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
        } else if c == '/' && next == Some('*') {
            // Block comments nest in Rust.
            let start = at;
            let mut depth = 0;
            while at < chars.len() {
                if chars[at] == '/' && chars.get(at + 1) == Some(&'*') {
                    depth += 1;
                    at += 2;
                } else if chars[at] == '*' && chars.get(at + 1) == Some(&'/') {
                    depth -= 1;
                    at += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    at += 1;
                }
            }
            count_lines(start, at, &mut line);
        } else if let Some(end) = raw_string_end(&chars, at) {
            count_lines(at, end, &mut line);
            at = end;
        } else if c == '"' || (matches!(c, 'b' | 'c') && next == Some('"')) {
            let start = at;
            at += if c == '"' { 1 } else { 2 };
            while at < chars.len() && chars[at] != '"' {
                at += if chars[at] == '\\' { 2 } else { 1 };
            }
            at += 1;
            count_lines(start, at, &mut line);
        } else if c == '\'' || (c == 'b' && next == Some('\'')) {
            // A character literal, or a lifetime (whose name is harmless).
            let quote = if c == '\'' { at } else { at + 1 };
            at = char_literal_end(&chars, quote).unwrap_or(quote + 1);
            if at == quote + 1 {
                // A lifetime: skip its name too.
                while at < chars.len() && is_ident_char(chars[at]) {
                    at += 1;
                }
            }
        } else if c == 'r'
            && next == Some('#')
            && chars.get(at + 2).is_some_and(|c| is_ident_start(*c))
        {
            // A raw identifier names what it spells.
            at += 2;
            let start = at;
            while at < chars.len() && is_ident_char(chars[at]) {
                at += 1;
            }
            tokens.push(Token {
                kind: Kind::Ident(chars[start..at].iter().collect()),
                line,
            });
        } else if is_ident_start(c) {
            let start = at;
            while at < chars.len() && is_ident_char(chars[at]) {
                at += 1;
            }
            tokens.push(Token {
                kind: Kind::Ident(chars[start..at].iter().collect()),
                line,
            });
        } else if c.is_ascii_digit() {
            while at < chars.len() && (is_ident_char(chars[at]) || chars[at] == '.') {
                // `1..2` is a range, not one number.
                if chars[at] == '.' && chars.get(at + 1) == Some(&'.') {
                    break;
                }
                at += 1;
            }
        } else {
            tokens.push(Token {
                kind: Kind::Punct(c),
                line,
            });
            at += 1;
        }
    }
    tokens
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// The end of a raw string literal (`r"..."`, `r#"..."#`, `br##"..."##`,
/// `cr"..."`) starting at `at`, if one does.
fn raw_string_end(chars: &[char], at: usize) -> Option<usize> {
    let mut index = at;
    if matches!(chars.get(index), Some('b' | 'c')) {
        index += 1;
    }
    if chars.get(index) != Some(&'r') {
        return None;
    }
    // Not the tail of an identifier such as `bar"`.
    if at > 0 && is_ident_char(chars[at - 1]) {
        return None;
    }
    index += 1;
    let mut hashes = 0;
    while chars.get(index) == Some(&'#') {
        hashes += 1;
        index += 1;
    }
    if chars.get(index) != Some(&'"') {
        return None;
    }
    index += 1;
    while index < chars.len() {
        if chars[index] == '"' && (1..=hashes).all(|n| chars.get(index + n) == Some(&'#')) {
            return Some(index + 1 + hashes);
        }
        index += 1;
    }
    Some(chars.len())
}

/// The end of a character literal whose opening quote is at `quote`, or
/// `None` if the quote starts a lifetime.
fn char_literal_end(chars: &[char], quote: usize) -> Option<usize> {
    match chars.get(quote + 1)? {
        '\\' => {
            let mut index = quote + 2;
            while index < chars.len() && chars[index] != '\'' {
                index += 1;
            }
            Some(index + 1)
        }
        _ if chars.get(quote + 2) == Some(&'\'') => Some(quote + 3),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        check("f.rs", text).into_iter().map(|r| r.name).collect()
    }

    #[test]
    fn every_way_to_reach_the_process_or_its_output_is_refused() {
        assert_eq!(names("fn f() { std::process::exit(0) }"), ["process"]);
        assert_eq!(names("use std::process as p;"), ["process"]);
        assert_eq!(names("use ::std::{io::Write, fs};"), ["io", "fs"]);
        assert_eq!(names("fn f() { r#println!(\"x\") }"), ["println"]);
        assert_eq!(
            names("fn f() { std::thread::spawn(|| println!(\"test a ... ok\")); }"),
            ["println"]
        );
        assert_eq!(
            names("unsafe extern \"C\" { fn atexit(f: extern \"C\" fn()) -> i32; }"),
            ["unsafe", "extern", "extern"]
        );
        assert_eq!(
            names("#[unsafe(no_mangle)] pub fn main() {}"),
            ["unsafe", "no_mangle"]
        );
        assert_eq!(names("#[path = \"../../tests/lab/x.rs\"] mod x;"), ["path"]);
        // A macro that writes the attribute: its name never appears in one.
        assert_eq!(
            names("macro_rules! m { ($a:ident) => { #[$a = \"../x.rs\"] mod x; }; }\nm!(path);"),
            ["$"]
        );
        assert_eq!(
            names("macro_rules! m { ($($t:tt)*) => { #[$($t)*] mod x; }; }"),
            ["$", "$"]
        );
        assert!(
            names("macro_rules! m { ($a:ident) => { #[derive(Debug)] struct $a; }; }").is_empty()
        );
        assert_eq!(names("#![no_std]"), ["no_std"]);
        assert_eq!(
            names("const X: &str = include_str!(\"/etc/passwd\");"),
            ["include_str"]
        );
        assert_eq!(
            names("fn f() { std::panic::set_hook(Box::new(|_| {})) }"),
            ["set_hook"]
        );
        assert_eq!(names("fn f() { let _ = std::env::args(); }"), ["env"]);
    }

    #[test]
    fn comments_strings_lifetimes_and_ordinary_names_are_not_refused() {
        let text = r####"
            // std::process::exit(0)
            /* outer /* nested println! */ still a comment: fs */
            /// Writes nothing to stdout.
            fn f<'io>(path: &'io str, used: u32) -> &'io str {
                let _ = "std::process::exit";
                let _ = r#"println!("test a ... ok")"#;
                let _ = b"io";
                let _ = '\'';
                let _ = 'x';
                let _ = 1..2;
                let _ = 1.5e3;
                path
            }
            #[derive(Debug)]
            struct Environment;
        "####;
        assert_eq!(names(text), Vec::<String>::new());
    }

    #[test]
    fn a_refusal_names_its_file_and_line() {
        let refusals = check(
            "starter/src/circuit.rs",
            "fn f() {\n    /* a\n b */ \"x\n y\";\n    std::process::abort()\n}\n",
        );
        assert_eq!(refusals.len(), 1);
        assert_eq!(refusals[0].line, 5);
        assert_eq!(
            refusals[0].to_string(),
            "starter/src/circuit.rs:5: `process`: the process (exit, abort, commands) belongs to the test harness"
        );
    }

    #[test]
    fn attribute_only_names_are_refused_only_in_attributes() {
        assert_eq!(
            names("fn f(path: u8, link: u8, used: u8) {}"),
            Vec::<String>::new()
        );
        assert_eq!(
            names("#[cfg_attr(all(), path = \"x.rs\")] mod x;"),
            ["cfg_attr", "path"]
        );
        assert_eq!(
            names("#[derive(Clone)] struct S([u8; 2]); fn g(used: u8) {}"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_path_that_would_list_a_folder_or_measure_a_file_is_refused() {
        assert_eq!(
            names(
                "use std::path::Path;\nfn f() { let _ = Path::new(\"../../grading\").read_dir(); }"
            ),
            ["Path", "Path", "read_dir"]
        );
        assert_eq!(
            names("fn f() { let _ = std::path::PathBuf::from(\"x\").try_exists(); }"),
            ["PathBuf", "try_exists"]
        );
    }

    #[test]
    fn only_the_attributes_the_lab_needs_are_allowed_whatever_the_others_are_called() {
        assert_eq!(
            names(
                "#[debugger_visualizer(gdb_script_file = \"../../grading/held-back/a.rs\")] mod x {}"
            ),
            ["debugger_visualizer"]
        );
        assert_eq!(
            names("#[some_attribute_of_a_later_rust] fn f() {}"),
            ["some_attribute_of_a_later_rust"]
        );
        assert_eq!(
            names("#![windows_subsystem = \"console\"]"),
            ["windows_subsystem"]
        );
        assert_eq!(
            names(
                "#![forbid(unsafe_code)]\n#[rustfmt::skip]\n#[derive(Debug, thiserror::Error)]\nenum E { #[error(\"x\")] A(#[from] std::fmt::Error) }\n#[cfg(test)] #[tokio::test] async fn t() {}"
            ),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_reference_solution_and_the_starter_pass() {
        let root = crate::root();
        for dir in ["solution/src", "starter/src"] {
            let refusals = check_dir(&root.join(dir), dir).unwrap();
            assert!(refusals.is_empty(), "{dir}: {refusals:?}");
        }
    }
}
