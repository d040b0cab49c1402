//! Routing frames: only to followers, and a full queue remembers what it missed.

use super::*;

fn session(n: u8) -> SessionId {
    format!("01a22b56-d880-7000-8000-0000000000{n:02x}").parse().unwrap()
}

fn frame(kind: FrameKind, session: Option<SessionId>, text: &str) -> HubFrame {
    HubFrame { kind, session, text: text.into() }
}

fn drain(frames: &mut mpsc::Receiver<Utf8Bytes>) -> Vec<String> {
    let mut got = Vec::new();
    while let Ok(text) = frames.try_recv() {
        got.push(text.as_str().to_owned());
    }
    got
}

#[test]
fn a_frame_goes_only_to_the_sockets_that_follow_it() {
    let hub = Arc::new(Hub::default());
    let (a, mut a_frames) = hub.join(8);
    let (b, mut b_frames) = hub.join(8);
    let (c, mut c_frames) = hub.join(8);
    let (idle, mut idle_frames) = hub.join(8);
    a.follow(session(1), true);
    b.follow(session(2), true);
    c.follow_account(true);
    c.follow(session(2), true);
    let _ = &idle;

    hub.send(&frame(FrameKind::RunEvent, Some(session(1)), "run 1"));
    hub.send(&frame(FrameKind::Approval, Some(session(2)), "asked 2"));
    hub.send(&frame(FrameKind::SessionChange, Some(session(2)), "changed 2"));
    hub.send(&frame(FrameKind::SessionChange, Some(session(3)), "changed 3"));
    hub.send(&frame(FrameKind::AccountChange, None, "account"));

    assert_eq!(drain(&mut a_frames), ["run 1"]);
    assert_eq!(drain(&mut b_frames), ["asked 2", "changed 2"]);
    // Following the account and session 2, it hears session 2's change once.
    assert_eq!(drain(&mut c_frames), ["asked 2", "changed 2", "changed 3", "account"]);
    assert!(drain(&mut idle_frames).is_empty());
}

#[test]
fn a_full_queue_leaves_frames_out_and_remembers_what_was_missed() {
    let hub = Arc::new(Hub::default());
    let (slow, mut slow_frames) = hub.join(1);
    let (other, mut other_frames) = hub.join(1);
    slow.follow(session(1), true);
    slow.follow_account(true);
    other.follow(session(2), true);

    for i in 0..5 {
        hub.send(&frame(FrameKind::RunEvent, Some(session(1)), &format!("run 1.{i}")));
    }
    hub.send(&frame(FrameKind::AccountChange, None, "account"));
    hub.send(&frame(FrameKind::RunEvent, Some(session(2)), "run 2"));

    // The burst on session 1 cost the other socket nothing.
    assert_eq!(drain(&mut other_frames), ["run 2"]);
    assert!(other.follower.take_missed().is_empty());
    // The slow one kept what fit and knows what it missed, once.
    assert_eq!(drain(&mut slow_frames), ["run 1.0"]);
    let missed = slow.follower.take_missed();
    assert_eq!(missed, Missed { sessions: BTreeSet::from([session(1)]), account: true });
    assert!(slow.follower.take_missed().is_empty());
}

#[test]
fn a_socket_that_leaves_is_forgotten_and_nothing_is_encoded_for_nobody() {
    let hub = Arc::new(Hub::default());
    assert!(hub.is_empty());
    let (a, _frames) = hub.join(4);
    a.follow(session(1), true);
    assert!(hub.wanted(FrameKind::RunEvent, Some(session(1))));
    assert!(!hub.wanted(FrameKind::RunEvent, Some(session(2))));
    assert!(!hub.wanted(FrameKind::AccountChange, None));
    a.follow(session(1), false);
    assert!(!hub.wanted(FrameKind::RunEvent, Some(session(1))));
    a.follow_account(true);
    assert!(hub.wanted(FrameKind::SessionChange, Some(session(7))));
    assert!(!hub.wanted(FrameKind::Approval, Some(session(7))));
    drop(a);
    assert!(hub.is_empty());
    assert!(!hub.wanted(FrameKind::SessionChange, Some(session(7))));
    assert!(hub.lock().sessions.is_empty() && hub.lock().account.is_empty());
}
