//! The demo's report as one self-contained HTML page: every scenario's
//! timeline as inline SVG, with no script, no stylesheet or font from
//! elsewhere and no network, so it opens the same from a file on any
//! machine.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::{fs, io};

use crate::chart::{scenario, svg};
use crate::report::ScenarioReport;

/// What the page shows for one scenario.
#[derive(Debug, Clone, Copy)]
pub enum Section<'a> {
    /// A scenario that ran: its story and its timeline.
    Ran(&'a ScenarioReport),
    /// A chart drawn elsewhere (the fleet's), with the sentence under it.
    Picture {
        /// The chart, an `<svg>` element.
        svg: &'a str,
        /// What it shows.
        caption: &'a str,
    },
    /// A scenario that stopped (the starter's unfinished code): why.
    Stopped {
        /// The scenario's heading.
        heading: &'a str,
        /// Why it stopped.
        why: &'a str,
    },
}

/// The whole page: a heading naming the crate that ran, the settings, then
/// one section per scenario.
pub fn page(kit: &str, settings: &str, sections: &[Section<'_>]) -> String {
    let mut html = String::new();
    html.push_str(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Retry breaker, live: the demo's timelines</title>
<style>
body { font-family: sans-serif; color: #212121; margin: 16px 24px; }
h1 { font-size: 20px; margin: 0 0 4px; }
p { max-width: 960px; margin: 4px 0 8px; font-size: 13px; line-height: 1.4; }
section { margin: 22px 0 0; }
p.story { color: #37474f; border-left: 6px solid #cfd8dc; padding-left: 10px; }
p.stopped { color: #c62828; }
</style>
</head>
<body>
"#,
    );
    let _ = writeln!(
        html,
        "<h1>Retry breaker, live: a checkout and a fake payment gateway, running {}</h1>",
        svg::escape(kit)
    );
    let _ = writeln!(html, "<p>Settings: {}.</p>", svg::escape(settings));
    html.push_str(
        "<p>One timeline per scenario. The top band is the breaker's state over time; the \
         gateway row has a tick for every request that reached it; below, one row per order \
         with each attempt where its outcome became known (a grey line back to where it \
         started, dashes for a backoff sleep) and what became of the order. Rest the pointer \
         on a mark for its details.</p>\n",
    );
    for section in sections {
        html.push_str("<section>\n");
        match section {
            Section::Ran(report) => {
                // The chart carries the heading; the story reads as its caption.
                html.push_str(&svg::render(&scenario::chart(report), false));
                let _ = writeln!(
                    html,
                    "<p class=\"story\">{}</p>",
                    svg::escape(&report.story.replace('\n', " "))
                );
            }
            Section::Picture { svg, caption } => {
                html.push_str(svg);
                let _ = writeln!(html, "<p class=\"story\">{}</p>", svg::escape(caption));
            }
            Section::Stopped { heading, why } => {
                let _ = writeln!(
                    html,
                    "<p class=\"stopped\"><b>{}</b>: stopped, {}</p>",
                    svg::escape(heading),
                    svg::escape(why)
                );
            }
        }
        html.push_str("</section>\n");
    }
    html.push_str("</body>\n</html>\n");
    html
}

/// Where `just demo` writes its report: `demo-report.html` in the cargo
/// target directory the demo was built into (`target/` unless
/// `CARGO_TARGET_DIR` says otherwise).
pub fn default_path() -> io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    // The binary is `<target>/<profile>/retry-breaker-demo`.
    let target = exe
        .parent()
        .and_then(Path::parent)
        .ok_or_else(|| io::Error::other("the demo binary is not inside a target directory"))?;
    Ok(target.join("demo-report.html"))
}

/// Writes `html` to `path`, creating its folder if need be.
///
/// # Errors
///
/// If the file cannot be written.
pub fn write(path: &Path, html: &str) -> io::Result<()> {
    if let Some(folder) = path.parent() {
        fs::create_dir_all(folder)?;
    }
    fs::write(path, html)
}

/// `path` relative to the current directory when it is inside it, which is
/// shorter to read and to paste.
pub fn shown(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|here| path.strip_prefix(here).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}
