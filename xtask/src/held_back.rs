//! Held-back tests: extra tests an instructor keeps out of the student
//! edition (more cases, other seeds) and `just grade` adds to the suite.
//!
//! Each file in `grading/held-back/` is one test module named for its step,
//! `stepN_anything.rs`, so its tests are scored with step N. Grading copies
//! the files into the scratch copy of the suite and declares them in
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
            format!("grading/held-back/{name}: name it stepN_something.rs, N its step")
        })?;
        if !steps.iter().any(|(number, _)| *number == step) {
            return Err(format!(
                "grading/held-back/{name}: the suite has no step {step}"
            ));
        }
        if steps
            .iter()
            .any(|(number, title)| format!("step{number}_{title}") == module)
        {
            return Err(format!(
                "grading/held-back/{name}: the suite already has a module `{module}`; rename the file, e.g. step{step}_held_back.rs"
            ));
        }
        let text = fs::read_to_string(dir.join(&name)).map_err(|e| format!("{name}: {e}"))?;
        found.push(HeldBack { module, text });
    }
    Ok(found)
}

/// Adds the held-back modules to the suite in `workspace` (a scratch copy).
pub fn install(held_back: &[HeldBack], workspace: &Path) -> Result<(), String> {
    if held_back.is_empty() {
        return Ok(());
    }
    let lab = workspace.join("tests/lab");
    fs::create_dir_all(lab.join("held_back")).map_err(|e| e.to_string())?;
    let main = lab.join("main.rs");
    let mut declarations = fs::read_to_string(&main).map_err(|e| e.to_string())?;
    declarations.push_str("\n// Held-back grading tests, added by `cargo xtask grade`.\n");
    for module in held_back {
        let file = format!("held_back/{}.rs", module.module);
        fs::write(lab.join(&file), &module.text).map_err(|e| e.to_string())?;
        declarations.push_str(&format!("#[path = {file:?}]\nmod {};\n", module.module));
    }
    fs::write(&main, declarations).map_err(|e| e.to_string())
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
        assert_eq!(module_step("step3_held_back"), Some(3));
        assert_eq!(module_step("step13_more_seeds"), Some(13));
        assert_eq!(module_step("step3"), None);
        assert_eq!(module_step("stepx_held_back"), None);
        assert_eq!(module_step("step3_Held-Back"), None);
        assert_eq!(module_step("extra"), None);
    }
}
