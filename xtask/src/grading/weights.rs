//! The grading weights: points per step, the manifest's (`points` in
//! `steps.toml`) unless the course's settings (`grading/weights.toml`, the
//! file an instructor edits) weigh a step differently.
//!
//! The file is a flat list of `key = value` lines, valid TOML, read by hand
//! so the tools need no parser crate: optionally `stepN = points` for a step
//! of the suite whose points the course changes, `provided = points` for the
//! provided parts, `held_back_visibility = "..."`, when Gradescope shows the held-back tests,
//! and `predictions = points`, the bonus for predictions (`just predict`),
//! 0 when absent, and `tuning = points`, the bonus for the tuning task
//! (`just tune`), 0 when absent, and `run_unscored = true`, to run the
//! tests that earn no points too (a grade skips them by default).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

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

/// The weights of the kit at `root`: the manifest's points, and the course's
/// settings.
pub fn read(root: &Path) -> Result<Weights, String> {
    let points = crate::manifest::read(root)?
        .into_iter()
        .map(|(number, step)| (number, step.points))
        .collect();
    let file = root.join("grading/weights.toml");
    let text =
        fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    parse(&text, &points)
}

/// Reads the course's settings over the manifest's `points` per step (the
/// suite's steps, each with its points).
pub fn parse(text: &str, points: &BTreeMap<u32, f64>) -> Result<Weights, String> {
    let mut found = points.clone();
    let mut changed = Vec::new();
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
            if !points.contains_key(&step) {
                return Err(at("the suite has no such step"));
            }
            if changed.contains(&step) {
                return Err(at("this step is weighted twice"));
            }
            changed.push(step);
            found.insert(step, value);
        } else {
            return Err(at(
                "unknown key; expected stepN, provided, predictions, tuning, held_back_visibility or run_unscored",
            ));
        }
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

    /// A manifest whose steps 1 and 2 have 3 and 4 points.
    fn manifest() -> BTreeMap<u32, f64> {
        BTreeMap::from([(1, 3.0), (2, 4.0)])
    }

    #[test]
    fn reads_steps_and_provided_parts() {
        let weights = parse(
            "# points\nstep1 = 10\nstep2 = 2.5 # half\n\nprovided = 1\n",
            &manifest(),
        )
        .unwrap();
        assert_eq!(weights.steps[&1], 10.0);
        assert_eq!(weights.steps[&2], 2.5);
        let as_shipped = parse("step2 = 0\n", &manifest()).unwrap();
        assert_eq!(as_shipped.steps, BTreeMap::from([(1, 3.0), (2, 0.0)]));
        assert_eq!(parse("", &manifest()).unwrap().steps, manifest());
        assert_eq!(weights.provided, 1.0);
        assert_eq!(weights.held_back_visibility, "after_published");
        assert_eq!(weights.predictions, 0.0);
        let bonus = parse("step1 = 1\npredictions = 5\n", &manifest()).unwrap();
        assert_eq!(bonus.predictions, 5.0);
        let hidden = parse(
            "step1 = 1\nheld_back_visibility = \"hidden\"\n",
            &manifest(),
        )
        .unwrap();
        assert_eq!(hidden.held_back_visibility, "hidden");
        assert!(parse("step1 = 1\nheld_back_visibility = \"later\"\n", &manifest()).is_err());
        assert!(parse("step1 = 1\nheld_back_visibility = visible\n", &manifest()).is_err());
        assert!(!weights.run_unscored);
        assert!(
            parse("step1 = 1\nrun_unscored = true\n", &manifest())
                .unwrap()
                .run_unscored
        );
        assert!(parse("step1 = 1\nrun_unscored = yes\n", &manifest()).is_err());
        assert!(
            parse(
                "step1 = 1\nrun_unscored = true\nrun_unscored = false\n",
                &manifest()
            )
            .is_err()
        );
    }

    #[test]
    fn refuses_unknown_and_negative_entries() {
        assert!(parse("step1 = 1\nstep3 = 1\n", &manifest()).is_err());
        assert!(parse("step1 = -1\n", &manifest()).is_err());
        assert!(parse("step1 = 1\nstep1 = 2\n", &manifest()).is_err());
        assert!(parse("bonus = 1\nstep1 = 1\n", &manifest()).is_err());
        assert!(parse("step1 = 1\npredictions = -5\n", &manifest()).is_err());
        assert!(parse("step1 = 1\npredictions = 1\npredictions = 2\n", &manifest()).is_err());
        assert_eq!(parse("step1 = 1\n", &manifest()).unwrap().tuning, 0.0);
        assert_eq!(
            parse("step1 = 1\ntuning = 5\n", &manifest())
                .unwrap()
                .tuning,
            5.0
        );
        assert!(parse("step1 = 1\ntuning = -1\n", &manifest()).is_err());
        assert!(parse("step1 = 1\ntuning = 1\ntuning = 2\n", &manifest()).is_err());
    }
}
