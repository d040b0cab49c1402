//! Tests of `error`, beside it so the module itself stays short.

use super::*;

#[test]
fn each_error_says_what_kind_of_failure_it_is() {
    let session = SessionId::from_bytes([1; 16]);
    let path = PathBuf::from("/p/seri.db");
    let cases = [
        (StoreError::Lookup(LookupError::UnknownSession { session_id: session }), StoreErrorKind::NotFound),
        (StoreError::Lookup(LookupError::InvalidSessionPrefix { text: "x".into() }), StoreErrorKind::Invalid),
        (
            StoreError::Engine(EngineError::Locked { path: path.clone(), context: "c", waited: Duration::ZERO }),
            StoreErrorKind::Busy,
        ),
        (StoreError::Engine(EngineError::DiskFull { path: path.clone(), context: "c" }), StoreErrorKind::Full),
        (StoreError::Write(WriteError::SessionExists { session_id: session }), StoreErrorKind::Conflict),
        (
            StoreError::Open(OpenError::NewerSchema { path: path.clone(), found: 9, supported: 7 }),
            StoreErrorKind::NewerSchema,
        ),
        (StoreError::Open(OpenError::NotADatabase { path: path.clone() }), StoreErrorKind::Unusable),
        (
            StoreError::Engine(EngineError::Sqlite {
                path,
                context: "c",
                source: DatabaseError::new(io::Error::other("driver failed")),
            }),
            StoreErrorKind::Failed,
        ),
    ];
    for (error, kind) in cases {
        assert_eq!(error.kind(), kind, "{error}");
    }
}

#[test]
fn ambiguous_prefix_lists_candidates_and_counts_the_rest() {
    let ids: Vec<SessionId> = (0..2u8).map(|i| SessionId::from_bytes([i; 16])).collect();
    let err = StoreError::Lookup(LookupError::AmbiguousSessionPrefix { prefix: "0".into(), candidates: ids, total: 3 });
    assert_eq!(
        err.to_string(),
        "session id prefix `0` is ambiguous: it matches 3 sessions: 00000000-0000-0000-0000-000000000000, \
             01010101-0101-0101-0101-010101010101, and 1 more"
    );
}
