//! The successor's first request (system prompt, projection, copied
//! message) must fit its model's window before anything is created; if it
//! cannot, the refusal says by how much.

use std::num::NonZeroU64;

use serde_json::json;
use seri_runloop::{RunOutcome, RuntimeSettings};

use super::{continue_call, error_results, row_counts};
use crate::support::{Harness, Options, text};

/// Continues with the context window set to `window` tokens.
async fn continue_within(window: u64) -> (Harness, Vec<RunOutcome>) {
    let settings = RuntimeSettings { context_window: NonZeroU64::new(window), ..RuntimeSettings::default() };
    let h = Harness::with(
        json!([continue_call("cont_1", "topic_change"), text("Answering here.")]),
        Options { settings, ..Options::default() },
    );
    let outcomes = h.send("New topic: a hotel in Lisbon.").await;
    (h, outcomes)
}

/// `needed` and `over` from the refusal, checked against its wording.
fn refusal_numbers(refusal: &str, window: u64) -> (u64, u64) {
    let number = |after: &str| -> u64 {
        let rest = &refusal[refusal.find(after).unwrap_or_else(|| panic!("{after:?} in {refusal}")) + after.len()..];
        rest.chars().take_while(char::is_ascii_digit).collect::<String>().parse().unwrap()
    };
    let needed = number("would need about ");
    assert_eq!(number("the model's window is "), window, "{refusal}");
    let over = number(&format!("window is {window}: "));
    assert!(refusal.ends_with(" too many; shorten the handoff or cite fewer sources"), "{refusal}");
    (needed, over)
}

#[tokio::test]
async fn a_successor_that_would_not_fit_is_refused_by_how_much_and_nothing_is_created() {
    let (h, outcomes) = continue_within(100).await;
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert_eq!(outcomes[0].continued_to, None);
    assert_eq!(outcomes[0].result.as_deref(), Some("Answering here."), "the model read the refusal");
    let errors = error_results(&h, h.session);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let (needed, over) = refusal_numbers(&errors[0], 100);
    assert!(needed > 100, "{}", errors[0]);
    assert_eq!(over, needed - 100);
    assert_eq!(row_counts(&h), (1, 0, 5), "no successor, no edge, no successor event");
}

#[tokio::test]
async fn the_check_is_exact_at_the_boundary() {
    let (h, _) = continue_within(100).await;
    let (needed, _) = refusal_numbers(&error_results(&h, h.session)[0], 100);

    let (h, outcomes) = continue_within(needed - 1).await;
    let (_, over) = refusal_numbers(&error_results(&h, h.session)[0], needed - 1);
    assert_eq!((over, outcomes.len()), (1, 1), "one token short is refused");

    let (h, outcomes) = continue_within(needed).await;
    assert!(outcomes[0].continued_to.is_some(), "exactly the window fits");
    assert_eq!(row_counts(&h).0, 2);
}
