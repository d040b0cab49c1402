//! That SQLite's FTS5 takes every query the search's parser accepts, as
//! [`Query::to_fts5`] writes it: tested here, beside the driver, since
//! only the store's SQLite backend names it.

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use crate::search::Query;

    /// An FTS5 table as the search's (`search_text`) tokenizes, with a row.
    fn fts5() -> rusqlite::Connection {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5 (text, tokenize = 'unicode61 remove_diacritics 0'); \
             INSERT INTO t (text) VALUES ('retry policy a b');",
        )
        .unwrap();
        conn
    }

    proptest! {
        #[test]
        fn every_parsed_query_is_one_sqlite_fts5_accepts(
            parts in prop::collection::vec(prop_oneof![
                Just("AND"), Just("OR"), Just("NOT"), Just("-"), Just("("), Just(")"), Just("\""), Just("*"),
                Just("retry"), Just("pol*"), Just("a.b"), Just("NEAR"), Just("x:y"), Just("^"),
            ], 0..10)
        ) {
            let text = parts.join(" ");
            if let Ok(q) = Query::parse(&text) {
                let conn = fts5();
                let run = conn.query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [q.to_fts5()], |r| r.get::<_, i64>(0));
                prop_assert!(run.is_ok(), "{} → {}: {:?}", text, q.to_fts5(), run);
            }
        }
    }
}
