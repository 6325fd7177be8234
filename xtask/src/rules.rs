//! The contract's rule ids (B1-B12, E1-E10, K1-K3, S1-S2, W1-W3, R1-R3,
//! M1-M2, F1-F3, H1-H5), as test names, failure messages and the gallery's
//! `# Rule:` lines carry them.

use std::fmt;
use std::sync::OnceLock;

/// The rule families in the contract's order, as `steps.toml` names them
/// step by step: the breaker's, the retry loop's, then the advanced
/// track's. Read once; a manifest that cannot be read says so once, and
/// then no text names a rule.
fn families() -> &'static [char] {
    static FAMILIES: OnceLock<Vec<char>> = OnceLock::new();
    FAMILIES.get_or_init(|| {
        crate::manifest::families(&crate::root()).unwrap_or_else(|why| {
            eprintln!("warning: no rule ids can be read: {why}");
            Vec::new()
        })
    })
}

/// One rule of the contract, such as B5 or E10. Rules order as the contract
/// lists them: every B before every E, and B2 before B11.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Rule {
    /// The family's place in [`families`].
    family: usize,
    number: u32,
}

impl Rule {
    /// The rule with id `id` (`B5`, `e10`), if it is one.
    pub(crate) fn parse(id: &str) -> Option<Rule> {
        let mut chars = id.chars();
        let letter = chars.next()?.to_ascii_uppercase();
        let family = families().iter().position(|&f| f == letter)?;
        let digits = chars.as_str();
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(Rule {
            family,
            number: digits.parse().ok()?,
        })
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", families()[self.family], self.number)
    }
}

/// The rules a test's name starts with: `b5_b7_a_probe...` names B5 and B7,
/// `b1_to_b10_permits...` names B1 to B10. A test whose name starts with
/// no rule id (a control of the whole example, a check of a provided
/// helper) names none.
pub(crate) fn of_test(test: &str) -> Vec<Rule> {
    let name = test.rsplit("::").next().unwrap_or(test);
    let mut rules: Vec<Rule> = Vec::new();
    let mut words = name.split('_').peekable();
    while let Some(word) = words.next() {
        let Some(rule) = Rule::parse(word) else {
            break;
        };
        rules.push(rule);
        if words.peek() == Some(&"to") {
            words.next();
            let Some(last) = words.next().and_then(Rule::parse) else {
                break;
            };
            if last.family == rule.family {
                rules.extend((rule.number + 1..=last.number).map(|number| Rule { number, ..rule }));
            }
        }
    }
    rules.sort();
    rules.dedup();
    rules
}

/// The rule ids a text names, in the order they appear: `B5` in
/// `TODO(2): one probe (B5)`, but not the `B5` of `SUB5` or of `B5x`.
pub(crate) fn in_text(text: &str) -> Vec<Rule> {
    let mut rules = Vec::new();
    for (at, c) in text.char_indices() {
        if !families().contains(&c) || text[..at].ends_with(|p: char| p.is_ascii_alphanumeric()) {
            continue;
        }
        let rest = &text[at + 1..];
        let digits = rest.len() - rest.trim_start_matches(|d: char| d.is_ascii_digit()).len();
        if digits == 0 || rest[digits..].starts_with(|n: char| n.is_ascii_alphanumeric()) {
            continue;
        }
        if let Some(rule) = Rule::parse(&text[at..at + 1 + digits]) {
            if !rules.contains(&rule) {
                rules.push(rule);
            }
        }
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(rules: &[Rule]) -> Vec<String> {
        rules.iter().map(Rule::to_string).collect()
    }

    #[test]
    fn a_test_names_the_rules_its_name_starts_with() {
        assert_eq!(ids(&of_test("step01_closed::b2_a_success_resets")), ["B2"]);
        assert_eq!(
            ids(&of_test("step4_p::b5_b7_a_probe_admitted")),
            ["B5", "B7"]
        );
        assert_eq!(
            ids(&of_test("step13_w::k1_s1_s2_w1_w2_permits_in_every_mode")),
            ["K1", "S1", "S2", "W1", "W2"]
        );
        assert_eq!(
            ids(&of_test("step10_e::e1_to_e3_calls")),
            ["E1", "E2", "E3"]
        );
        assert_eq!(
            ids(&of_test("step10_e::stress::b5_b8_threads")),
            ["B5", "B8"]
        );
        assert!(of_test("step09_worked_example::worked_example_end_to_end").is_empty());
        assert!(of_test("toolkit::every_error_message_is_a_sentence").is_empty());
        assert!(of_test("step4_p::child_b11_hook_panics").is_empty());
    }

    #[test]
    fn rules_sort_in_the_contracts_order() {
        let mut rules: Vec<Rule> = ["M1", "E1", "B11", "K2", "B2", "E10", "W1", "S1", "R3"]
            .iter()
            .filter_map(|id| Rule::parse(id))
            .collect();
        rules.sort();
        assert_eq!(
            ids(&rules),
            ["B2", "B11", "E1", "E10", "K2", "S1", "W1", "R3", "M1"]
        );
    }

    #[test]
    fn a_text_names_the_rule_ids_that_stand_alone() {
        assert_eq!(
            ids(&in_text(
                "TODO(2): one probe (B5); see E10, B5 and SUB5, B5x"
            )),
            ["B5", "E10"]
        );
        assert!(in_text("assertion failed: Bx").is_empty());
        assert_eq!(Rule::parse("e6").map(|r| r.to_string()), Some("E6".into()));
        assert_eq!(Rule::parse("X6"), None);
        assert_eq!(Rule::parse("B"), None);
    }
}
