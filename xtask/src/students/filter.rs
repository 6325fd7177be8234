//! `cargo xtask filter STEP`: the libtest filter for one step.

use crate::lab::steps;

/// Prints the libtest filter that selects one step's tests, or nothing for
/// the whole suite.
pub(crate) fn step_filter(step: &str) -> Result<(), String> {
    if let Some((number, name)) = resolve(step)? {
        println!("{}", filter_for(number, &name));
    }
    Ok(())
}

/// The step a student means by `step`, given as a number (`3`, `step3`) or a
/// name (`half_open`); `None` for the empty string, which means every step.
pub(crate) fn resolve(step: &str) -> Result<Option<(u32, String)>, String> {
    if step.is_empty() {
        return Ok(None);
    }
    let steps = steps()?;
    let wanted = step.trim_start_matches("step");
    let found = steps
        .iter()
        .find(|(number, name)| number.to_string() == wanted || name == wanted);
    match found {
        Some(found) => Ok(Some(found.clone())),
        None => {
            let known: Vec<String> = steps
                .iter()
                .map(|(n, name)| format!("{n} ({name})"))
                .collect();
            Err(format!(
                "no step called `{step}`; the steps are: {}",
                known.join(", ")
            ))
        }
    }
}

/// The libtest filter that selects one step's tests.
pub(crate) fn filter_for(number: u32, name: &str) -> String {
    format!("step{number:02}_{name}::")
}
