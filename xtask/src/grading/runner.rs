//! The sealed run inside one mount namespace.
//!
//! A grade runs several hundred tests, each in a process of its own. Were
//! each started in a namespace of its own, every test would cost `unshare`,
//! a shell, a `mount` per held-back folder and a user switch besides its
//! own process. So the grader enters the namespace once, covers the
//! held-back folders once, and starts this same program in it as the
//! *runner* (`cargo xtask sealed-run`, never run by hand): it reads the
//! run's request on its stdin, runs each test as [`sealed::run_tests`]
//! would outside (as `nobody`, where the grader is root), and writes what
//! each left behind to its stdout, which the grader reads and judges.
//!
//! Nothing the tests do reaches that stdout: each test writes to pipes of
//! its own, and as `nobody` it can neither write to nor signal the runner,
//! a root process. A runner that stops early (killed, say, where the tests
//! run as the grader's own user) fails every test it did not report.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::grading::confine::{Confinement, Role};
use crate::grading::sealed::{self, Limits, Ran, Stopped};

/// The command that starts the runner.
pub const COMMAND: &str = "sealed-run";

/// What the runner is asked to run.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    binary: PathBuf,
    workspace: PathBuf,
    per_test: Duration,
    /// How long is left of the grade's budget when the request is sent.
    left: Duration,
    output: usize,
    /// The user each test runs as, if any: `(uid, gid)`.
    user: Option<(u32, u32)>,
    env: Vec<(String, String)>,
    tests: Vec<String>,
}

impl Request {
    /// One line a field: a path, name or value holding a line break is
    /// refused rather than misread.
    fn encode(&self) -> Result<String, String> {
        let mut lines = vec![
            path_line(&self.binary)?,
            path_line(&self.workspace)?,
            self.per_test.as_millis().to_string(),
            self.left.as_millis().to_string(),
            self.output.to_string(),
            match self.user {
                Some((uid, gid)) => format!("{uid}:{gid}"),
                None => "-".to_owned(),
            },
            self.env.len().to_string(),
        ];
        for (name, value) in &self.env {
            lines.push(format!("{name}={value}"));
        }
        lines.extend(self.tests.iter().cloned());
        if let Some(line) = lines.iter().skip(2).find(|line| line.contains('\n')) {
            return Err(format!(
                "cannot send {line:?} to the runner: it holds a line break"
            ));
        }
        Ok(lines.join("\n") + "\n")
    }

    fn decode(text: &str) -> Result<Request, String> {
        let mut lines = text.lines();
        let mut next = |what: &str| {
            lines
                .next()
                .ok_or_else(|| format!("the runner's request ends before {what}"))
        };
        let number = |what: &str, text: &str| {
            text.parse::<u64>()
                .map_err(|_| format!("the runner's request has {text:?} for {what}"))
        };
        let binary = PathBuf::from(next("the binary")?);
        let workspace = PathBuf::from(next("the workspace")?);
        let per_test = Duration::from_millis(number("the test limit", next("the test limit")?)?);
        let left = Duration::from_millis(number("the budget", next("the budget")?)?);
        let output = next("the output cap")?;
        let output = output
            .parse::<usize>()
            .map_err(|_| format!("the runner's request has {output:?} for the output cap"))?;
        let user = match next("the user")? {
            "-" => None,
            pair => {
                let (uid, gid) = pair
                    .split_once(':')
                    .ok_or_else(|| format!("the runner's request has {pair:?} for the user"))?;
                let id = |text: &str| {
                    text.parse::<u32>()
                        .map_err(|_| format!("the runner's request has {pair:?} for the user"))
                };
                Some((id(uid)?, id(gid)?))
            }
        };
        let count = number("the variables", next("the variables")?)?;
        let mut env = Vec::new();
        for _ in 0..count {
            let line = next("a variable")?;
            let (name, value) = line
                .split_once('=')
                .ok_or_else(|| format!("the runner's request has {line:?} for a variable"))?;
            env.push((name.to_owned(), value.to_owned()));
        }
        let tests = lines.map(str::to_owned).collect();
        Ok(Request {
            binary,
            workspace,
            per_test,
            left,
            output,
            user,
            env,
            tests,
        })
    }
}

fn path_line(path: &Path) -> Result<String, String> {
    let text = path
        .to_str()
        .ok_or_else(|| format!("{} is not UTF-8", path.display()))?;
    if text.contains('\n') {
        return Err(format!(
            "cannot send {text:?} to the runner: it holds a line break"
        ));
    }
    Ok(text.to_owned())
}

/// [`sealed::run`]'s work in one namespace: the runner started by
/// `confinement`, what each test left behind read back from it.
pub(crate) fn run_confined(
    run: &sealed::Run,
    confinement: &Confinement,
) -> Vec<(String, Result<Ran, String>)> {
    let tests = run.tests;
    let request = Request {
        binary: run.binary.to_path_buf(),
        workspace: run.workspace.to_path_buf(),
        per_test: run.limits.per_test,
        left: run.deadline.saturating_duration_since(Instant::now()),
        output: run.limits.output,
        user: confinement.test_user(),
        env: run
            .env
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect(),
        tests: tests.to_vec(),
    };
    let (mut reported, stopped) = match start(&request, confinement) {
        Ok((records, status, stderr)) => {
            let (reported, broken) = read_records(&records, tests);
            let stopped = match (status.success(), broken) {
                (true, None) => None,
                (true, Some(broken)) => Some(broken),
                (false, _) => Some(format!(
                    "the sealed run stopped ({status}) before this test's end was reported: {}",
                    stderr.trim()
                )),
            };
            (reported, stopped)
        }
        Err(why) => (Vec::new(), Some(why)),
    };
    // Every test the runner did not report fails, with why.
    let mut seen = vec![false; tests.len()];
    for (index, _) in &reported {
        seen[*index] = true;
    }
    let why = stopped.unwrap_or_else(|| "the sealed run did not report this test".to_owned());
    for (index, seen) in seen.into_iter().enumerate() {
        if !seen {
            reported.push((index, Err(why.clone())));
        }
    }
    reported
        .into_iter()
        .map(|(index, ran)| (tests[index].clone(), ran))
        .collect()
}

/// Starts the runner, sends `request`, and returns its stdout, its exit
/// status and its stderr.
fn start(
    request: &Request,
    confinement: &Confinement,
) -> Result<(Vec<u8>, ExitStatus, String), String> {
    // Encoded first: a request that cannot be sent starts no runner.
    let request = request.encode()?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the grader: {e}"))?;
    let mut child = confinement
        .command(&exe, Role::Grader)
        .arg(COMMAND)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the sealed run: {e}"))?;
    let mut stderr = child.stderr.take().expect("piped");
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let sent = child
        .stdin
        .take()
        .expect("piped")
        .write_all(request.as_bytes());
    let mut records = Vec::new();
    let read = child
        .stdout
        .take()
        .expect("piped")
        .read_to_end(&mut records);
    let status = child.wait().map_err(|e| e.to_string())?;
    let stderr = errors.join().unwrap_or_default();
    sent.map_err(|e| format!("cannot send the sealed run its tests: {e}: {stderr}"))?;
    read.map_err(|e| format!("cannot read the sealed run's report: {e}"))?;
    Ok((records, status, stderr))
}

/// `cargo xtask sealed-run`: the runner, in the namespace the grader
/// started it in.
pub fn serve() -> Result<(), String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read the request: {e}"))?;
    let request = Request::decode(&text)?;
    let deadline = Instant::now() + request.left;
    let limits = Limits {
        per_test: request.per_test,
        budget: request.left,
        output: request.output,
    };
    let env: Vec<(&str, &str)> = request
        .env
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    let run = sealed::Run {
        binary: &request.binary,
        workspace: &request.workspace,
        tests: &request.tests,
        env: &env,
        limits,
        deadline,
    };
    let done = sealed::run_tests(&run, &Confinement::user_only(request.user));
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (test, ran) in &done {
        let index = request
            .tests
            .iter()
            .position(|name| name == test)
            .expect("a test the request named");
        out.write_all(&record(index, ran))
            .map_err(|e| format!("cannot report: {e}"))?;
    }
    out.flush().map_err(|e| format!("cannot report: {e}"))
}

/// One test's record: a header line, then the streams' bytes.
fn record(index: usize, ran: &Result<Ran, String>) -> Vec<u8> {
    let mut bytes = Vec::new();
    match ran {
        Ok(ran) => {
            let status = ran
                .status
                .map_or("-".to_owned(), |status| raw(status).to_string());
            let stopped = match ran.stopped {
                None => "-",
                Some(Stopped::TestLimit) => "limit",
                Some(Stopped::Budget) => "budget",
                Some(Stopped::NotRun) => "not-run",
            };
            bytes.extend(
                format!(
                    "{index} ran {status} {stopped} {} {} {}\n",
                    u8::from(ran.cut),
                    ran.stdout.len(),
                    ran.stderr.len()
                )
                .as_bytes(),
            );
            bytes.extend(ran.stdout.as_bytes());
            bytes.extend(ran.stderr.as_bytes());
        }
        Err(why) => {
            bytes.extend(format!("{index} error {}\n", why.len()).as_bytes());
            bytes.extend(why.as_bytes());
        }
    }
    bytes
}

/// The records in `bytes`, each with its test's index, and why the rest
/// could not be read, if it could not.
fn read_records(mut bytes: &[u8], tests: &[String]) -> (Reported, Option<String>) {
    let mut records = Vec::new();
    while !bytes.is_empty() {
        match read_record(bytes, tests.len()) {
            Ok((index, ran, rest)) => {
                records.push((index, ran));
                bytes = rest;
            }
            Err(why) => return (records, Some(why)),
        }
    }
    (records, None)
}

/// What the runner reported: each test's index in the request, and what
/// it left behind.
type Reported = Vec<(usize, Result<Ran, String>)>;

type Record<'a> = (usize, Result<Ran, String>, &'a [u8]);

/// The first `len` bytes of `rest` as text, and what follows them.
fn take(rest: &[u8], len: usize) -> Result<(String, &[u8]), String> {
    if rest.len() < len {
        return Err("the sealed run's report is broken".to_owned());
    }
    let text = String::from_utf8(rest[..len].to_vec())
        .map_err(|_| "the sealed run's report is broken".to_owned())?;
    Ok((text, &rest[len..]))
}

fn read_record(bytes: &[u8], tests: usize) -> Result<Record<'_>, String> {
    let broken = || "the sealed run's report is broken".to_owned();
    let end = bytes.iter().position(|&b| b == b'\n').ok_or_else(broken)?;
    let header = std::str::from_utf8(&bytes[..end]).map_err(|_| broken())?;
    let rest = &bytes[end + 1..];
    let fields: Vec<&str> = header.split(' ').collect();
    let number = |text: &str| text.parse::<usize>().map_err(|_| broken());
    let index = number(fields[0])?;
    if index >= tests {
        return Err(broken());
    }
    match fields.as_slice() {
        [_, "error", len] => {
            let (why, rest) = take(rest, number(len)?)?;
            Ok((index, Err(why), rest))
        }
        [_, "ran", status, stopped, cut, out, err] => {
            let status = match *status {
                "-" => None,
                raw => Some(from_raw(raw.parse().map_err(|_| broken())?)),
            };
            let stopped = match *stopped {
                "-" => None,
                "limit" => Some(Stopped::TestLimit),
                "budget" => Some(Stopped::Budget),
                "not-run" => Some(Stopped::NotRun),
                _ => return Err(broken()),
            };
            let (stdout, rest) = take(rest, number(out)?)?;
            let (stderr, rest) = take(rest, number(err)?)?;
            let ran = Ran {
                status,
                stopped,
                stdout,
                stderr,
                cut: *cut == "1",
            };
            Ok((index, Ok(ran), rest))
        }
        _ => Err(broken()),
    }
}

/// An exit status as the number `wait` gave (signal and code both).
#[cfg(unix)]
fn raw(status: ExitStatus) -> i32 {
    std::os::unix::process::ExitStatusExt::into_raw(status)
}

#[cfg(unix)]
fn from_raw(raw: i32) -> ExitStatus {
    std::os::unix::process::ExitStatusExt::from_raw(raw)
}

/// Off Unix there is no namespace, so no runner: never called.
#[cfg(not(unix))]
fn raw(status: ExitStatus) -> i32 {
    status.code().unwrap_or(-1)
}

#[cfg(not(unix))]
fn from_raw(raw: i32) -> ExitStatus {
    std::os::windows::process::ExitStatusExt::from_raw(raw as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Request {
        Request {
            binary: PathBuf::from("/k/target/debug/deps/lab-1"),
            workspace: PathBuf::from("/k/target/grading/workspace"),
            per_test: Duration::from_secs(20),
            left: Duration::from_millis(599_123),
            output: 256 * 1024,
            user: Some((65534, 65534)),
            env: vec![("LAB_SEED".into(), "7".into()), ("A".into(), "b=c".into())],
            tests: vec!["step01_closed::b2_opens".into(), "hb_1::t_2".into()],
        }
    }

    #[test]
    fn a_request_reads_back_as_it_was_sent() {
        let sent = request();
        assert_eq!(Request::decode(&sent.encode().unwrap()).unwrap(), sent);
        let nobody = Request {
            user: None,
            env: Vec::new(),
            ..request()
        };
        assert_eq!(Request::decode(&nobody.encode().unwrap()).unwrap(), nobody);
    }

    #[test]
    fn a_request_with_a_line_break_in_a_field_is_refused() {
        let broken = Request {
            tests: vec!["a\nb".into()],
            ..request()
        };
        assert!(broken.encode().is_err());
        let broken = Request {
            env: vec![("A".into(), "x\ny".into())],
            ..request()
        };
        assert!(broken.encode().is_err());
    }

    #[cfg(unix)]
    #[test]
    fn records_read_back_as_they_were_written_and_a_cut_one_is_named() {
        let tests = request().tests;
        let ran = Ran {
            status: Some(from_raw(256)),
            stopped: None,
            stdout: "test a ... ok\nwith ünïcode\n".into(),
            stderr: "said\n".into(),
            cut: true,
        };
        let stopped = Ran {
            status: None,
            stopped: Some(Stopped::TestLimit),
            stdout: String::new(),
            stderr: String::new(),
            cut: false,
        };
        let mut bytes = record(1, &Ok(ran));
        bytes.extend(record(0, &Err("cannot run it".into())));
        bytes.extend(record(0, &Ok(stopped)));
        let (read, broken) = read_records(&bytes, &tests);
        assert_eq!(broken, None);
        assert_eq!(read.len(), 3);
        assert_eq!(read[0].0, 1);
        let first = read[0].1.as_ref().unwrap();
        assert_eq!(first.status.and_then(|s| s.code()), Some(1));
        assert!(first.stdout.ends_with("ünïcode\n") && first.cut);
        assert_eq!(read[1], (0, Err("cannot run it".to_owned())));
        assert_eq!(
            read[2].1.as_ref().unwrap().stopped,
            Some(Stopped::TestLimit)
        );
        // A report cut short keeps what came before, and says so.
        let (read, broken) = read_records(&bytes[..bytes.len() - 3], &tests);
        assert_eq!(read.len(), 2);
        assert!(broken.is_some());
        // An index past the request's tests is no record of it.
        let (read, broken) = read_records(&record(2, &Err("x".into())), &tests);
        assert!(read.is_empty() && broken.is_some());
    }
}
