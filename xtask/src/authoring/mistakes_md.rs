//! MISTAKES.md's tables, written from the gallery: a mistake's row is its
//! `# Mistake:` and `# Caught by:` header lines, under its step's heading
//! (the handout's, from steps.toml),
//! in the gallery's order. The document's prose (its opening, the words
//! after a step's table) stays as it is written; a step's section is made
//! with its first mistake, so a new step needs nothing written here, and a
//! row can never name a test that does not catch its mistake
//! (`just check-mistakes` proves each one).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::authoring::mistake::{self, Mistake};

/// The document, at the top of the kit.
pub(crate) const FILE: &str = "MISTAKES.md";

const TABLE_HEAD: &str = "| mistake | caught by |\n| --- | --- |\n";

/// MISTAKES.md as the gallery and the handouts' headings make it.
pub(crate) fn write(root: &Path) -> Result<String, String> {
    let mut rows: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for path in mistake::gallery(root, None)? {
        let mistake = Mistake::read(&path)?;
        if let Some(step) = mistake.declared_step() {
            rows.entry(step).or_default().push(row(&mistake));
        }
    }
    // A step with code to write is headed as its handout heads it.
    let headings = crate::manifest::read(root)?
        .into_values()
        .map(|step| {
            let n = step.number;
            (n, format!("Step {n}: {} (TODO {n})", step.title))
        })
        .collect();
    let text = fs::read_to_string(root.join(FILE)).map_err(|e| format!("{FILE}: {e}"))?;
    tables(&text, &rows, &headings)
}

/// A mistake's row of its step's table.
fn row(mistake: &Mistake) -> String {
    let test = &mistake.caught_by;
    let caught = match &mistake.compiler_error {
        Some(error) => format!("the compiler, building `{test}`: `{error}`"),
        None if test.contains("::") => format!("`{test}`"),
        None => format!("the `{test}` tests"),
    };
    format!("| {} | {caught} |", mistake.title.replace('|', "\\|"))
}

/// `text` with each step's table made of `rows`, under the heading
/// `headings` gives that step; a step with rows and no section gets one
/// in step order.
fn tables(
    text: &str,
    rows: &BTreeMap<u32, Vec<String>>,
    headings: &BTreeMap<u32, String>,
) -> Result<String, String> {
    let section = |step: u32| -> Result<String, String> {
        let heading = headings.get(&step).ok_or_else(|| {
            format!("mistakes/ has mistakes of step {step}, which no handout has")
        })?;
        let mut out = format!("## {heading}\n\n{TABLE_HEAD}");
        for row in &rows[&step] {
            out.push_str(row);
            out.push('\n');
        }
        Ok(out)
    };
    let mut pending: Vec<u32> = rows.keys().copied().collect();
    let mut out = String::new();
    // Right after a table: the old table's lines and the blank lines
    // around them are dropped until the section's prose goes on.
    let mut after_table = false;
    for (number, line) in text.lines().enumerate() {
        let step = line.strip_prefix("## ").and_then(|heading| {
            crate::lab::step_sections(&format!("## {heading}"))
                .into_keys()
                .next()
        });
        if let Some(step) = step {
            if after_table {
                out.push('\n');
            }
            if !rows.contains_key(&step) {
                return Err(format!(
                    "{FILE}:{}: a section for step {step}, which has no mistake in mistakes/",
                    number + 1
                ));
            }
            // Sections of new steps before this one come first.
            while let Some(&next) = pending.first().filter(|&&next| next < step) {
                out.push_str(&section(next)?);
                out.push('\n');
                pending.remove(0);
            }
            pending.retain(|&other| other != step);
            out.push_str(&section(step)?);
            after_table = true;
            continue;
        }
        if after_table {
            if line.trim().is_empty() || line.starts_with('|') {
                continue;
            }
            out.push('\n');
            after_table = false;
        }
        out.push_str(line);
        out.push('\n');
    }
    for step in pending {
        out.push('\n');
        out.push_str(&section(step)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headings() -> BTreeMap<u32, String> {
        [
            (1, "Step 1: one (TODO 1)"),
            (2, "Step 2: two (TODO 2)"),
            (3, "Step 3: three (TODO 3)"),
        ]
        .into_iter()
        .map(|(n, heading)| (n, heading.to_owned()))
        .collect()
    }

    #[test]
    fn the_tables_are_the_gallerys_and_the_prose_stays() {
        let text = "# Mistakes\n\nOpening.\n\n## Step 1: old title\n\n| mistake | caught by |\n| --- | --- |\n| gone | `x` |\n\nIn words: one.\n\n## Step 3: three (TODO 3)\n\n| mistake | caught by |\n| --- | --- |\n| old | `y` |\n";
        let rows: BTreeMap<u32, Vec<String>> = [
            (1, vec!["| a | `step01_a::t` |".to_owned()]),
            (2, vec!["| b | the `step02_b` tests |".to_owned()]),
            (
                3,
                vec![
                    "| c | `step03_c::t` |".to_owned(),
                    "| d | `step03_c::u` |".to_owned(),
                ],
            ),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            tables(text, &rows, &headings()).unwrap(),
            "# Mistakes\n\nOpening.\n\n## Step 1: one (TODO 1)\n\n| mistake | caught by |\n| --- | --- |\n| a | `step01_a::t` |\n\nIn words: one.\n\n## Step 2: two (TODO 2)\n\n| mistake | caught by |\n| --- | --- |\n| b | the `step02_b` tests |\n\n## Step 3: three (TODO 3)\n\n| mistake | caught by |\n| --- | --- |\n| c | `step03_c::t` |\n| d | `step03_c::u` |\n"
        );
        // A new last step gets its section at the end.
        let mut more = rows.clone();
        more.insert(4, vec!["| e | `step04_e::t` |".to_owned()]);
        let mut four = headings();
        four.insert(4, "Step 4: four (TODO 4)".to_owned());
        assert!(
            tables(text, &more, &four)
                .unwrap()
                .ends_with("| d | `step03_c::u` |\n\n## Step 4: four (TODO 4)\n\n| mistake | caught by |\n| --- | --- |\n| e | `step04_e::t` |\n")
        );
        // A section whose step has no mistake left, and a step no handout has.
        let only_one: BTreeMap<u32, Vec<String>> = [(1, rows[&1].clone())].into_iter().collect();
        assert!(
            tables(text, &only_one, &headings())
                .unwrap_err()
                .contains("MISTAKES.md:13: a section for step 3")
        );
        assert!(
            tables(text, &more, &headings())
                .unwrap_err()
                .contains("step 4, which no handout has")
        );
    }

    /// The kit's MISTAKES.md is what `just sync-starter` writes from the
    /// gallery: a row is added, changed or removed with its mistake.
    #[test]
    fn the_kits_mistakes_md_is_the_gallerys() {
        let root = crate::root();
        let written = write(&root).unwrap();
        let committed = fs::read_to_string(root.join(FILE)).unwrap();
        assert!(
            written == committed,
            "{FILE} is out of date with mistakes/: run `just sync-starter` and commit it"
        );
    }
}
