//! Tests of `connection`, beside it so the module itself stays short.

use super::redact;

#[test]
fn an_address_keeps_everything_but_the_password() {
    assert_eq!(
        redact("postgres://seri:hunter2@db.example:6543/team?options=-csearch_path%3Da"),
        "postgres://seri@db.example:6543/team?options=-csearch_path=a"
    );
    assert_eq!(redact("postgresql://db.example/team"), "postgres://db.example:5432/team");
    let unparsable = redact("postgres://seri:hunter2@db.example:notaport/team");
    assert!(!unparsable.contains("hunter2"), "{unparsable}");
}
