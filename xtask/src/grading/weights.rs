//! The grading weights: points per step, from one file an instructor edits
//! (`grading/weights.toml`).
//!
//! The file is a flat list of `key = value` lines, valid TOML, read by hand
//! so the tools need no parser crate: `stepN = points` for every step of the
//! suite, `provided = points` for the provided parts, and optionally
//! `held_back_visibility = "..."`, when Gradescope shows the held-back tests,
//! and `predictions = points`, the bonus for predictions (`just predict`),
//! 0 when absent, and `tuning = points`, the bonus for the tuning task
//! (`just tune`), 0 when absent, and `run_unscored = true`, to run the
//! tests that earn no points too (a grade skips them by default).

use std::collections::BTreeMap;

/// Points per step, and for the provided parts.
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    pub steps: BTreeMap<u32, f64>,
    pub provided: f64,
    /// A bonus on top of the steps' points, shared by the prediction
    /// questions ([`crate::students::predict`]); 0 turns predictions off.
    pub predictions: f64,
    /// A bonus on top of the steps' points, earned by the share of the
    /// tuning task's score levels reached; 0 leaves the task ungraded.
    pub tuning: f64,
    /// Gradescope's `visibility` for the held-back tests' entries.
    pub held_back_visibility: String,
    /// Run the tests of steps (and provided parts) worth 0 points too.
    pub run_unscored: bool,
}

/// Gradescope's visibilities; the held-back tests default to the last but
/// one, so a student sees them only once the instructor publishes grades.
pub const VISIBILITIES: [&str; 4] = ["hidden", "after_due_date", "after_published", "visible"];

/// Reads the weights and checks they name exactly the suite's `steps`.
pub fn parse(text: &str, steps: &[u32]) -> Result<Weights, String> {
    let mut found = BTreeMap::new();
    let mut provided = None;
    let mut predictions = None;
    let mut tuning = None;
    let mut visibility = None;
    let mut run_unscored = None;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let at = |why: &str| {
            format!(
                "grading/weights.toml:{}: {why}: `{}`",
                index + 1,
                raw.trim()
            )
        };
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| at("expected `key = number`"))?;
        if key.trim() == "held_back_visibility" {
            let name = value.trim().trim_matches('"');
            if !VISIBILITIES.contains(&name) || !value.trim().starts_with('"') {
                return Err(at(&format!("expected one of {VISIBILITIES:?}, in quotes")));
            }
            visibility = Some(name.to_owned());
            continue;
        }
        if key.trim() == "run_unscored" {
            let on = match value.trim() {
                "true" => true,
                "false" => false,
                _ => return Err(at("expected true or false")),
            };
            if run_unscored.replace(on).is_some() {
                return Err(at("this key is given twice"));
            }
            continue;
        }
        let value: f64 = value
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| at("the points must be a number, 0 or more"))?;
        let key = key.trim();
        if key == "provided" || key == "predictions" || key == "tuning" {
            let slot = match key {
                "provided" => &mut provided,
                "predictions" => &mut predictions,
                _ => &mut tuning,
            };
            if slot.replace(value).is_some() {
                return Err(at("this key is given twice"));
            }
        } else if let Some(step) = key.strip_prefix("step").and_then(|n| n.parse::<u32>().ok()) {
            if !steps.contains(&step) {
                return Err(at("the suite has no such step"));
            }
            if found.insert(step, value).is_some() {
                return Err(at("this step is weighted twice"));
            }
        } else {
            return Err(at(
                "unknown key; expected stepN, provided, predictions, tuning, held_back_visibility or run_unscored",
            ));
        }
    }
    let missing: Vec<String> = steps
        .iter()
        .filter(|step| !found.contains_key(step))
        .map(|step| format!("step{step}"))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "grading/weights.toml gives no points for {}; add a line for each",
            missing.join(", ")
        ));
    }
    Ok(Weights {
        steps: found,
        provided: provided.unwrap_or(0.0),
        predictions: predictions.unwrap_or(0.0),
        tuning: tuning.unwrap_or(0.0),
        held_back_visibility: visibility.unwrap_or_else(|| "after_published".to_owned()),
        run_unscored: run_unscored.unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_steps_and_provided_parts() {
        let weights = parse(
            "# points\nstep1 = 10\nstep2 = 2.5 # half\n\nprovided = 1\n",
            &[1, 2],
        )
        .unwrap();
        assert_eq!(weights.steps[&1], 10.0);
        assert_eq!(weights.steps[&2], 2.5);
        assert_eq!(weights.provided, 1.0);
        assert_eq!(weights.held_back_visibility, "after_published");
        assert_eq!(weights.predictions, 0.0);
        let bonus = parse("step1 = 1\npredictions = 5\n", &[1]).unwrap();
        assert_eq!(bonus.predictions, 5.0);
        let hidden = parse("step1 = 1\nheld_back_visibility = \"hidden\"\n", &[1]).unwrap();
        assert_eq!(hidden.held_back_visibility, "hidden");
        assert!(parse("step1 = 1\nheld_back_visibility = \"later\"\n", &[1]).is_err());
        assert!(parse("step1 = 1\nheld_back_visibility = visible\n", &[1]).is_err());
        assert!(!weights.run_unscored);
        assert!(
            parse("step1 = 1\nrun_unscored = true\n", &[1])
                .unwrap()
                .run_unscored
        );
        assert!(parse("step1 = 1\nrun_unscored = yes\n", &[1]).is_err());
        assert!(
            parse(
                "step1 = 1\nrun_unscored = true\nrun_unscored = false\n",
                &[1]
            )
            .is_err()
        );
    }

    #[test]
    fn refuses_missing_unknown_and_negative_entries() {
        assert!(
            parse("step1 = 10\n", &[1, 2])
                .unwrap_err()
                .contains("step2")
        );
        assert!(parse("step1 = 1\nstep3 = 1\n", &[1]).is_err());
        assert!(parse("step1 = -1\n", &[1]).is_err());
        assert!(parse("step1 = 1\nstep1 = 2\n", &[1]).is_err());
        assert!(parse("bonus = 1\nstep1 = 1\n", &[1]).is_err());
        assert!(parse("step1 = 1\npredictions = -5\n", &[1]).is_err());
        assert!(parse("step1 = 1\npredictions = 1\npredictions = 2\n", &[1]).is_err());
        assert_eq!(parse("step1 = 1\n", &[1]).unwrap().tuning, 0.0);
        assert_eq!(parse("step1 = 1\ntuning = 5\n", &[1]).unwrap().tuning, 5.0);
        assert!(parse("step1 = 1\ntuning = -1\n", &[1]).is_err());
        assert!(parse("step1 = 1\ntuning = 1\ntuning = 2\n", &[1]).is_err());
    }
}
