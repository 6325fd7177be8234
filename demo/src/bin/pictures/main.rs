//! `just pictures`: writes LAB.md's pictures to `docs/pictures/` from the
//! reference solution's behaviour. `just check-pictures` (`--check`) writes
//! nothing and fails if a committed picture is missing, differs, or is no
//! longer generated, or if LAB.md does not show one.
//!
//! A binary with its modules of its own, outside the demo's library: only
//! it uses the reference solution directly, so the student edition, which
//! has no solution, leaves this binary out and keeps the rest of the demo.

mod pictures;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::{fs, io};

use pictures::{FOLDER, Picture};

fn main() -> ExitCode {
    let check = match std::env::args().nth(1).as_deref() {
        None => false,
        Some("--check") => true,
        Some(_) => {
            eprintln!("usage: pictures [--check]");
            return ExitCode::from(2);
        }
    };
    let root = workspace_root();
    let folder = root.join(FOLDER);
    let pictures = pictures::all();
    let result = if check {
        check_pictures(&root, &folder, &pictures)
    } else {
        write_pictures(&folder, &pictures)
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(problem) => {
            eprintln!("{problem}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root: the demo crate's parent folder.
fn workspace_root() -> PathBuf {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR"));
    demo.parent().unwrap_or(demo).to_path_buf()
}

fn write_pictures(folder: &Path, pictures: &[Picture]) -> Result<(), String> {
    fs::create_dir_all(folder).map_err(|e| format!("could not create {FOLDER}: {e}"))?;
    for picture in pictures {
        let path = folder.join(picture.file);
        let unchanged = fs::read_to_string(&path).is_ok_and(|old| old == picture.svg);
        if !unchanged {
            fs::write(&path, &picture.svg)
                .map_err(|e| format!("could not write {FOLDER}/{}: {e}", picture.file))?;
        }
        let what = if unchanged { "unchanged" } else { "written" };
        println!(
            "{FOLDER}/{} ({what}, {} bytes)",
            picture.file,
            picture.svg.len()
        );
    }
    for extra in extra_files(folder, pictures).map_err(|e| e.to_string())? {
        println!("{FOLDER}/{extra} is not generated any more: delete it if nothing uses it");
    }
    Ok(())
}

fn check_pictures(root: &Path, folder: &Path, pictures: &[Picture]) -> Result<(), String> {
    let mut problems = Vec::new();
    for picture in pictures {
        match fs::read_to_string(folder.join(picture.file)) {
            Ok(committed) if committed == picture.svg => {}
            Ok(_) => problems.push(format!("{FOLDER}/{} is out of date", picture.file)),
            Err(_) => problems.push(format!("{FOLDER}/{} is missing", picture.file)),
        }
    }
    for extra in extra_files(folder, pictures).unwrap_or_default() {
        problems.push(format!("{FOLDER}/{extra} is not generated any more"));
    }
    let lab = fs::read_to_string(root.join("LAB.md")).unwrap_or_default();
    for picture in pictures {
        if !lab.contains(&format!("]({FOLDER}/{})", picture.file)) {
            problems.push(format!("LAB.md does not show {FOLDER}/{}", picture.file));
        }
    }
    if problems.is_empty() {
        println!("the {} pictures in {FOLDER} are up to date", pictures.len());
        Ok(())
    } else {
        Err(format!(
            "{}\nregenerate them with `just pictures` (cargo: `cargo pictures`) and commit the result",
            problems.join("\n")
        ))
    }
}

/// SVG files in the folder that no picture writes.
fn extra_files(folder: &Path, pictures: &[Picture]) -> io::Result<Vec<String>> {
    let mut extra = Vec::new();
    if !folder.exists() {
        return Ok(extra);
    }
    for entry in fs::read_dir(folder)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.ends_with(".svg") && !pictures.iter().any(|p| p.file == name) {
            extra.push(name);
        }
    }
    extra.sort();
    Ok(extra)
}
