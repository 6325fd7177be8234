//! `cargo xtask filter STEP`: the libtest filter for one step.

use crate::lab::steps;

/// Prints the libtest filter that selects one step's tests, or nothing for
/// the whole suite.
pub(crate) fn step_filter(step: &str) -> Result<(), String> {
    if step.is_empty() {
        return Ok(());
    }
    let steps = steps()?;
    let wanted = step.trim_start_matches("step");
    let found = steps
        .iter()
        .find(|(number, name)| number.to_string() == wanted || name == wanted);
    match found {
        Some((number, name)) => {
            println!("step{number}_{name}::");
            Ok(())
        }
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
