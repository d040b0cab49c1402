//! The manifest is stored on the edge as CBOR: it must come back unchanged.

use seri_core::{ProjectionPart, SessionContinuationManifest, Source};

use crate::support::{Case, OTHER, Thread, cites};

#[test]
fn a_full_manifest_round_trips_through_cbor() {
    let thread = Thread::new()
        .user("first")
        .assistant("ok")
        .assistant(&"long ".repeat(40))
        .user("second")
        .assistant("short")
        .user("continue");
    let sources = vec![
        Source::Resource { uri: "hm://a".into() },
        Source::Memory { path: "~/memory/b.md".into() },
        Source::SessionEvent { session_id: OTHER, seq: seri_core::Seq(2) },
        cites(1, 1),
        cites(3, 3),
    ];
    let manifest = Case::new(thread)
        .reason(seri_core::ContinueReason::ContextPressure)
        .sources(sources)
        .budget(60)
        .compile()
        .unwrap()
        .manifest;
    // Every field is filled: both parts appear among included and omitted.
    let parts = |ranges: &[seri_core::ManifestRange]| ranges.iter().map(|r| r.part).collect::<Vec<_>>();
    assert!(parts(&manifest.included).contains(&ProjectionPart::Excerpt));
    assert!(parts(&manifest.included).contains(&ProjectionPart::RecentExchange));
    assert!(parts(&manifest.omitted).contains(&ProjectionPart::Excerpt));
    assert!(parts(&manifest.omitted).contains(&ProjectionPart::RecentExchange));

    let mut bytes = Vec::new();
    ciborium::into_writer(&manifest, &mut bytes).unwrap();
    let back: SessionContinuationManifest = ciborium::from_reader(bytes.as_slice()).unwrap();
    assert_eq!(back, manifest);
}
