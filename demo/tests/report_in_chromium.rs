//! `just check-report`: the demo's HTML report, opened in headless
//! Chromium, shows one timeline per scenario and the fleet's chart.
//!
//! It runs every scenario as `just demo` does, writes the report, takes a
//! screenshot and reads its pixels: the page must not be blank, must show
//! the breaker's state colours, and must have one chart per scenario,
//! counted by the bar each chart draws down its left edge in a colour
//! nothing else uses. The screenshot stays in
//! `target/demo-report-check/report.png` for a person to look at.
//!
//! It is ignored by a plain `cargo test`, because it needs a browser that a
//! student's machine may not have; CI installs Chromium and runs it. Run by
//! hand without Chromium, it fails and says how to install it, rather than
//! passing without having looked.

use std::fs::{self, File};
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use retry_breaker_demo::chart::{scenario, svg};
use retry_breaker_demo::html::{self, Section};
use retry_breaker_demo::scenarios::{Scenario, Settings};
use tokio_util::sync::CancellationToken;

/// The browsers looked for, in order, after `$CHROMIUM`.
const BROWSERS: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];
const WIDTH: u32 = 1040;

#[tokio::test(flavor = "current_thread")]
#[ignore = "needs Chromium: run by `just check-report`, which CI does"]
async fn the_report_renders_one_timeline_per_scenario_in_chromium() {
    let browser = find_browser().unwrap_or_else(|| {
        panic!(
            "this check needs Chromium, and none was found (looked for $CHROMIUM, then {}).\n\
             On Debian or Ubuntu: `sudo apt-get update && sudo apt-get install -y chromium`;\n\
             or set CHROMIUM to a Chromium or Chrome binary.",
            BROWSERS.join(", ")
        )
    });

    let mut reports = Vec::new();
    for scenario in Scenario::ALL {
        let run = scenario.run(Settings::demo(), CancellationToken::new());
        let report = tokio::time::timeout(Duration::from_secs(30), run)
            .await
            .unwrap_or_else(|_| panic!("{} did not finish in 30s", scenario.title()))
            .expect("the scenario could start its gateway");
        reports.push(report);
    }
    let fleet = fleet_chart().await;
    let sections: Vec<Section<'_>> = reports
        .iter()
        .map(Section::Ran)
        .chain(
            fleet
                .iter()
                .map(|(svg, caption, _)| Section::Picture { svg, caption }),
        )
        .collect();
    // Tall enough for every chart and its story, so one screenshot holds all.
    let height = 240
        + reports
            .iter()
            .map(|report| svg::height(&scenario::chart(report)) as u32 + 90)
            .sum::<u32>()
        + fleet.as_ref().map_or(0, |(_, _, height)| height + 90);
    let charts = Scenario::ALL.len() + usize::from(fleet.is_some());
    let settings = Settings::demo().to_string();
    let page = html::page("the reference solution", &settings, &sections);

    let folder = target_dir().join("demo-report-check");
    fs::create_dir_all(&folder).expect("a folder under target/");
    let page_path = folder.join("report.html");
    let png_path = folder.join("report.png");
    fs::write(&page_path, page).expect("the report is written");
    let _ = fs::remove_file(&png_path);
    screenshot(&browser, &page_path, &png_path, height);

    let image = Image::read(&png_path);
    println!(
        "screenshot of the report kept at {} ({}x{})",
        png_path.display(),
        image.width,
        image.height
    );
    let non_white = image.share(|pixel| pixel != [255, 255, 255]);
    assert!(
        non_white > 0.05,
        "the screenshot is (nearly) blank: {:.1}% of it is not white",
        non_white * 100.0
    );
    for (state, colour) in [("CLOSED", [0xcf, 0xe8, 0xcf]), ("OPEN", [0xf4, 0xc7, 0xc3])] {
        assert!(
            image.share(|pixel| close(pixel, colour)) > 0.001,
            "no {state} band is visible in the screenshot"
        );
    }
    assert_eq!(
        image.timelines(),
        charts,
        "one timeline per scenario, and the fleet's chart (counted by the bars down their left \
         edges); see {}",
        png_path.display()
    );
}

/// The fleet's chart as `just demo` draws it after the scenarios: the
/// SVG, its caption and its height. The fleet runs on the reference
/// solution, so a build on the starter has none.
async fn fleet_chart() -> Option<(String, String, u32)> {
    #[cfg(not(feature = "starter"))]
    {
        use retry_breaker_demo::{chart, fleet};
        let run = fleet::three_nodes(Settings::demo(), CancellationToken::new());
        let report = tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .unwrap_or_else(|_| panic!("the fleet did not finish in 60s"))
            .expect("the fleet could start its gateway");
        let height = chart::fleet::height(&report) as u32;
        Some((chart::fleet::render(&report), report.caption(), height))
    }
    #[cfg(feature = "starter")]
    None
}

fn find_browser() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    BROWSERS.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|folder| folder.join(name))
            .find(|candidate| candidate.is_file())
    })
}

/// The cargo target directory this test was built into: the test binary is
/// `<target>/<profile>/deps/<name>`.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .nth(3)
        .expect("the test binary is inside a target directory")
        .to_path_buf()
}

/// Has headless Chromium write a screenshot of `page` to `png`.
fn screenshot(browser: &Path, page: &Path, png: &Path, height: u32) {
    let profile = target_dir().join("demo-report-check/chromium-profile");
    let _ = fs::remove_dir_all(&profile);
    let page = fs::canonicalize(page).expect("the report's full path");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            // Without these, Chromium waits for the network on a machine
            // that has none.
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("--window-size={WIDTH},{height}"))
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("could not start {}: {e}", browser.display()));
    let started = Instant::now();
    loop {
        match child.try_wait().expect("Chromium's status") {
            Some(_) => break,
            None if started.elapsed() > Duration::from_secs(90) => {
                let _ = child.kill();
                panic!("Chromium took more than 90s to take a screenshot");
            }
            None => std::thread::sleep(Duration::from_millis(100)),
        }
    }
    assert!(
        png.is_file(),
        "Chromium wrote no screenshot to {}",
        png.display()
    );
}

/// A decoded screenshot, as RGB pixels.
struct Image {
    width: usize,
    height: usize,
    rgb: Vec<[u8; 3]>,
}

impl Image {
    fn read(path: &Path) -> Image {
        let file = BufReader::new(File::open(path).expect("the screenshot opens"));
        let mut decoder = png::Decoder::new(file);
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().expect("a PNG");
        let mut buffer = vec![0; reader.output_buffer_size().expect("a sane size")];
        let info = reader.next_frame(&mut buffer).expect("one frame");
        let channels = info.color_type.samples();
        let rgb = buffer[..info.buffer_size()]
            .chunks(channels)
            .map(|pixel| match channels {
                1 | 2 => [pixel[0]; 3],
                _ => [pixel[0], pixel[1], pixel[2]],
            })
            .collect();
        Image {
            width: info.width as usize,
            height: info.height as usize,
            rgb,
        }
    }

    fn share(&self, wanted: impl Fn([u8; 3]) -> bool) -> f64 {
        let hits = self.rgb.iter().filter(|pixel| wanted(**pixel)).count();
        hits as f64 / self.rgb.len().max(1) as f64
    }

    /// The number of charts: the most separate vertical runs, at least
    /// 40 px tall, of the spine colour found in any one column near the
    /// left edge.
    fn timelines(&self) -> usize {
        (0..self.width.min(120))
            .map(|x| {
                let mut runs = 0;
                let mut length = 0;
                for y in 0..=self.height {
                    let on = y < self.height && close(self.rgb[y * self.width + x], svg::SPINE_RGB);
                    if on {
                        length += 1;
                    } else {
                        if length >= 40 {
                            runs += 1;
                        }
                        length = 0;
                    }
                }
                runs
            })
            .max()
            .unwrap_or(0)
    }
}

/// Whether two colours match, allowing for the browser's rounding.
fn close(pixel: [u8; 3], colour: [u8; 3]) -> bool {
    pixel.iter().zip(colour).all(|(a, b)| a.abs_diff(b) <= 6)
}
