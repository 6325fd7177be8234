//! `cargo xtask progress`: the student's scoreboard.

use crate::lab::{steps, syllabus};
use crate::root;
use crate::students::scoreboard::{self, Style};
use crate::suite::{self, Build};

pub(crate) fn progress() -> Result<(), String> {
    let root = root();
    let style = Style::detect();
    println!("Running the suite against your starter...");
    let results = suite::run(&root, None, &[], None, Build::Shown, &[])?;
    let syllabus = syllabus()?;
    let board = scoreboard::board(&results, &steps()?, &syllabus.controls).needing(&syllabus.needs);
    let src = root.join("starter/src");
    let start = scoreboard::start(&results, &board, &syllabus, |marker| {
        scoreboard::find_todos(&src, marker)
    });
    let hint = match &start {
        scoreboard::Start::Step { number, .. } => {
            format!(". Run it alone with `just test {number}`.")
        }
        _ => String::new(),
    };
    println!();
    for line in scoreboard::table(&board, style) {
        println!("{line}");
    }
    println!();
    for line in scoreboard::start_lines(&start, &hint, usize::MAX, style) {
        println!("{line}");
    }
    Ok(())
}
