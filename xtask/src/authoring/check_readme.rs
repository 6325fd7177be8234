//! `cargo xtask check-readme`: the set-up commands of the READMEs, run as a
//! newcomer would run them.
//!
//! Each README has one section whose first console block sets `just` up:
//! README.md's "Installing just" (a `###` section of its Quick start, whose
//! own first block needs only cargo and builds everything, so it is not
//! run here) and the student README's "Set-up" (the student edition).
//! A newcomer copies that block into a shell on a machine that has Rust and
//! nothing else of ours. This check reads the block from the README itself,
//! never from a copy: the first console block after the section's heading
//! and before any other heading. It runs it with a scratch HOME (no
//! `~/.local/bin`, no `just` installed before) and a PATH of the system's
//! folders and cargo's alone, in a fresh clone of the kit and in a fresh
//! student edition. Then `just --version` and `just --list` must work
//! there; `just: command not found` fails the check.
//!
//! It leaves the machine's network settings as they are (proxies, pip's and
//! cargo's), since the block downloads from PyPI or crates.io.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::{course::export, root};

/// The heading of README.md's set-up section, under its Quick start.
const KIT_SETUP: &str = "### Installing just";
/// The heading of the student README's set-up section.
const STUDENT_SETUP: &str = "## Set-up";

/// The system's folders for programs: what a fresh login's PATH holds
/// before any user folder is added to it.
const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Environment variables that say how this machine reaches the network,
/// passed through; everything else of this shell is left behind.
fn is_network_setting(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with("_proxy")
        || [
            "PIP_",
            "CARGO_HTTP_",
            "CARGO_NET_",
            "CARGO_REGISTRIES_",
            "CARGO_REGISTRY_",
            "UV_",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
        || ["SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE"].contains(&name)
}

pub(crate) fn check_readme(args: &[String]) -> Result<(), String> {
    if !args.is_empty() {
        return Err("usage: cargo xtask check-readme".to_owned());
    }
    let started = Instant::now();
    let root = root();
    let base = root.join("target/check-readme");
    if base.exists() {
        fs::remove_dir_all(&base).map_err(|e| e.to_string())?;
    }
    fs::create_dir_all(&base).map_err(|e| e.to_string())?;
    let cargo_bin = rust_tools(&cargo_bin()?, &base.join("rust-bin"))?;

    println!("== a fresh clone of the kit, set up by README.md's \"Installing just\"");
    let kit = base.join("kit");
    run_git(&root, &["clone", "--quiet", "."], &kit)?;
    // What is about to be committed, so the check can run before the commit.
    for file in ["README.md", "justfile"] {
        fs::copy(root.join(file), kit.join(file)).map_err(|e| format!("{file}: {e}"))?;
    }
    let block = setup_block(&read(&kit.join("README.md"))?, KIT_SETUP)
        .map_err(|e| format!("README.md: {e}"))?;
    newcomer(&base.join("home-kit"), &kit, &block, &cargo_bin)?;

    println!("== a fresh student edition, set up by its README's Set-up");
    let student = base.join("student");
    export::export_track(&student, export::Track::Core)?;
    let block = setup_block(&read(&student.join("README.md"))?, STUDENT_SETUP)
        .map_err(|e| format!("student/README.md: {e}"))?;
    newcomer(&base.join("home-student"), &student, &block, &cargo_bin)?;

    println!(
        "\ncheck-readme: both READMEs' set-up blocks leave `just` working in a fresh shell ({:.0?})",
        started.elapsed()
    );
    Ok(())
}

fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The folder of the `cargo` this shell finds: the one folder besides the
/// system's a newcomer's PATH has (rustup's `~/.cargo/bin`).
fn cargo_bin() -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .find(|dir| dir.join("cargo").is_file())
        .ok_or_else(|| "no cargo on PATH".to_owned())
}

/// A folder of links to the programs in cargo's folder but `just`: CI may
/// have put a `just` there (`cargo install just`), which a newcomer's
/// cargo folder would not hold. rustup's proxies tell the tool from the
/// name they are run by, so links to them work.
fn rust_tools(cargo_bin: &Path, to: &Path) -> Result<PathBuf, String> {
    fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for entry in fs::read_dir(cargo_bin).map_err(|e| format!("{}: {e}", cargo_bin.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with("just") {
            std::os::unix::fs::symlink(entry.path(), to.join(&name))
                .map_err(|e| format!("cannot link {}: {e}", entry.path().display()))?;
        }
    }
    Ok(to.to_path_buf())
}

/// The commands of the first console block after `heading` (the whole
/// line, `### Installing just`) and before the next heading of any level:
/// its `$ ` lines, without the prompt, a line ending in `\` joined with the
/// next; the other lines are output.
fn setup_block(readme: &str, heading: &str) -> Result<Vec<String>, String> {
    let mut lines = readme.lines();
    lines
        .by_ref()
        .find(|line| line.trim_end() == heading)
        .ok_or_else(|| format!("no \"{heading}\" heading"))?;
    let mut commands: Vec<String> = Vec::new();
    let mut in_block = false;
    let mut continued = false;
    for line in lines {
        if !in_block {
            if line.starts_with('#') {
                break;
            }
            in_block = line.trim_start().starts_with("```console");
            continue;
        }
        if line.trim_start().starts_with("```") {
            break;
        }
        if continued {
            if let Some(last) = commands.last_mut() {
                last.push('\n');
                last.push_str(line);
            }
        } else if let Some(command) = line.strip_prefix("$ ") {
            commands.push(command.to_owned());
        } else {
            continue; // the command's output
        }
        continued = line.trim_end().ends_with('\\');
    }
    if commands.is_empty() {
        return Err(format!(
            "no console block with `$ ` commands under \"{heading}\""
        ));
    }
    Ok(commands)
}

/// Runs `block` in `dir` as a newcomer's shell would, then `just`.
fn newcomer(home: &Path, dir: &Path, block: &[String], cargo_bin: &Path) -> Result<(), String> {
    fs::create_dir_all(home).map_err(|e| e.to_string())?;
    for command in block {
        println!("  $ {command}");
    }
    let shell = |script: &str| {
        let mut command = Command::new("bash");
        command
            .args(["-c", script])
            .current_dir(dir)
            .env_clear()
            .env("HOME", home)
            .env("PATH", format!("{SYSTEM_PATH}:{}", cargo_bin.display()))
            .env("LANG", "C.UTF-8")
            .env("TERM", "dumb");
        for (name, value) in std::env::vars_os() {
            if is_network_setting(&name.to_string_lossy()) {
                command.env(name, value);
            }
        }
        // rustup's proxies in cargo's folder find their toolchains here;
        // with the scratch HOME they would look in an empty ~/.rustup.
        if let Some(rustup) = rustup_home() {
            command.env("RUSTUP_HOME", rustup);
        }
        command
            .output()
            .map_err(|e| format!("cannot run bash: {e}"))
    };

    let before = shell("command -v just")?;
    if before.status.success() {
        return Err(format!(
            "just is already on the system PATH ({}): this machine cannot show whether the README installs it",
            String::from_utf8_lossy(&before.stdout).trim()
        ));
    }
    let started = Instant::now();
    let script = format!(
        "set -eo pipefail\n{}\necho \"== just is $(command -v just)\"\njust --version\njust --list\n",
        block.join("\n")
    );
    let output = shell(&script)?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        let why = if stderr.contains("just: command not found") {
            "`just: command not found` after the README's set-up block"
        } else {
            "the README's set-up block failed"
        };
        return Err(format!(
            "{why} (in {}, HOME={}):\n{stdout}{stderr}",
            dir.display(),
            home.display()
        ));
    }
    let found = stdout
        .lines()
        .find_map(|line| line.strip_prefix("== just is "))
        .unwrap_or("?");
    let version = stdout
        .lines()
        .find(|line| line.starts_with("just "))
        .ok_or_else(|| format!("`just --version` printed no version:\n{stdout}"))?;
    if !stdout.contains("Available recipes:") || !stdout.contains("    test") {
        return Err(format!("`just --list` lists no `test` recipe:\n{stdout}"));
    }
    let route = match Path::new(found).strip_prefix(home) {
        Ok(inside) if inside.starts_with(".local") => "from PyPI",
        Ok(inside) if inside.starts_with(".cargo") => "built by cargo",
        _ => "elsewhere",
    };
    println!(
        "  {version} ({route}, {}), `just --list` lists the recipes ({:.0?})",
        found.replace(&home.display().to_string(), "~"),
        started.elapsed()
    );
    Ok(())
}

/// Where rustup keeps its toolchains, if rustup is in use.
fn rustup_home() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("RUSTUP_HOME") {
        return Some(PathBuf::from(home));
    }
    let home = PathBuf::from(std::env::var_os("HOME")?).join(".rustup");
    home.is_dir().then_some(home)
}

fn run_git(dir: &Path, args: &[&str], to: &Path) -> Result<(), String> {
    let output = Command::new("git")
        .current_dir(dir)
        .args(args)
        .arg(to)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_is_the_first_console_block_under_its_heading() {
        let readme = "# x\n\n```console\n$ not this\n```\n\n## Quick start\n\nText.\n\n```console\n$ one --flag   # a comment\n  output line\n$ two \\\n    --more\n$ three\n```\n\n```console\n$ later\n```\n";
        assert_eq!(
            setup_block(readme, "## Quick start").unwrap(),
            ["one --flag   # a comment", "two \\\n    --more", "three"]
        );
        assert!(setup_block(readme, "## Set-up").is_err());
        assert!(
            setup_block(
                "## Quick start\n\nNo block.\n\n## Next\n\n```console\n$ x\n```\n",
                "## Quick start"
            )
            .is_err()
        );
    }

    #[test]
    fn a_subsection_has_its_own_block_and_a_heading_ends_the_search() {
        let readme = "## Quick start\n\n```console\n$ cargo demo\n```\n\n### Installing just\n\nTwo lines:\n\n```console\n$ install just\n$ export PATH=x\n```\n\n## Next\n";
        assert_eq!(
            setup_block(readme, "### Installing just").unwrap(),
            ["install just", "export PATH=x"]
        );
        // The Quick start's own block is the first of its section.
        assert_eq!(
            setup_block(readme, "## Quick start").unwrap(),
            ["cargo demo"]
        );
        // A block under a later heading, of any level, is another section's.
        assert!(
            setup_block(
                "### Installing just\n\nNo block.\n\n#### More\n\n```console\n$ x\n```\n",
                "### Installing just"
            )
            .is_err()
        );
    }

    /// Each README's set-up block installs `just` and puts it on PATH, and
    /// does nothing else: check-readme runs it as it stands, so a block
    /// that built the kit (`cargo demo`, `cargo lab-solution`) would take
    /// minutes and prove nothing about `just`.
    #[test]
    fn both_readmes_have_a_setup_block_that_puts_just_on_the_path() {
        for (file, heading) in [
            ("README.md", KIT_SETUP),
            ("student/README.md", STUDENT_SETUP),
        ] {
            let block = setup_block(&read(&root().join(file)).unwrap(), heading).unwrap();
            assert!(
                block.iter().any(|command| command.contains("export PATH=")),
                "{file}: the set-up block must put the install folders on PATH"
            );
            for command in &block {
                assert!(
                    command.contains("just") || command.starts_with("export PATH="),
                    "{file}: the set-up block under \"{heading}\" must only set `just` up, not `{command}`"
                );
            }
        }
    }
}
