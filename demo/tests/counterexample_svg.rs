//! The lab suite's step 10 counterexample diagrams, checked here because a
//! test inside the lab suite would count as one of the student's steps. The
//! module is the suite's own file, compiled in unchanged.

#[path = "../../tests/lab/support/sequence_svg.rs"]
mod sequence_svg;

/// A real failure message of the permits property, from a breaker whose
/// half-open state admits everyone (mistakes/07).
const PERMITS: &str = "step 4: caller #0 asks: rejected, ProbeInFlight: the breaker answered Ok(()) [B5: one probe at a time, TODO(3)]

shrunk counterexample:
threshold 1, cooldown 0ns:
   1. t=0ms    caller #0 asks: admitted as p1 (g0)  => CLOSED (0 consecutive failures)
   2. t=0ms    caller #0 panics holding p1: a failure, Counted  => OPEN (0ns left)
   3. t=0ms    caller #2 asks: admitted as p2 (g2)  => HALF-OPEN (probe in flight)
   4. t=0ms    caller #0 asks: rejected, ProbeInFlight  => HALF-OPEN (probe in flight)
";

/// A real failure message of the interleaved-calls property, from the same
/// mistake.
const CALLS: &str = "call #3 attempt 2 is a second probe in flight (B5, TODO(3))
what happened:
   1. t=0ms    call #3: attempt 1 reaches the dependency (admitted in g0)
   2. t=0ms    call #3: the attempt fails
   3. t=0ms    call #3: starts a backoff sleep of 1ms
   4. t=1ms    1ms pass
   5. t=1ms    call #0: returns Err(NoAttempts)
   6. t=1ms    call #1: attempt 1 reaches the dependency (admitted in g2)

shrunk counterexample:
threshold 1, cooldown 0ns, calls:
  call #0: 0 attempt(s), retries All, backoff n*0ns, the dependency answers [Ok, Ok, Ok, Ok]
scheduler:
   1. poll call #3
   2. call #3's attempt may finish
";

fn count(svg: &str, element: &str, class: &str) -> usize {
    roxmltree::Document::parse(svg)
        .expect("well-formed SVG")
        .descendants()
        .filter(|node| node.has_tag_name(element) && node.attribute("class") == Some(class))
        .count()
}

fn texts(svg: &str) -> Vec<String> {
    roxmltree::Document::parse(svg)
        .expect("well-formed SVG")
        .descendants()
        .filter(|node| node.has_tag_name("text"))
        .filter_map(|node| node.text().map(str::to_owned))
        .collect()
}

#[test]
fn every_numbered_step_is_drawn_and_the_blamed_one_is_red() {
    let svg = sequence_svg::render("step10_explore::permits", PERMITS);
    assert_eq!(count(&svg, "line", "step"), 4, "one arrow per step");
    assert_eq!(count(&svg, "text", "what"), 4, "one line of story per step");
    assert_eq!(count(&svg, "rect", "blamed"), 1, "step 4 is blamed");
    let texts = texts(&svg);
    for lifeline in ["caller #0", "caller #2", "breaker"] {
        assert!(texts.iter().any(|t| t == lifeline), "{lifeline}: {texts:?}");
    }
    assert!(texts.iter().any(|t| t == "OPEN (0ns left)"), "{texts:?}");
}

#[test]
fn steps_nobody_acts_in_have_no_arrow_and_the_scheduler_is_not_a_step() {
    let svg = sequence_svg::render("step10_explore::calls", CALLS);
    // Six timed steps; "1ms pass" has no actor; the scheduler's untimed
    // choices are not steps of the story.
    assert_eq!(count(&svg, "text", "what"), 6);
    assert_eq!(count(&svg, "line", "step"), 5);
    assert_eq!(count(&svg, "rect", "blamed"), 0);
    let texts = texts(&svg);
    for lifeline in ["call #3", "call #0", "call #1"] {
        assert!(texts.iter().any(|t| t == lifeline), "{lifeline}: {texts:?}");
    }
}

#[test]
fn the_diagram_is_saved_under_target_and_its_path_is_given() {
    let line = sequence_svg::save("counterexample_svg::self_check", PERMITS);
    let path = line
        .trim()
        .strip_prefix("the same as a sequence diagram: ")
        .unwrap_or_else(|| panic!("no path in {line:?}"));
    assert!(
        path.ends_with("lab-counterexamples/self_check.svg"),
        "{path}"
    );
    // Printed from the crate's root when inside it; absolute otherwise.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let written = std::fs::read_to_string(&path).expect("the diagram was written");
    assert_eq!(
        written,
        sequence_svg::render("counterexample_svg::self_check", PERMITS)
    );
    // Once the property holds again, its diagram goes.
    sequence_svg::forget("counterexample_svg::self_check");
    assert!(!path.exists(), "{} is still there", path.display());
}
