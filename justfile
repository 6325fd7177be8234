# The retry-breaker lab. `just` lists the recipes; every one has a plain-cargo
# equivalent (docs/MAINTAINERS.md, "Commands"). Each recipe has a one-line comment
# right above it, which `just --list` shows; longer notes sit in a separate
# comment block above that, after a blank line.

set shell := ["bash", "-euo", "pipefail", "-c"]

solution_flags := "--no-default-features --features retry-breaker/solution"

# List the recipes.
default:
    @just --list --unsorted

# The suite's student environment (no snapshot accepted, no backtraces) is
# defined once, in xtask/src/suite.rs. For libtest's raw report instead of the
# summary: `cargo lab -- step03_`.

# Test YOUR starter: your next step's failing tests, a count per step, then where to start; `just test 3` shows step 3 in full (cargo: `cargo lab-test 3`).
[no-exit-message]
test step="":
    @cargo xtask test {{quote(step)}}

# The bench crate is left out (its own tests are `just test-bench`), so the
# suite never compiles criterion and the peers. The demo's loopback tests
# mostly wait on real deadlines and cooldowns, so more test threads than
# cores let them wait together (5.7 s on two threads, 2 s on sixteen).

# Test the reference solution: the suite, the doc tests and the tools' tests (cargo: `cargo lab-solution`).
test-solution step="":
    #!/usr/bin/env bash
    set -euo pipefail
    filter=$(cargo xtask filter {{quote(step)}})
    if [ -n "$filter" ]; then
        INSTA_UPDATE=no cargo test --test lab {{solution_flags}} -- $filter
    else
        INSTA_UPDATE=no cargo test --workspace --exclude retry-breaker-starter --exclude retry-breaker-bench {{solution_flags}} -- --test-threads=16
        # The event stream's `tracing` and `metrics` adapters, behind their
        # features: their test and their doc examples.
        cargo test -p retry-breaker-solution --features tracing,metrics --test telemetry
        cargo test -p retry-breaker-solution --features tracing,metrics --doc telemetry
    fi

# Rerun `just test [STEP]` every time you save a file of your crate, until Ctrl-C (cargo: `cargo lab-watch 3`).
watch step="":
    cargo xtask watch {{quote(step)}}

# Your scoreboard: tests passing per step, and where your next TODO is (cargo: `cargo xtask progress`).
progress:
    cargo xtask progress

# Predict before you code: step N's question, with numbers of your own; the answer goes into predictions.toml, which the grade scores, e.g. `just predict 1 --answer 4` (cargo: `cargo xtask predict 1`).
[positional-arguments]
[no-exit-message]
predict step *args:
    @cargo xtask predict "$@"

# Stuck? One more hint for a step each time, from a nudge to nearly the answer; `just hint 3 reset` starts over (cargo: `cargo xtask hint 3`).
[no-exit-message]
hint step *reset:
    @cargo xtask hint {{step}} {{reset}}

# Instructors: prove each step's tests fail until that step is done, naming its TODO (cargo: `cargo xtask check-starter`).
check-starter:
    cargo xtask check-starter

# Step 10's property tests, and step 17's, against the solution with many more cases (cargo: see this recipe).
explore cases="500000":
    LAB_EXPLORE_CASES={{cases}} LAB_WATCHDOG_SECS=1800 INSTA_UPDATE=no cargo test --release --test lab {{solution_flags}} -- step10_explore step17_bulkhead::explore --nocapture

# Regenerate starter/ from the TODO markers in solution/, and MISTAKES.md's tables from mistakes/ (cargo: `cargo xtask sync-starter`).
sync-starter:
    cargo xtask sync-starter

# Fail if the committed starter differs from the generated one (cargo: `cargo xtask check-sync`).
check-sync:
    cargo xtask check-sync

# The live demo: a checkout behind the breaker against a misbehaving payment
# gateway over HTTP on loopback. The build shows cargo's progress (the first
# one takes about a minute); the run itself is quiet.

# The live demo over HTTP on loopback; `just demo starter` runs it on YOUR crate (cargo: `cargo demo`).
demo which="solution":
    #!/usr/bin/env bash
    set -euo pipefail
    case {{quote(which)}} in
        solution) features=() ;;
        starter) features=(--features starter) ;;
        *) echo "usage: just demo [solution|starter]" >&2; exit 2 ;;
    esac
    echo "building the demo (the first time takes about a minute)..." >&2
    cargo build -p retry-breaker-demo "${features[@]}"
    cargo run --quiet -p retry-breaker-demo "${features[@]}"

# LAB.md's pictures are drawn from the reference solution on a manual clock
# by the demo crate's `pictures` binary, never by hand; CI checks they are
# up to date, the way check-sync guards the starter.

# Regenerate the pictures in docs/pictures/ that LAB.md shows (cargo: `cargo pictures`).
pictures:
    cargo run --quiet -p retry-breaker-demo --bin pictures

# Fail if the committed pictures differ from the generated ones (cargo: `cargo pictures --check`).
check-pictures:
    cargo run --quiet -p retry-breaker-demo --bin pictures -- --check

# The report's screenshot test is ignored by a plain `cargo test`, since a
# student's machine may have no browser; CI installs Chromium and runs it.
# Without Chromium it fails and says how to install it.

# The demo's HTML report in headless Chromium: one timeline per scenario and the fleet's chart; the PNG stays in target/demo-report-check/ (cargo: `cargo test -p retry-breaker-demo --test report_in_chromium -- --ignored`).
check-report:
    cargo test -p retry-breaker-demo --test report_in_chromium -- --ignored --nocapture

# Ours against recloser, failsafe and the hardware floor, then a table of
# medians with each peer's ratio to ours (about a minute).

# The tuning task scores tuning.toml on a simulated sick gateway, on a
# manual clock, in milliseconds: the starter's crate by default, as the
# student's `just tune` does, or the solution's with `--solution`. `--http`
# runs the demo's three scenarios over real HTTP instead, with settings as
# words (`just tune --http threshold=3 attempts=3`).

# The tuning task: score tuning.toml on your gateway; `just tune --student ID` for a student's scenario, `--http` for the real-HTTP demo (cargo: `cargo run --example tune`).
tune *args:
    #!/usr/bin/env bash
    set -euo pipefail
    args=({{args}})
    if [[ " ${args[*]-} " == *" --http "* ]]; then
        words=(); for word in "${args[@]}"; do [[ $word == --http ]] || words+=("$word"); done
        cargo run --quiet -p retry-breaker-demo --bin tune -- "${words[@]}"
    elif [[ " ${args[*]-} " == *" --solution "* ]]; then
        rest=(); for word in "${args[@]}"; do [[ $word == --solution ]] || rest+=("$word"); done
        cargo run --quiet --example tune {{solution_flags}} -- "${rest[@]}"
    else
        cargo run --quiet --example tune -- "${args[@]}"
    fi

# Benchmarks against peer crates, then the targets; `just bench open` runs the matching rows only, `just bench targets` the targets only (cargo: `cargo bench -p retry-breaker-bench`).
bench filter="":
    cargo bench -p retry-breaker-bench -- {{filter}}

# Instructions per call on ours' hot paths, with and without an event sink, counted by callgrind (exact from run to run); `just bench-instructions REV` adds the same count on an older commit, for "no slower than before" (needs valgrind: apt-get install valgrind).
bench-instructions base="":
    #!/usr/bin/env bash
    set -euo pipefail
    command -v valgrind >/dev/null || { echo "bench-instructions needs valgrind: apt-get install valgrind" >&2; exit 1; }
    paths=(closed-try open-try closed-execute open-execute closed-policy closed-layer)
    # The instructions one call costs: two runs, 1,000 and 11,000 calls,
    # so that start-up and set-up cancel out.
    per_call() {
        local program=$1; shift
        local few many
        few=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$program" "$1" 1000 "${@:2}" 2>&1 | sed -n 's/.*Collected : //p')
        many=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$program" "$1" 11000 "${@:2}" 2>&1 | sed -n 's/.*Collected : //p')
        [[ -n $few && -n $many ]] || { echo "callgrind counted nothing for $program $*" >&2; exit 1; }
        echo $(( (many - few) / 10000 ))
    }
    cargo build --quiet --release -p retry-breaker-bench --example instructions
    here=target/release/examples/instructions
    base_program=""
    if [[ -n "{{base}}" ]]; then
        tree=target/instructions-base
        rm -rf "$tree"; git worktree prune
        git worktree add --quiet --detach "$tree" "{{base}}"
        trap 'git worktree remove --force "$tree"' EXIT
        mkdir -p "$tree/bench/examples"
        if grep -q "fn with_event_sink" "$tree/solution/src/breaker.rs"; then
            cp bench/examples/instructions.rs "$tree/bench/examples/"
        else
            sed '/BEGIN SINK/,/END SINK/c\    let _ = sink;' bench/examples/instructions.rs > "$tree/bench/examples/instructions.rs"
        fi
        (cd "$tree" && CARGO_TARGET_DIR=../instructions-base-build cargo build --quiet --release -p retry-breaker-bench --example instructions)
        base_program=target/instructions-base-build/release/examples/instructions
    fi
    printf '%-16s %10s %10s' path "no sink" "a sink"
    [[ -n $base_program ]] && printf ' %14s' "{{base}}, no sink"
    echo "   (instructions per call)"
    for path in "${paths[@]}"; do
        printf '%-16s %10s %10s' "$path" "$(per_call $here $path)" "$(per_call $here $path --sink)"
        [[ -n $base_program ]] && printf ' %14s' "$(per_call $base_program $path)"
        echo
    done

# The bench crate's own tests (its summary table), outside test-solution so the suite never builds criterion and the peers (cargo: `cargo test -p retry-breaker-bench`).
test-bench:
    cargo test -p retry-breaker-bench

# One breaker across a fleet: 100 in-process nodes at threshold 5, local-only against fleet, and the store down mid-incident; `just fleet --redis` adds five node processes over a real redis-server (`--redis-only`: those alone) (cargo: `cargo run --release -p retry-breaker-fleet --bin fleet`).
fleet *args:
    #!/usr/bin/env bash
    set -euo pipefail
    # Only a run over real Redis compiles the Redis client.
    features=()
    [[ " {{args}} " == *" --redis"* ]] && features=(--features redis)
    cargo run --quiet --release -p retry-breaker-fleet "${features[@]}" --bin fleet -- {{args}}

# The fleet crate's tests, the real-Redis ones included: they need redis-server (`sudo apt-get install redis-server`) and fail without it (cargo: `cargo test -p retry-breaker-fleet --all-features`).
test-fleet:
    cargo test -p retry-breaker-fleet --all-features

# The solution as a crate of its own, ready to publish as `retry-breaker`: the generator's markers stripped, the lab's notes rewritten, a manifest standing alone with a registry's metadata, solution/README.md as its README; says whether the name is free on crates.io (cargo: `cargo xtask library-edition DIR`).
library-edition dir:
    cargo xtask library-edition {{quote(dir)}}

# The library edition written to a fresh folder outside the repository, packaged by `cargo package` (which builds the packaged crate as a registry would), then its tests and doc tests, the README's example included, run with every feature (cargo: see the recipe).
check-library:
    #!/usr/bin/env bash
    set -euo pipefail
    edition=$(mktemp -d)/retry-breaker
    trap 'rm -rf "$(dirname "$edition")"' EXIT
    cargo xtask library-edition "$edition"
    cp Cargo.lock "$edition/"
    target="$PWD/target/library"
    cd "$edition"
    CARGO_TARGET_DIR="$target" cargo package --allow-dirty
    CARGO_TARGET_DIR="$target" cargo test --quiet --all-features

# The fleet's deterministic simulation on fresh schedules: partitions, lost, duplicated, reordered and garbled messages, the store down or forgetting every key; a seed drawn afresh unless given, printed with the command that replays it (cargo: `FLEET_SEED=N cargo test -p retry-breaker-fleet --test properties`).
fleet-sim seed="" cases="1000":
    #!/usr/bin/env bash
    set -euo pipefail
    seed={{quote(seed)}}
    [ -n "$seed" ] || seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
    echo "the fleet's simulation, seed $seed, {{cases}} schedules a property"
    FLEET_SEED="$seed" FLEET_CASES={{quote(cases)}} PROPTEST_DISABLE_FAILURE_PERSISTENCE=1 cargo test --quiet -p retry-breaker-fleet --test properties || { echo "failed with seed $seed: replay with \`just fleet-sim $seed {{cases}}\`"; exit 1; }

# The fleet under every fault its store can have, over a real redis-server started on a free loopback port: kill -9, SIGSTOP, DEBUG SLEEP, FLUSHALL once and in a loop, a restart with nothing kept, one node cut off; a row each, and it fails if a call was refused because of the store or two fleet probes overlapped (cargo: `cargo run -p retry-breaker-fleet --features redis --bin fleet -- faults`).
fleet-faults:
    cargo run --quiet -p retry-breaker-fleet --features redis --bin fleet -- faults

# Instructors: check the suite catches each typical mistake in mistakes/ (cargo: `cargo xtask check-mistakes`).
check-mistakes only="":
    cargo xtask check-mistakes {{only}}

# Instructors: write the student edition, without any answer, to DIR as a fresh git repository: the core lab, steps 1-10, or with TRACK `advanced` steps 1-17 (cargo: `cargo xtask export-student DIR --track advanced`).
export-student dir track="core":
    cargo xtask export-student {{quote(dir)}} --track {{quote(track)}}

# Instructors: score a student's crate by step (this repository's starter, or the student repository at DIR), held-back tests included, into target/grade/ (cargo: `cargo xtask grade [DIR]`).
grade *args:
    cargo xtask grade {{args}}

# Instructors: grade each attempt to forge a grade in grading/forgeries/: each must score 0 and be named; then ten regrades give the same bytes (cargo: `cargo xtask check-forgeries [NAME]`).
check-forgeries name="":
    cargo xtask check-forgeries {{name}}

# Instructors: the whole course cycle: export, then grade the untouched starter, the solution and one mistake (cargo: `cargo xtask check-export [MISTAKE]`).
check-export mistake="":
    cargo xtask check-export {{mistake}}

# Gradescope unzips the autograder into /autograder/source, runs setup.sh once
# (it installs the pinned Rust if missing and prebuilds everything, so grades
# run offline), then run_autograder for each submission.

# Instructors: write a Gradescope autograder to DIR: setup.sh, run_autograder, the grading sources and DIR/autograder.zip to upload (cargo: `cargo xtask autograder DIR`).
autograder dir:
    cargo xtask autograder {{quote(dir)}}

# Instructors: build the autograder and run it as Gradescope would in a scratch root: the untouched starter scores 0, a crate with every step done full marks (cargo: `cargo xtask check-autograder`).
check-autograder:
    cargo xtask check-autograder

# Runs README.md's "Installing just" block as written, in a scratch HOME whose PATH
# holds only the system's folders and cargo's: a newcomer's machine. It
# downloads just's prebuilt binary from PyPI, so it needs that network.

# Instructors: the set-up commands of README.md and the student README, run as a newcomer would, must leave `just` working in a fresh clone (cargo: `cargo xtask check-readme`).
check-readme:
    cargo xtask check-readme

# loom runs every interleaving of two and three threads at the breaker's
# transition points, up to LOOM_MAX_PREEMPTIONS preemptions (2 unless set),
# and checks each is linearizable. Built with `--cfg loom` in its own target
# directory, so it never invalidates the normal build (about a minute cold).

# Instructors: model-check the solution's lock-free paths with loom (cargo: see this recipe).
loom *args:
    RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}" cargo test -p retry-breaker-solution --release --test loom -- {{args}}

# Configured in .cargo/mutants.toml; installs cargo-mutants if it is missing.
# Two mutants at a time (CARGO_MUTANTS_JOBS overrides it): a mutant's build
# is mostly one crate's compiler front end on one core, so a second job
# fills the other; cargo-mutants' jobserver keeps the compilers of both
# within the machine's cores. A whole run with no arguments that passes on
# a tree whose solution, suite and settings are committed writes that
# commit to .ci/mutants-base, the base `just mutants-diff` (and so CI)
# starts from: commit the file, with the run's figures in docs/FIGURES.md.

# Maintainers: mutation testing of the whole solution, judged by the shared suite (about 50 minutes on two cores).
[positional-arguments]
mutants *args:
    #!/usr/bin/env bash
    set -euo pipefail
    command -v cargo-mutants >/dev/null || cargo install cargo-mutants --locked
    INSTA_UPDATE=no PROPTEST_DISABLE_FAILURE_PERSISTENCE=1 CARGO_MUTANTS_JOBS="${CARGO_MUTANTS_JOBS:-2}" cargo mutants --package retry-breaker-solution "$@"
    if [ $# -eq 0 ] && git diff --quiet HEAD -- solution tests Cargo.toml .cargo; then
        git rev-parse HEAD > .ci/mutants-base
        echo "every mutant of $(git rev-parse --short HEAD) is caught or unviable: .ci/mutants-base moved there; commit it"
    fi

# cargo-mutants' --in-diff takes the mutants whose code a diff touches; the
# diff runs from the last whole run's commit to the working tree, so a
# change is tested before it is committed too. Changes elsewhere (the
# suite included) make no mutants: a change that drops or loosens tests
# needs a whole `just mutants`.

# Maintainers: mutation testing of the solution's code changed since the last whole run (.ci/mutants-base); CI runs this.
mutants-diff:
    #!/usr/bin/env bash
    set -euo pipefail
    base=$(cat .ci/mutants-base)
    git cat-file -e "$base^{commit}" 2>/dev/null || { echo ".ci/mutants-base names $base, which this clone does not have: run 'just mutants' to test everything and move the base" >&2; exit 1; }
    mkdir -p target/ci
    git diff "$base" -- solution > target/ci/mutants.diff
    if ! grep -q '^+++ b/.*\.rs$' target/ci/mutants.diff; then
        echo "the solution's code is as it was at $(git rev-parse --short "$base"), whose whole run caught every mutant: nothing to test"
        exit 0
    fi
    echo "mutants of the solution's code changed since $(git rev-parse --short "$base"): $(grep -c '^+++ b/.*\.rs$' target/ci/mutants.diff) file(s)"
    command -v cargo-mutants >/dev/null || cargo install cargo-mutants --locked
    INSTA_UPDATE=no PROPTEST_DISABLE_FAILURE_PERSISTENCE=1 CARGO_MUTANTS_JOBS="${CARGO_MUTANTS_JOBS:-2}" cargo mutants --package retry-breaker-solution --in-diff target/ci/mutants.diff

# Instructors only: re-record the snapshots from the solution, then review `git diff`.
accept-snapshots:
    INSTA_UPDATE=always cargo test --test lab {{solution_flags}}
    git diff --stat -- tests/lab/snapshots

# Formatting, lints and docs, as CI checks them.
lint:
    cargo fmt --all --check
    cargo clippy --workspace --all-targets {{solution_flags}} -- -D warnings
    cargo clippy --workspace --all-targets -- -D warnings
    cargo clippy -p retry-breaker-demo --all-targets --features starter -- -D warnings
    cargo clippy -p retry-breaker-solution --all-targets --features tracing,metrics -- -D warnings
    RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo clippy -p retry-breaker-solution --release --tests -- -D warnings
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --exclude retry-breaker-starter --no-deps {{solution_flags}} --features retry-breaker-solution/tracing,retry-breaker-solution/metrics

# Instructors: one wrong student crate judged 20 times by `just test` and plain cargo: one verdict, no file written (cargo: `cargo xtask check-verdict`).
check-verdict runs="20":
    cargo xtask check-verdict {{runs}}

# Everything CI runs (cargo: `bash .ci/run`).
ci: check-sync check-pictures test-solution test-bench check-report check-starter check-verdict check-mistakes check-forgeries check-export check-autograder check-readme check-library test-fleet fleet-faults lint loom mutants-diff
