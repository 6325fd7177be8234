//! What the lab is made of: its steps, read from the suite's module files, and
//! the tests documented as controls.

use std::collections::BTreeMap;
use std::fs;

use crate::root;

/// The lab's steps, as `(number, name)`, read from the suite's module files
/// (`tests/lab/step3_half_open.rs` is step 3, `half_open`).
pub(crate) fn steps() -> Result<Vec<(u32, String)>, String> {
    let dir = root().join("tests/lab");
    let mut steps = Vec::new();
    for entry in fs::read_dir(&dir).map_err(|e| format!("cannot read tests/lab: {e}"))? {
        let name = entry.map_err(|e| e.to_string())?.file_name();
        let name = name.to_string_lossy();
        let Some(stem) = name
            .strip_prefix("step")
            .and_then(|n| n.strip_suffix(".rs"))
        else {
            continue;
        };
        if let Some((number, title)) = stem.split_once('_') {
            if let Ok(number) = number.parse() {
                steps.push((number, title.to_owned()));
            }
        }
    }
    steps.sort();
    Ok(steps)
}

/// Tests documented as controls (`/// A control: why`): they check that a
/// rule is not over-applied, so they may pass before their step is done.
pub(crate) fn controls() -> Result<BTreeMap<String, String>, String> {
    let mut found = BTreeMap::new();
    for (number, name) in steps()? {
        let module = format!("step{number}_{name}");
        let text = fs::read_to_string(root().join("tests/lab").join(format!("{module}.rs")))
            .map_err(|e| e.to_string())?;
        found.extend(controls_in(&module, &text));
    }
    Ok(found)
}

/// The controls of one test module, by full test name.
pub(crate) fn controls_in(module: &str, text: &str) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut reason: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if let Some(doc) = line.strip_prefix("///") {
            let doc = doc.trim();
            match (&mut reason, doc.strip_prefix("A control:")) {
                (_, Some(start)) => reason = Some(start.trim().to_owned()),
                (Some(reason), None) => {
                    reason.push(' ');
                    reason.push_str(doc);
                }
                (None, None) => {}
            }
        } else if let Some(rest) = line.strip_prefix("fn ") {
            if let (Some(why), Some(test)) = (reason.take(), rest.split('(').next()) {
                found.insert(format!("{module}::{test}"), why);
            }
        } else if !line.starts_with("#[") {
            reason = None;
        }
    }
    found
}
