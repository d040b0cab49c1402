//! `transfer.plan`: `carry` copies the checklist with its owner cleared so
//! the successor's run adopts it, `close` closes it in the predecessor,
//! `omit` leaves it there; left out, it is `carry` when steps are unfinished.

use serde_json::{Value, json};
use seri_core::{AgentId, Plan, PlanStep, SessionId, StepStatus};

use super::{continue_args, logged_request};
use crate::support::{Harness, call, text};

fn steps() -> Vec<PlanStep> {
    vec![
        PlanStep { text: "Book flights".into(), status: StepStatus::Done },
        PlanStep { text: "Book a hotel".into(), status: StepStatus::InProgress },
        PlanStep { text: "Plan day trips".into(), status: StepStatus::Pending },
    ]
}

/// The plan verb's input for [`steps`].
fn plan_input(steps: &[PlanStep]) -> Value {
    let status = |s: StepStatus| match s {
        StepStatus::Done => "done",
        StepStatus::InProgress => "in_progress",
        StepStatus::Pending => "pending",
    };
    json!({ "steps": steps.iter().map(|s| json!({ "text": s.text, "status": status(s.status) })).collect::<Vec<_>>() })
}

/// What each side holds afterwards.
#[derive(Debug, PartialEq)]
struct Expect {
    /// The predecessor keeps its plan (owned by its run).
    predecessor_keeps: bool,
    /// The successor starts with the steps, owner cleared.
    successor_has: bool,
}

/// Sets a plan with `steps`, continues with `transfer` (`None`: left out),
/// and checks both sides.
async fn check(steps: Vec<PlanStep>, transfer: Option<&str>, expect: Expect) -> (Harness, SessionId) {
    let mut arguments = continue_args("phase_change");
    if let Some(plan) = transfer {
        arguments["transfer"] = json!({ "plan": plan });
    }
    let h = Harness::new(json!([
        call("plan_1", "plan", plan_input(&steps)),
        call("cont_1", "continue_session", arguments),
        call("plan_2", "plan", plan_input(&steps)),
        text("Carrying on."),
    ]));
    let outcomes = h.send("Planning is done; now book things.").await;
    let successor = outcomes[0].continued_to.as_ref().expect("continued").session_id;
    let store = h.store.agent(&AgentId::local());

    let predecessor = store.info(h.session).unwrap().plan;
    assert_eq!(predecessor.is_some(), expect.predecessor_keeps, "predecessor: {predecessor:?}");
    if let Some(plan) = &predecessor {
        assert_eq!(plan.steps, steps);
        assert_eq!(plan.owner_run_id, Some(outcomes[0].run_id), "still owned by the run that made it");
    }
    let seed = store.seed(successor).unwrap().plan;
    let carried = expect.successor_has.then(|| Plan { steps: steps.clone(), owner_run_id: None });
    assert_eq!(seed, carried, "the successor's starting plan");
    (h, successor)
}

#[tokio::test]
async fn carry_copies_the_plan_with_its_owner_cleared_and_the_successors_run_adopts_it() {
    let (h, successor) = check(steps(), Some("carry"), Expect { predecessor_keeps: true, successor_has: true }).await;
    let names = [(h.session, "<PREDECESSOR>"), (successor, "<SUCCESSOR>")];
    insta::assert_json_snapshot!("plan_carried_successor_first_request", logged_request(&h, 2, &names));
    // The successor's run called `plan` and so owns it now.
    let info = h.store.agent(&AgentId::local()).info(successor).unwrap();
    assert!(info.plan.unwrap().owner_run_id.is_some(), "adopted");
}

#[tokio::test]
async fn close_closes_the_predecessors_plan_and_the_successor_starts_without_one() {
    check(steps(), Some("close"), Expect { predecessor_keeps: false, successor_has: false }).await;
}

#[tokio::test]
async fn omit_leaves_the_plan_where_it_is() {
    check(steps(), Some("omit"), Expect { predecessor_keeps: true, successor_has: false }).await;
}

#[tokio::test]
async fn left_out_an_unfinished_plan_is_carried() {
    check(steps(), None, Expect { predecessor_keeps: true, successor_has: true }).await;
}

#[tokio::test]
async fn left_out_a_finished_plan_stays() {
    let done: Vec<PlanStep> = steps().into_iter().map(|s| PlanStep { status: StepStatus::Done, ..s }).collect();
    check(done, None, Expect { predecessor_keeps: true, successor_has: false }).await;
}
