//! Reading skills: the Agent Skills format, trust, and the first of a name.

use super::*;

#[test]
fn a_skill_md_is_read_as_the_format_defines_it() {
    let text = "---\nname: pdf-forms\ndescription: >\n  Fill in PDF forms.\n  Use when given a PDF form.\nlicense: MIT\n---\n# Filling forms\n\nRun `scripts/fill.py`.\n";
    let (name, description, body) = parse("pdf-forms", text).unwrap();
    assert_eq!(name, "pdf-forms");
    assert_eq!(description, "Fill in PDF forms. Use when given a PDF form.");
    assert_eq!(body, "# Filling forms\n\nRun `scripts/fill.py`.");
    let quoted = "---\nname: \"notes\"\ndescription: 'Write notes: short ones.'\n---\nBody";
    assert_eq!(parse("notes", quoted).unwrap().1, "Write notes: short ones.");
}

#[test]
fn a_skill_that_does_not_fit_the_format_says_why() {
    let problems: Vec<String> = [
        ("x", "Just text."),
        ("x", "---\nname: x\ndescription: y\n"),
        ("x", "---\ndescription: y\n---\n"),
        ("Bad_Name", "---\nname: Bad_Name\ndescription: y\n---\n"),
        ("other", "---\nname: x\ndescription: y\n---\n"),
        ("x", "---\nname: x\n---\n"),
    ]
    .iter()
    .map(|(folder, text)| parse(folder, text).unwrap_err())
    .collect();
    insta::assert_debug_snapshot!(problems);
}

#[test]
fn a_projects_skills_are_offered_once_trusted_and_the_first_of_a_name_wins() {
    let dir = tempfile::tempdir().unwrap();
    let write = |at: &str, name: &str, description: &str| {
        let folder = dir.path().join(at).join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\nDo it.\n"),
        )
        .unwrap();
    };
    write("repo/.claude/skills", "deploy", "The project's deploy.");
    write("profile/skills", "deploy", "Mine.");
    write("profile/skills", "notes", "Notes.");
    write("claude/skills", "broken", "");
    let places = places(&dir.path().join("repo"), &dir.path().join("profile"), Some(&dir.path().join("claude")));
    let untrusted = Skills::find(&places, false);
    let names: Vec<(&str, &str)> = untrusted.found.iter().map(|s| (s.name.as_str(), s.description.as_str())).collect();
    assert_eq!(names, [("deploy", "Mine."), ("notes", "Notes.")]);
    assert!(untrusted.not_used[0].1.contains("seri mcp trust"), "{:?}", untrusted.not_used);
    let trusted = Skills::find(&places, true);
    let names: Vec<(&str, &str)> = trusted.found.iter().map(|s| (s.name.as_str(), s.description.as_str())).collect();
    assert_eq!(names, [("deploy", "The project's deploy."), ("notes", "Notes.")]);
    let reasons: Vec<&str> = trusted.not_used.iter().map(|(_, why)| why.as_str()).collect();
    assert_eq!(reasons, ["another skill is named `deploy`", "SKILL.md's front matter has no `description`"]);
    assert_eq!(project_files(&dir.path().join("repo")).len(), 1);
}
