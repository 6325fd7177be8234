# The retry-breaker lab. `just` lists the recipes; every one has a plain-cargo
# equivalent, given in its comment.

set shell := ["bash", "-euo", "pipefail", "-c"]

# Student runs must never accept a snapshot or write proptest regression
# files: a wrong answer has to stay red.
student_env := "INSTA_UPDATE=no INSTA_FORCE_PASS=0 PROPTEST_DISABLE_FAILURE_PERSISTENCE=1 PROPTEST_CASES=64"
solution_flags := "--no-default-features --features retry-breaker/solution"

# List the recipes.
default:
    @just --list --unsorted

# Run the suite against YOUR starter crate; `just test 3` or `just test half_open` runs one step.
# (cargo: `cargo test --test lab -- step3_`)
test step="":
    #!/usr/bin/env bash
    set -euo pipefail
    filter=$(cargo xtask filter {{quote(step)}})
    if ! git diff --quiet HEAD -- tests/lab/snapshots 2>/dev/null; then
        echo "warning: the committed snapshots in tests/lab/snapshots were changed; the suite compares against them, so restore them with: git checkout tests/lab/snapshots" >&2
    fi
    {{student_env}} cargo test --test lab -- $filter

# Run the suite, the doc tests and the tools' tests against the reference solution.
# (cargo: `cargo test --workspace --exclude retry-breaker-starter --no-default-features --features retry-breaker/solution`)
test-solution step="":
    #!/usr/bin/env bash
    set -euo pipefail
    filter=$(cargo xtask filter {{quote(step)}})
    if [ -n "$filter" ]; then
        INSTA_UPDATE=no cargo test --test lab {{solution_flags}} -- $filter
    else
        INSTA_UPDATE=no cargo test --workspace --exclude retry-breaker-starter {{solution_flags}}
    fi

# Your scoreboard: tests passing per step, and where your next TODO is (cargo: `cargo xtask progress`).
progress:
    cargo xtask progress

# Instructors: prove each step's tests fail until that step is done, naming its TODO (cargo: `cargo xtask check-starter`).
check-starter:
    cargo xtask check-starter

# A deep exploration: many more property-test cases against the solution (cargo: see the justfile).
explore cases="500000":
    PROPTEST_CASES={{cases}} LAB_WATCHDOG_SECS=1800 INSTA_UPDATE=no cargo test --release --test lab {{solution_flags}} -- step9_explore --nocapture

# Regenerate starter/ from the TODO markers in solution/ (cargo: `cargo xtask sync-starter`).
sync-starter:
    cargo xtask sync-starter

# Fail if the committed starter differs from the generated one (cargo: `cargo xtask check-sync`).
check-sync:
    cargo xtask check-sync

# The live demo: a checkout behind the breaker against a misbehaving payment
# gateway over HTTP on loopback. `just demo starter` runs it on YOUR crate.
# (cargo: `cargo run -p retry-breaker-demo`, add `--features starter` for yours)
demo which="solution":
    #!/usr/bin/env bash
    set -euo pipefail
    case {{quote(which)}} in
        solution) cargo run --quiet -p retry-breaker-demo ;;
        starter) cargo run --quiet -p retry-breaker-demo --features starter ;;
        *) echo "usage: just demo [solution|starter]" >&2; exit 2 ;;
    esac

# Benchmarks: ours against recloser and failsafe and the hardware floor, then a
# table of medians with each peer's ratio to ours (about a minute); `just bench open`
# runs the matching rows only. (cargo: `cargo bench -p retry-breaker-bench`)
bench filter="":
    cargo bench -p retry-breaker-bench -- {{filter}}

# Instructors: apply each typical student mistake in mistakes/ to a scratch copy of the
# solution and check the suite catches it (cargo: `cargo xtask check-mistakes`).
check-mistakes only="":
    cargo xtask check-mistakes {{only}}

# Instructors: write the student edition to DIR: the starter, the suite and LAB.md
# without any answer, as a fresh git repository (cargo: `cargo xtask export-student DIR`).
export-student dir:
    cargo xtask export-student {{quote(dir)}}

# Instructors: score a student's crate by step, held-back tests included: this
# repository's starter, or that of a student repository at DIR; writes
# target/grade/ (cargo: `cargo xtask grade [DIR] [--out OUT]`).
grade *args:
    cargo xtask grade {{args}}

# Instructors: the whole course cycle: export, then grade the untouched starter,
# the solution and one mistake (cargo: `cargo xtask check-export [MISTAKE]`).
check-export mistake="":
    cargo xtask check-export {{mistake}}

# Instructors: mutation testing of the solution, judged by the shared suite
# (configured in .cargo/mutants.toml; installs cargo-mutants if missing).
mutants *args:
    #!/usr/bin/env bash
    set -euo pipefail
    command -v cargo-mutants >/dev/null || cargo install cargo-mutants --locked
    INSTA_UPDATE=no PROPTEST_DISABLE_FAILURE_PERSISTENCE=1 cargo mutants --package retry-breaker-solution {{args}}

# Instructors only: re-record the snapshots from the solution, then review `git diff`.
accept-snapshots:
    INSTA_UPDATE=always cargo test --test lab {{solution_flags}}
    git diff --stat -- tests/lab/snapshots

# Formatting, lints and docs, as CI checks them.
lint:
    cargo fmt --all --check
    cargo clippy --workspace --all-targets {{solution_flags}} -- -D warnings
    cargo clippy --workspace --all-targets -- -D warnings
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --exclude retry-breaker-starter --no-deps {{solution_flags}}

# Everything CI runs (cargo: `bash .ci/run`).
ci: check-sync test-solution check-starter check-mistakes check-export lint
