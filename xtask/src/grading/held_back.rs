//! Held-back tests: extra tests an instructor keeps out of the student
//! edition (more cases, other seeds) and `just grade` adds to the suite.
//!
//! Each file in `grading/held-back/` is one test module named for its step,
//! `stepN_anything.rs`, so its tests are scored with step N. Grading copies
//! the files into the scratch copy of the suite, under names that tell the
//! code under test nothing ([`install`]), and declares them in
//! `tests/lab/main.rs` there; the suite itself is never changed.

use std::fs;
use std::path::Path;

/// One held-back module.
pub struct HeldBack {
    /// The module name, `stepN_anything`, which is also its tests' prefix.
    pub module: String,
    pub text: String,
}

/// Reads the held-back modules in `dir` (none if it does not exist) and
/// checks each names a step of the suite and no suite module.
pub fn read(dir: &Path, steps: &[(u32, String)]) -> Result<Vec<HeldBack>, String> {
    if !dir.exists() {
        return Ok(Vec::new());
    }
    let mut names: Vec<String> = fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".rs"))
        .collect();
    names.sort();
    let mut found = Vec::new();
    for name in names {
        let module = name.trim_end_matches(".rs").to_owned();
        let step = module_step(&module).ok_or_else(|| {
            format!(
                "grading/held-back/{name}: name it stepNN_something.rs, NN its step in two digits"
            )
        })?;
        if !module.starts_with(&format!("step{step:02}_")) {
            return Err(format!(
                "grading/held-back/{name}: a step's number takes two digits (step{step:02}_...), as the suite's files do"
            ));
        }
        if !steps.iter().any(|(number, _)| *number == step) {
            return Err(format!(
                "grading/held-back/{name}: the suite has no step {step}"
            ));
        }
        if steps
            .iter()
            .any(|(number, title)| format!("step{number:02}_{title}") == module)
        {
            return Err(format!(
                "grading/held-back/{name}: the suite already has a module `{module}`; rename the file, e.g. step{step:02}_held_back.rs"
            ));
        }
        let text = fs::read_to_string(dir.join(&name)).map_err(|e| format!("{name}: {e}"))?;
        found.push(HeldBack { module, text });
    }
    Ok(found)
}

/// Adds the held-back modules to the suite in `workspace` (a scratch copy),
/// under names drawn from `key`, and returns how to read those names back.
///
/// The files themselves go to `sealed`, a folder outside the workspace
/// that the code graded never sees (a grade hides it from every process
/// that runs the student's code, [`crate::grading::confine`]); the suite's
/// `main.rs` names them there. Each is written only when its text changed,
/// so a regrade on one machine rebuilds nothing.
///
/// A test's name reaches the code it runs: libtest names the test's thread
/// after it, and `Location::caller`, a backtrace or a closure's type name
/// show its module, file and line. So in the workspace every held-back
/// module and test has a name that says nothing (`hb_…::t_…`), and every
/// file starts with a number of blank lines drawn from `key` too: the
/// student's code can learn neither which held-back test is running nor
/// where it stands. `key` is the grading machine's own ([`key`]); reports
/// carry the real names ([`Aliases::restore`]).
pub fn install(
    held_back: &[HeldBack],
    workspace: &Path,
    sealed: &Path,
    key: u64,
) -> Result<Aliases, String> {
    let mut aliases = Aliases::default();
    if held_back.is_empty() {
        return Ok(aliases);
    }
    let folder = sealed.join("held_back");
    fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    aliases.folder = Some(folder.to_string_lossy().into_owned());
    let main = workspace.join("tests/lab/main.rs");
    let mut declarations = fs::read_to_string(&main).map_err(|e| e.to_string())?;
    declarations.push_str(MARKER);
    let modules: Vec<(&HeldBack, String)> = held_back
        .iter()
        .map(|module| (module, format!("hb_{:016x}", mix(key, &module.module))))
        .collect();
    for (module, alias) in &modules {
        let mut text = module.text.clone();
        // Modules name each other (`crate::step01_seeded::Draw`).
        for (other, other_alias) in &modules {
            text = text.replace(
                &format!("crate::{}::", other.module),
                &format!("crate::{other_alias}::"),
            );
        }
        let (mut text, tests) = rename_tests(&text, key, &module.module);
        for (real, opaque) in tests {
            // A test that runs another in a child process names it.
            text = text.replace(
                &format!("\"{}::{real}\"", module.module),
                &format!("\"{alias}::{opaque}\""),
            );
            aliases.insert(
                format!("{alias}::{opaque}"),
                format!("{}::{real}", module.module),
            );
        }
        aliases.modules.push((alias.clone(), module.module.clone()));
        let padding = "\n".repeat((mix(key, &format!("{}#lines", module.module)) % 4096) as usize);
        let file = folder.join(format!("{alias}.rs"));
        let text = padding + &text;
        if fs::read_to_string(&file).ok().as_deref() != Some(text.as_str()) {
            fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
        }
        declarations.push_str(&format!(
            "#[path = {:?}]\nmod {alias};\n",
            file.to_string_lossy()
        ));
    }
    // Files of another key's names, or of a module since removed.
    for entry in fs::read_dir(&folder).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        if !modules.iter().any(|(_, alias)| *alias == stem) {
            fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    fs::write(&main, declarations).map_err(|e| e.to_string())?;
    Ok(aliases)
}

/// What [`install`] writes above the held-back modules in `main.rs`.
const MARKER: &str = "\n// Held-back grading tests, added by `cargo xtask grade`.\n";

/// Whether the suite in `workspace` declares held-back modules.
pub fn installed(workspace: &Path) -> Result<bool, String> {
    let main = workspace.join("tests/lab/main.rs");
    let text = fs::read_to_string(&main).map_err(|e| format!("{}: {e}", main.display()))?;
    Ok(text.contains(MARKER))
}

/// Takes the held-back modules out of the suite in `workspace` again, for a
/// build of the public suite alone.
pub fn uninstall(workspace: &Path) -> Result<(), String> {
    let main = workspace.join("tests/lab/main.rs");
    let text = fs::read_to_string(&main).map_err(|e| format!("{}: {e}", main.display()))?;
    if let Some(at) = text.find(MARKER) {
        fs::write(&main, &text[..at]).map_err(|e| format!("{}: {e}", main.display()))?;
    }
    Ok(())
}

/// The held-back tests' names in a workspace, and the real ones.
#[derive(Debug, Default, Clone)]
pub struct Aliases {
    /// Full opaque test name to full real one.
    tests: std::collections::BTreeMap<String, String>,
    /// Opaque module name to real one, for what a test prints.
    modules: Vec<(String, String)>,
    /// Where the files are, which a report shows as the suite's
    /// `tests/lab/held_back`, as a student's copy of the kit would have it.
    folder: Option<String>,
}

impl Aliases {
    fn insert(&mut self, opaque: String, real: String) {
        self.tests.insert(opaque, real);
    }

    /// A listed test's real name (a test of the public suite keeps its own).
    pub fn real(&self, listed: &str) -> String {
        self.tests
            .get(listed)
            .cloned()
            .unwrap_or_else(|| listed.to_owned())
    }

    /// The name to run a test by in the workspace.
    pub fn opaque(&self, real: &str) -> String {
        self.tests
            .iter()
            .find(|(_, name)| name.as_str() == real)
            .map_or_else(|| real.to_owned(), |(opaque, _)| opaque.clone())
    }

    /// `text` (a test's output) with every opaque name read back.
    pub fn restore(&self, text: &str) -> String {
        let mut text = text.to_owned();
        if let Some(folder) = &self.folder {
            text = text.replace(folder.as_str(), "tests/lab/held_back");
        }
        for (opaque, real) in &self.tests {
            text = text.replace(opaque.as_str(), real);
        }
        for (opaque, real) in &self.modules {
            text = text.replace(opaque.as_str(), real);
        }
        text
    }
}

/// Renames every `#[test]` function of `text` after `key`, and returns the
/// text with the (real, opaque) names.
fn rename_tests(text: &str, key: u64, module: &str) -> (String, Vec<(String, String)>) {
    let mut out = String::with_capacity(text.len());
    let mut renamed = Vec::new();
    let mut in_test = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[test]") {
            in_test = true;
        } else if in_test {
            if let Some(rest) = trimmed.strip_prefix("fn ") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let opaque = format!("t_{:016x}", mix(key, &format!("{module}::{name}")));
                out.push_str(&line.replacen(&format!("fn {name}"), &format!("fn {opaque}"), 1));
                renamed.push((name, opaque));
                in_test = false;
                continue;
            }
        }
        out.push_str(line);
    }
    (out, renamed)
}

/// The grading machine's key for [`install`]'s names, kept in `dir` (the
/// kit's `target/grading`, which the graded code cannot read: the source
/// check refuses the file system) and drawn at random the first time, so
/// that regrades on one machine reuse one build.
pub fn key(dir: &Path) -> Result<u64, String> {
    let file = dir.join("held-back-key");
    if let Some(key) = fs::read_to_string(&file)
        .ok()
        .and_then(|text| u64::from_str_radix(text.trim(), 16).ok())
    {
        return Ok(key);
    }
    use std::hash::{BuildHasher, Hasher};
    // The standard library seeds each `RandomState` from the system's
    // random source.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos()),
    );
    let key = hasher.finish();
    fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    fs::write(&file, format!("{key:016x}\n")).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(key)
}

/// A well-mixed 64-bit digest of `key` and `name` (FNV-1a, then
/// SplitMix64's finalizer): stable across builds, unlike `DefaultHasher`.
fn mix(key: u64, name: &str) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64 ^ key;
    for byte in name.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash = (hash ^ (hash >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash = (hash ^ (hash >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^ (hash >> 31)
}

/// The step of a module named `stepN_anything`.
fn module_step(module: &str) -> Option<u32> {
    let (number, rest) = module.strip_prefix("step")?.split_once('_')?;
    let valid = !rest.is_empty()
        && rest
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    valid.then(|| number.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_name_gives_its_step() {
        assert_eq!(module_step("step03_held_back"), Some(3));
        assert_eq!(module_step("step13_more_seeds"), Some(13));
        assert_eq!(module_step("step3"), None);
        assert_eq!(module_step("stepx_held_back"), None);
        assert_eq!(module_step("step3_Held-Back"), None);
        assert_eq!(module_step("extra"), None);
    }

    #[test]
    fn a_held_back_file_names_its_step_in_two_digits() {
        let dir = std::env::temp_dir().join(format!("held-back-digits-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let steps = [(3, "generations".to_owned())];
        fs::write(dir.join("step3_more.rs"), "").unwrap();
        let Err(said) = read(&dir, &steps) else {
            panic!("a one-digit name was read")
        };
        assert!(said.contains("two digits (step03_...)"), "{said}");
        fs::remove_file(dir.join("step3_more.rs")).unwrap();
        fs::write(dir.join("step03_more.rs"), "").unwrap();
        assert_eq!(read(&dir, &steps).unwrap().len(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn installed_tests_carry_names_and_lines_that_say_nothing_and_read_back() {
        let workspace =
            std::env::temp_dir().join(format!("held-back-install-{}", std::process::id()));
        let _ = fs::remove_dir_all(&workspace);
        fs::create_dir_all(workspace.join("tests/lab")).unwrap();
        fs::write(workspace.join("tests/lab/main.rs"), "mod support;\n").unwrap();
        let modules = [
            HeldBack {
                module: "step01_seeded".into(),
                text: "pub struct Draw;\n".into(),
            },
            HeldBack {
                module: "step03_held_back".into(),
                text: "//! Doc.\nuse crate::step01_seeded::Draw;\n\n/// Why.\n#[test]\n#[should_panic]\nfn b6_secret_case() {\n    let _ = Draw;\n}\n\n#[test]\nfn b11_in_a_child() {\n    run_child(\"step03_held_back::child\");\n}\n\n#[test]\n#[ignore = \"run by b11_in_a_child\"]\nfn child() {}\n".into(),
            },
        ];
        let sealed = workspace.join("sealed");
        let aliases = install(&modules, &workspace, &sealed, 7).unwrap();
        let main = fs::read_to_string(workspace.join("tests/lab/main.rs")).unwrap();
        assert!(
            !main.contains("step3") && !main.contains("seeded"),
            "{main}"
        );
        let opaque = aliases.opaque("step03_held_back::b6_secret_case");
        assert!(
            opaque.starts_with("hb_") && opaque.contains("::t_"),
            "{opaque}"
        );
        assert_eq!(aliases.real(&opaque), "step03_held_back::b6_secret_case");
        assert_eq!(
            aliases.real("step03_generations::b6_x"),
            "step03_generations::b6_x"
        );
        let module = opaque.split("::").next().unwrap();
        let path = sealed.join(format!("held_back/{module}.rs"));
        let file = fs::read_to_string(&path).unwrap();
        assert!(
            main.contains(&format!("#[path = {:?}]", path.to_string_lossy())),
            "{main}"
        );
        assert!(
            !file.contains("secret") && !file.contains("step01_seeded"),
            "{file}"
        );
        assert!(file.contains("#[should_panic]\nfn t_"), "{file}");
        let child = aliases.opaque("step03_held_back::child");
        assert!(file.contains(&format!("run_child(\"{child}\")")), "{file}");
        assert_eq!(
            aliases.restore(&format!(
                "thread '{opaque}' panicked at {}:9:5",
                path.display()
            )),
            "thread 'step03_held_back::b6_secret_case' panicked at tests/lab/held_back/step03_held_back.rs:9:5"
        );
        // Another machine's key: other names, other lines.
        let again = workspace.join("again");
        fs::create_dir_all(again.join("tests/lab")).unwrap();
        fs::write(again.join("tests/lab/main.rs"), "").unwrap();
        let other = install(&modules, &again, &sealed, 8).unwrap();
        assert_ne!(other.opaque("step03_held_back::b6_secret_case"), opaque);
        // Only the files of the names in use stay.
        assert!(
            !path.exists(),
            "the other key's file is left in {}",
            sealed.display()
        );
        fs::remove_dir_all(&workspace).unwrap();
    }

    #[test]
    fn the_key_is_drawn_once_and_kept() {
        let dir = std::env::temp_dir().join(format!("held-back-key-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let first = key(&dir).unwrap();
        assert_eq!(key(&dir).unwrap(), first);
        fs::remove_dir_all(&dir).unwrap();
        assert_ne!(key(&dir).unwrap(), first, "a new machine draws a new key");
        fs::remove_dir_all(&dir).unwrap();
    }
}
