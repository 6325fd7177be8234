//! `cargo xtask autograder DIR`: a Gradescope autograder, and
//! `cargo xtask check-autograder`: proof that it grades as Gradescope would
//! run it.
//!
//! Gradescope unzips `autograder.zip` into `/autograder/source`, runs its
//! `setup.sh` once when it builds the image, then, for every submission,
//! copies `run_autograder` to `/autograder/run_autograder` and runs it with
//! the student's files in `/autograder/submission`, expecting
//! `/autograder/results/results.json`. The zip holds those two scripts, the
//! `toolchain.sh` they share, and the grading sources: the student edition
//! (the suite, the weights, the tools; [`crate::course::export::export`] proves it
//! holds no answer) plus `grading/held-back/`, which the student edition
//! leaves out. Never `solution/` or `mistakes/`.
//!
//! Both scripts take the Gradescope root from `AUTOGRADER_ROOT` (default
//! `/autograder`), so `check-autograder` runs them in a scratch folder laid
//! out the same way, and they honour `CARGO_TARGET_DIR`, so the check shares
//! one target folder from run to run.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Instant;

use crate::scratch::copy_tree;
use crate::{course::export, root};

/// The Rust release the autograder installs and grades with; the student
/// edition's workflow (`student/.github/workflows/grade.yml`) pins the same
/// one, so a student's run on GitHub and the trusted grade compile alike.
pub(crate) const TOOLCHAIN: &str = "1.95.0";

/// Sourced by both scripts: which cargo to use, so that a grade never runs
/// on a toolchain setup.sh did not check.
const TOOLCHAIN_SH: &str = r#"# The Rust toolchain this autograder is pinned to, shared by setup.sh and
# run_autograder (sourced, not run).
PINNED_RUST="@TOOLCHAIN@"
# As root, setup.sh installs Rust under /usr/local (as the official rust
# image does), where `nobody` can run it too: on a machine that gives no
# mount namespace, a grade builds the student's crate as `nobody`, who
# cannot read the held-back tests.
if [ "$(id -u)" = 0 ] && [ -z "${CARGO_HOME:-}" ] && [ -x /usr/local/cargo/bin/cargo ]; then
    export CARGO_HOME=/usr/local/cargo RUSTUP_HOME="${RUSTUP_HOME:-/usr/local/rustup}"
fi
# rustup installs into $CARGO_HOME/bin, which a fresh shell may not have on PATH.
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

# The version of the cargo on PATH ("1.95.0"), or nothing.
cargo_version() {
    cargo --version 2>/dev/null | awk '{ print $2 }'
}

# Succeeds, with the pinned cargo chosen, if it is installed: the cargo on
# PATH if it is that version, else rustup's toolchain of that name.
# RUSTUP_AUTO_INSTALL=0: merely asking must never start a download.
use_pinned_rust() {
    if [ "$(cargo_version)" = "$PINNED_RUST" ]; then
        return 0
    fi
    if command -v rustup >/dev/null 2>&1 \
        && [ "$(RUSTUP_AUTO_INSTALL=0 RUSTUP_TOOLCHAIN="$PINNED_RUST" cargo_version)" = "$PINNED_RUST" ]; then
        export RUSTUP_TOOLCHAIN="$PINNED_RUST"
        return 0
    fi
    return 1
}
"#;

const SETUP_SH: &str = r#"#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder's image. It
# installs the pinned Rust if it is missing, then downloads every crate and
# builds the grader, the suite's dependencies and the untouched starter, so
# that grading a submission needs no network and compiles only the
# student's crate and the suite.
#
# AUTOGRADER_ROOT (default /autograder) is where Gradescope's folders are;
# CARGO_TARGET_DIR, if set, is honoured. SETUP_CHECK_ONLY=1 only says whether
# the pinned toolchain is installed, and installs nothing.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
. "$SOURCE/toolchain.sh"

found="$(cargo_version)"
if use_pinned_rust; then
    if [ "$found" != "$PINNED_RUST" ]; then
        echo "setup: the cargo on PATH is version ${found:-none}, not the pinned $PINNED_RUST; rustup has $PINNED_RUST installed, and the grader uses it"
    fi
    echo "setup: Rust $PINNED_RUST is installed ($(cargo --version)); nothing to download"
else
    if [ -n "$found" ]; then
        echo "setup: the cargo on PATH is version $found, but this autograder is pinned to Rust $PINNED_RUST"
    else
        echo "setup: no cargo on PATH; this autograder is pinned to Rust $PINNED_RUST"
    fi
    if [ "${SETUP_CHECK_ONLY:-0}" = 1 ]; then
        echo "setup: SETUP_CHECK_ONLY=1, so nothing is installed" >&2
        exit 1
    fi
    echo "setup: installing Rust $PINNED_RUST with rustup (any other toolchain is left as it is)"
    # rustc links with the system's cc; Gradescope's Ubuntu images may lack it.
    if ! command -v cc >/dev/null 2>&1 || ! command -v curl >/dev/null 2>&1; then
        if command -v apt-get >/dev/null 2>&1; then
            apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq build-essential curl ca-certificates
        fi
    fi
    if [ "$(id -u)" = 0 ]; then
        # Where `nobody` can run it (toolchain.sh says why).
        export CARGO_HOME=/usr/local/cargo RUSTUP_HOME=/usr/local/rustup
        export PATH="$CARGO_HOME/bin:$PATH"
        curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs \
            | sh -s -- -y --no-modify-path --profile minimal --default-toolchain "$PINNED_RUST"
    elif command -v rustup >/dev/null 2>&1; then
        rustup toolchain install "$PINNED_RUST" --profile minimal
    else
        curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs \
            | sh -s -- -y --profile minimal --default-toolchain "$PINNED_RUST"
    fi
    if ! use_pinned_rust; then
        echo "setup: Rust $PINNED_RUST is still not usable after installing it" >&2
        exit 1
    fi
    echo "setup: using $(cargo --version)"
fi
if [ "${SETUP_CHECK_ONLY:-0}" = 1 ]; then
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null 2>&1 \
    && ! runuser -u nobody -- test -x "$(rustc --print sysroot)/bin/rustc" 2>/dev/null; then
    echo "setup: \`nobody\` cannot run this Rust (a folder above it is closed to others): where the machine gives no mount namespace, a grade's build runs as root, kept from the held-back tests by the source check alone; Rust installed by this script as root, under /usr/local, closes that"
fi

cd "$SOURCE"
echo "setup: downloading the crates"
cargo fetch --locked
echo "setup: building the grader"
cargo build --locked --package xtask
# Grading the untouched starter once builds everything a grade needs but
# the student's crate and the suite, in the folders a grade builds in.
echo "setup: grading the untouched starter once, to build the suite's dependencies"
prebuild="$(mktemp -d)"
LAB_STUDENT=setup CARGO_NET_OFFLINE=true cargo xtask grade --out "$prebuild"
rm -rf "$prebuild"
echo "setup: done; a grade now runs offline"
"#;

const RUN_AUTOGRADER: &str = r#"#!/usr/bin/env bash
# Gradescope runs this for every submission, as /autograder/run_autograder:
# it grades the student repository in $ROOT/submission with the suite and
# the held-back tests in $ROOT/source, seeded by the student's id from
# $ROOT/submission_metadata.json, and writes $ROOT/results/results.json.
# A crate that does not build is a grade too (0, with the compiler's first
# error); only a grader that cannot run at all makes this exit non-zero, and
# then results.json still says what went wrong.
#
# AUTOGRADER_ROOT (default /autograder) is where Gradescope's folders are;
# CARGO_TARGET_DIR, if set, is honoured.
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
RESULTS="$ROOT/results"
mkdir -p "$RESULTS"
rm -f "$RESULTS/results.json"

# A results.json with score 0 and the reason, so the student and the
# instructor see why instead of an empty grade.
give_up() {
    echo "run_autograder: $1" >&2
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import json, sys; json.dump({"score": 0, "output": sys.argv[1], "tests": []}, open(sys.argv[2], "w"), indent=2)' \
            "The autograder could not grade this submission: $1. Please tell your instructor." "$RESULTS/results.json"
    else
        printf '{"score": 0, "output": "The autograder could not grade this submission. Please tell your instructor.", "tests": []}\n' \
            >"$RESULTS/results.json"
    fi
    exit 1
}

[ -f "$SOURCE/toolchain.sh" ] || give_up "$SOURCE/toolchain.sh is missing"
. "$SOURCE/toolchain.sh"
found="$(cargo_version)"
use_pinned_rust || give_up "Rust $PINNED_RUST is not installed (cargo on PATH: ${found:-none}); setup.sh installs it"
# setup.sh downloaded every crate and built the grader: no network needed.
export CARGO_NET_OFFLINE=true
cd "$SOURCE" || give_up "cannot enter $SOURCE"

cargo xtask grade "$ROOT/submission" --out "$RESULTS" --metadata "$ROOT/submission_metadata.json"
status=$?
[ -s "$RESULTS/results.json" ] || give_up "the grader stopped with status $status and wrote no results.json"
if [ "$status" != 0 ]; then
    echo "run_autograder: the grader exited with status $status (the crate does not build); results.json has the grade"
fi
exit 0
"#;

/// Writes the zip of `dir` (everything but the zip itself and any `.git`
/// or `target` at the top), with each file's mode kept, so the scripts stay
/// executable, and a fixed date, so the same sources make the same bytes.
/// Python's zipfile, because Gradescope's images and a fresh Debian have
/// python3 but not necessarily `zip`.
const ZIP_PY: &str = r#"
import os, sys, zipfile
src, out = sys.argv[1], sys.argv[2]
skip_top = {".git", "target", os.path.basename(out)}
paths = []
for dirpath, dirnames, filenames in os.walk(src):
    top = os.path.samefile(dirpath, src)
    dirnames[:] = sorted(d for d in dirnames if not (top and d in skip_top))
    for name in sorted(filenames):
        if not (top and name in skip_top):
            paths.append(os.path.join(dirpath, name))
with zipfile.ZipFile(out + ".partial", "w", zipfile.ZIP_DEFLATED) as archive:
    for path in paths:
        info = zipfile.ZipInfo(os.path.relpath(path, src), date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = (0o100000 | (os.stat(path).st_mode & 0o777)) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        with open(path, "rb") as file:
            archive.writestr(info, file.read())
os.replace(out + ".partial", out)
print(len(paths))
"#;

/// Unzips as Gradescope does, modes included (Python's `extractall` drops
/// them), and lists what a valid autograder must and must not hold.
const UNZIP_PY: &str = r#"
import os, sys, zipfile
archive, to = zipfile.ZipFile(sys.argv[1]), sys.argv[2]
names = archive.namelist()
problems = []
for required in ("setup.sh", "run_autograder", "toolchain.sh"):
    if required not in names:
        problems.append(required + " is not at the zip's root")
for script in ("setup.sh", "run_autograder"):
    if script in names and not (archive.getinfo(script).external_attr >> 16) & 0o100:
        problems.append(script + " is not executable")
for name in names:
    if name.split("/")[0] in ("solution", "mistakes", ".git", "target"):
        problems.append(name + " must not be in the autograder")
if not any(n.startswith("grading/held-back/") and n.endswith(".rs") for n in names):
    problems.append("no held-back test (grading/held-back/*.rs)")
if problems:
    sys.exit("\n".join(problems))
for info in archive.infolist():
    path = archive.extract(info, to)
    mode = (info.external_attr >> 16) & 0o777
    if mode:
        os.chmod(path, mode)
print(len(names))
"#;

/// `score max_score ran` of a grade: the total and the steps' points from
/// results.json, and how many of the suite's tests ran, from junit.xml (a
/// crate that does not build scores 0 too, but runs none), each read with
/// Python's own parsers.
const SCORE_PY: &str = r#"
import json, sys, xml.etree.ElementTree as ET
results = json.load(open(sys.argv[1]))
tests = results["tests"]
for test in tests:
    assert {"name", "score", "max_score", "output"} <= set(test), test
suites = ET.parse(sys.argv[2]).getroot()
ran = sum(len(suite.findall("testcase")) for suite in suites if suite.get("name", "").startswith("step"))
print(results["score"], sum(test["max_score"] for test in tests), ran)
"#;

pub(crate) fn autograder(args: &[String]) -> Result<(), String> {
    let [dir] = args else {
        return Err("usage: cargo xtask autograder DIR".to_owned());
    };
    let dir = Path::new(dir);
    let files = build(dir)?;
    println!(
        "Gradescope autograder written to {} ({files} files): upload {}",
        dir.display(),
        dir.join("autograder.zip").display()
    );
    Ok(())
}

/// Writes the autograder's files into `dir` (new or empty) and zips them
/// into `dir/autograder.zip`; returns how many files the zip holds.
pub(crate) fn build(dir: &Path) -> Result<usize, String> {
    let root = root();
    export::export(dir)?;
    // The autograder is a folder to zip, not a repository.
    fs::remove_dir_all(dir.join(".git")).map_err(|e| format!(".git: {e}"))?;
    let held_back = root.join("grading/held-back");
    let to = dir.join("grading/held-back");
    fs::create_dir_all(&to).map_err(|e| e.to_string())?;
    for entry in fs::read_dir(&held_back).map_err(|e| format!("grading/held-back: {e}"))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|ext| ext == "rs") {
            copy_tree(&path, &to.join(path.file_name().expect("a file")))?;
        }
    }
    for (name, text, executable) in [
        ("toolchain.sh", TOOLCHAIN_SH, false),
        ("setup.sh", SETUP_SH, true),
        ("run_autograder", RUN_AUTOGRADER, true),
    ] {
        write_script(
            &dir.join(name),
            &text.replace("@TOOLCHAIN@", TOOLCHAIN),
            executable,
        )?;
    }
    for kit_only in ["solution", "mistakes"] {
        if dir.join(kit_only).exists() {
            return Err(format!("{kit_only}/ must not be in the autograder"));
        }
    }
    let output = python(&[
        "-c",
        ZIP_PY,
        &dir.display().to_string(),
        &dir.join("autograder.zip").display().to_string(),
    ])?;
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .map_err(|_| "the zip script printed no count".to_owned())
}

fn write_script(path: &Path, text: &str, executable: bool) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt as _;
    fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mode = if executable { 0o755 } else { 0o644 };
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).map_err(|e| e.to_string())
}

fn python(args: &[&str]) -> Result<Output, String> {
    let output = Command::new("python3")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run python3 (the autograder is zipped with it): {e}"))?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(format!(
            "python3 failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// The check: build the autograder, lay out a scratch Gradescope root, run
/// setup.sh (which must find the pinned toolchain already installed), then
/// run_autograder on the untouched starter (0) and on the solution's files
/// (full marks).
pub(crate) fn check_autograder(args: &[String]) -> Result<(), String> {
    if !args.is_empty() {
        return Err("usage: cargo xtask check-autograder".to_owned());
    }
    let started = Instant::now();
    let root = root();
    let base = root.join("target/check-autograder");
    // Kept from run to run, like any target folder: only what changed builds.
    let target = base.join("target");
    for stale in ["autograder", "gradescope", "fake-cargo"] {
        let stale = base.join(stale);
        if stale.exists() {
            fs::remove_dir_all(&stale).map_err(|e| e.to_string())?;
        }
    }

    println!("== building the autograder");
    let built = base.join("autograder");
    build(&built)?;
    let zip = built.join("autograder.zip");

    println!("== unzipping it into a scratch Gradescope root");
    let gradescope = base.join("gradescope");
    let source = gradescope.join("source");
    let listed = python(&[
        "-c",
        UNZIP_PY,
        &zip.display().to_string(),
        &source.display().to_string(),
    ])
    .map_err(|e| format!("{} is not a valid autograder:\n{e}", zip.display()))?;
    println!(
        "  {} files; setup.sh and run_autograder at the root, held-back tests in, no solution/ or mistakes/",
        String::from_utf8_lossy(&listed.stdout).trim()
    );
    // Gradescope runs its own copy of run_autograder, outside source/.
    fs::copy(
        source.join("run_autograder"),
        gradescope.join("run_autograder"),
    )
    .map_err(|e| e.to_string())?;
    fs::create_dir_all(gradescope.join("results")).map_err(|e| e.to_string())?;
    fs::write(
        gradescope.join("submission_metadata.json"),
        "{\"id\": 1, \"created_at\": \"2026-01-01T00:00:00Z\", \"assignment\": {\"title\": \"retry-breaker lab\"}, \"users\": [{\"id\": \"12345\", \"name\": \"A Student\", \"email\": \"student@example.invalid\"}]}\n",
    )
    .map_err(|e| e.to_string())?;
    let submission = gradescope.join("submission");
    export::export_track(&submission, export::Track::Core)?;

    println!("== setup.sh on a machine whose cargo is another version says so");
    let fake = base.join("fake-cargo");
    fs::create_dir_all(fake.join("bin")).map_err(|e| e.to_string())?;
    write_script(
        &fake.join("bin/cargo"),
        "#!/bin/sh\necho 'cargo 1.0.0 (00000000 2015-05-15)'\n",
        true,
    )?;
    let mut setup = script(&gradescope, &source.join("setup.sh"), &target);
    setup
        .env("CARGO_HOME", &fake)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("SETUP_CHECK_ONLY", "1");
    let mismatch = setup
        .output()
        .map_err(|e| format!("cannot run setup.sh: {e}"))?;
    let said = String::from_utf8_lossy(&mismatch.stdout);
    let expected = format!(
        "the cargo on PATH is version 1.0.0, but this autograder is pinned to Rust {TOOLCHAIN}"
    );
    if mismatch.status.success() || !said.contains(&expected) {
        return Err(format!(
            "setup.sh with cargo 1.0.0 should fail saying \"{expected}\"; it said:\n{said}{}",
            String::from_utf8_lossy(&mismatch.stderr)
        ));
    }
    println!("  {}", said.lines().next().unwrap_or_default());

    println!("== setup.sh finds Rust {TOOLCHAIN} installed and prebuilds the grader");
    let setup_started = Instant::now();
    let output = run(&mut script(&gradescope, &source.join("setup.sh"), &target))?;
    let said = String::from_utf8_lossy(&output.stdout);
    if !said.contains("nothing to download") {
        return Err(format!(
            "setup.sh did not find Rust {TOOLCHAIN} on this machine (run `rustc --version`; \
             the pin is TOOLCHAIN in xtask/src/course/autograder.rs):\n{said}"
        ));
    }
    println!(
        "  {} ({:.0?})",
        said.lines().next().unwrap_or_default(),
        setup_started.elapsed()
    );
    // As root, setup.sh warns when `nobody` cannot run the Rust it uses:
    // a grade's build could not run as `nobody` without a namespace.
    if let Some(runs) = crate::grading::confine::nobody_runs_rustc() {
        let warned = said
            .lines()
            .find(|line| line.contains("`nobody` cannot run this Rust"));
        match (runs, warned) {
            (false, Some(line)) => println!("  {line}"),
            (false, None) => {
                return Err(format!(
                    "`nobody` cannot run this machine's rustc, but setup.sh did not warn:\n{said}"
                ));
            }
            (true, Some(line)) => {
                return Err(format!(
                    "`nobody` runs this machine's rustc, but setup.sh warned: {line}"
                ));
            }
            (true, None) => {
                println!("  `nobody` can run this Rust, as a build without a namespace needs")
            }
        }
    }

    let grade = |label: &str| -> Result<(f64, f64), String> {
        let graded = Instant::now();
        let output = run(&mut script(
            &gradescope,
            &gradescope.join("run_autograder"),
            &target,
        ))?;
        let results = gradescope.join("results/results.json");
        let junit = gradescope.join("results/junit.xml");
        let read = python(&[
            "-c",
            SCORE_PY,
            &results.display().to_string(),
            &junit.display().to_string(),
        ])
        .map_err(|e| format!("{}: {e}", results.display()))?;
        let read = String::from_utf8_lossy(&read.stdout).into_owned();
        let numbers: Vec<f64> = read
            .split_whitespace()
            .filter_map(|n| n.parse().ok())
            .collect();
        let [score, max, ran] = numbers[..] else {
            return Err(format!(
                "cannot read the score of {}: {read}",
                results.display()
            ));
        };
        if ran == 0.0 {
            return Err(format!(
                "no test of the suite ran for {label} (see {}):\n{}",
                results.display(),
                String::from_utf8_lossy(&output.stdout)
            ));
        }
        println!(
            "  {label}: {score} / {max}, {ran} tests run ({:.0?})",
            graded.elapsed()
        );
        Ok((score, max))
    };

    println!("== run_autograder on the untouched starter: 0");
    let (score, _) = grade("untouched starter")?;
    if score != 0.0 {
        return Err(format!("the untouched starter scores {score}, not 0"));
    }

    println!("== run_autograder on a crate with every step done: full marks");
    crate::authoring::starter::write_crate(
        &root.join("solution/src"),
        u32::MAX,
        &submission.join("starter/src"),
    )?;
    let (score, max) = grade("finished crate")?;
    // A bonus (the tuning task's) may add to the lab's total.
    if score < max || max <= 0.0 {
        return Err(format!(
            "a crate with every step done scores {score} / {max}, not full marks"
        ));
    }

    println!(
        "\ncheck-autograder: the zip installs with Rust {TOOLCHAIN}, the untouched starter scores 0, \
         every step done {score} / {max} ({:.0?})",
        started.elapsed()
    );
    Ok(())
}

/// One of the autograder's scripts, run as Gradescope would: from the
/// source folder, with the scratch root as AUTOGRADER_ROOT, and without what
/// `cargo run` told this tool about itself (the kit's manifest folder, its
/// cargo and toolchain), which Gradescope would not have either.
fn script(gradescope: &Path, script: &Path, target: &Path) -> Command {
    let mut command = Command::new("bash");
    command
        .arg(script)
        .current_dir(gradescope.join("source"))
        .env("AUTOGRADER_ROOT", gradescope)
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_TERM_COLOR", "never");
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let from_cargo_run = name == "CARGO"
            || name == "RUSTUP_TOOLCHAIN"
            || [
                "CARGO_PKG_",
                "CARGO_MANIFEST_",
                "CARGO_BIN_",
                "CARGO_CRATE_",
                "CARGO_PRIMARY_",
            ]
            .iter()
            .any(|prefix| name.starts_with(prefix));
        if from_cargo_run {
            command.env_remove(name.as_ref());
        }
    }
    command
}

fn run(command: &mut Command) -> Result<Output, String> {
    let output = command
        .output()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(format!(
            "{command:?} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_student_workflow_pins_the_autograders_toolchain() {
        let workflow =
            fs::read_to_string(root().join("student/.github/workflows/grade.yml")).unwrap();
        assert!(
            workflow.contains(&format!("RUST_TOOLCHAIN: \"{TOOLCHAIN}\"")),
            "student/.github/workflows/grade.yml must pin Rust {TOOLCHAIN}, as the autograder does"
        );
    }

    /// A tag or a branch can be moved to other code after the course hands
    /// the workflow out; a commit cannot.
    #[test]
    fn the_student_workflow_pins_every_action_to_a_commit() {
        let workflow =
            fs::read_to_string(root().join("student/.github/workflows/grade.yml")).unwrap();
        let mut unpinned = Vec::new();
        let mut actions = 0;
        for line in workflow.lines() {
            let Some(used) = line.trim().trim_start_matches("- ").strip_prefix("uses:") else {
                continue;
            };
            actions += 1;
            let reference = used.split('#').next().unwrap_or_default().trim();
            let commit = reference.rsplit_once('@').map_or("", |(_, at)| at);
            if commit.len() != 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
                unpinned.push(reference.to_owned());
            }
        }
        assert!(actions >= 5, "the workflow names {actions} actions");
        assert!(
            unpinned.is_empty(),
            "actions not pinned to a commit: {unpinned:?}"
        );
    }

    #[test]
    fn the_scripts_name_the_pin_and_read_the_root_from_the_environment() {
        let toolchain = TOOLCHAIN_SH.replace("@TOOLCHAIN@", TOOLCHAIN);
        assert!(toolchain.contains(&format!("PINNED_RUST=\"{TOOLCHAIN}\"")));
        for script in [SETUP_SH, RUN_AUTOGRADER] {
            assert!(script.contains("ROOT=\"${AUTOGRADER_ROOT:-/autograder}\""));
            assert!(script.contains(". \"$SOURCE/toolchain.sh\""));
        }
        assert!(RUN_AUTOGRADER.contains("--metadata \"$ROOT/submission_metadata.json\""));
    }
}
