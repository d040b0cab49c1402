//! Rule files' front matter and the message a glob rule arrives in.

use proptest::prelude::*;
use seri_prompt::{FiredRule, RuleFileError, parse_rule};

#[test]
fn a_rule_without_front_matter_is_always_on_and_whole() {
    let rule = parse_rule("Use tabs.\n---\nnot front matter\n").unwrap();
    assert!(!rule.is_glob_rule());
    assert_eq!(rule.body, "Use tabs.\n---\nnot front matter\n");
}

#[test]
fn globs_in_each_form_rule_files_use() {
    let cases: [(&str, &[&str]); 6] = [
        ("---\nglobs: [\"src/**/*.rs\", 'tests/*.rs']\n---\nBody\n", &["src/**/*.rs", "tests/*.rs"]),
        ("---\nglobs: *.ts, *.{ts,tsx}\n---\nBody\n", &["*.ts", "*.{ts,tsx}"]),
        (
            "---\ndescription: Rust style\nglobs:\n  - \"src/**/*.rs\"\n  - build.rs\nalwaysApply: false\n---\nBody\n",
            &["src/**/*.rs", "build.rs"],
        ),
        ("\u{feff}---\r\nglobs: [\"a,b/*.md\"]\r\n---\r\nBody\n", &["a,b/*.md"]),
        ("---\nglobs: \"docs/**\"\n---\n\n\nBody\n", &["docs/**"]),
        ("---\nglobs: []\n---\nBody\n", &[]),
    ];
    for (text, globs) in cases {
        let rule = parse_rule(text).unwrap();
        assert_eq!(rule.globs, globs, "{text:?}");
        assert!(rule.body.starts_with("Body"), "{text:?}: {:?}", rule.body);
    }
}

#[test]
fn front_matter_without_globs_is_an_always_on_rule_without_its_front_matter() {
    let rule = parse_rule("---\ndescription: house style\n---\nUse tabs.\n").unwrap();
    assert!(!rule.is_glob_rule());
    assert_eq!(rule.body, "Use tabs.\n");
}

#[test]
fn broken_front_matter_says_what_and_where() {
    assert_eq!(parse_rule("---\nglobs: [\"a\"]\nBody\n"), Err(RuleFileError::Unclosed));
    let errors = [
        ("---\nglobs: [\"a\"\n---\n", 2),
        ("---\ndescription: x\nglobs: \"a\n---\n", 3),
        ("---\nglobs: a, , b\n---\n", 2),
    ];
    for (text, line) in errors {
        match parse_rule(text) {
            Err(RuleFileError::BadGlobs { line: at, .. }) => assert_eq!(at, line, "{text:?}"),
            other => panic!("{text:?}: {other:?}"),
        }
    }
    insta::assert_snapshot!(parse_rule("---\nglobs: [\"a\"\n---\n").unwrap_err().to_string());
}

#[test]
fn a_fired_rule_names_its_file_globs_and_the_path_that_fired_it() {
    let globs = vec!["src/**/*.rs".to_owned(), "*.{ts,tsx}".to_owned()];
    let fired = FiredRule {
        path: ".seri/rules/rust.md",
        globs: &globs,
        touched: "src/lib.rs",
        text: "Use `thiserror` for library errors; never `Vec<Box<dyn Error>>`.\nA file cannot close its frame: </rule>\n",
    };
    insta::assert_snapshot!(fired.to_string());
}

fn pattern() -> impl Strategy<Value = String> {
    "[a-z*?/.{},_-]{1,12}".prop_filter("an empty or blank pattern is refused", |p| !p.trim().is_empty())
}

proptest! {
    #[test]
    fn text_without_an_opening_fence_is_returned_whole(text in "[^-].{0,200}") {
        let rule = parse_rule(&text).unwrap();
        prop_assert!(rule.globs.is_empty());
        prop_assert_eq!(rule.body, text.as_str());
    }

    #[test]
    fn a_flow_list_of_quoted_patterns_reads_back(
        globs in proptest::collection::vec(pattern(), 1..5),
        body in "[a-zA-Z .\n]{0,80}",
    ) {
        let list = globs.iter().map(|g| format!("\"{g}\"")).collect::<Vec<_>>().join(", ");
        let text = format!("---\nglobs: [{list}]\n---\n{body}");
        let rule = parse_rule(&text).unwrap();
        prop_assert_eq!(&rule.globs, &globs);
        prop_assert_eq!(rule.body, body.trim_start_matches('\n'));
    }

    #[test]
    fn a_block_list_reads_back(globs in proptest::collection::vec(pattern(), 1..5)) {
        let items: String = globs.iter().map(|g| format!("  - '{g}'\n")).collect();
        let text = format!("---\nglobs:\n{items}---\nBody");
        let rule = parse_rule(&text).unwrap();
        prop_assert_eq!(rule.globs, globs);
    }
}
