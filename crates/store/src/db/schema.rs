//! The schemas and their migrations, one file per backend, read the same
//! way: `sqlite-schema.sql` and `postgres-schema.sql`, each split at its
//! `-- migration N: title` lines and applied in order. SQLite records the
//! version in `PRAGMA user_version`; PostgreSQL in the one-row table
//! `seri_schema` (see `postgres-schema.sql`).
//!
//! Identifying a database before anything is written, and applying the
//! migrations, is each backend's (`sqlite/schema.rs`, `postgres/schema.rs`).

use crate::error::{OpenError, Result, StoreError};

/// `PRAGMA application_id` of every seri database: "SERI" in ASCII.
pub const APPLICATION_ID: i32 = i32::from_be_bytes(*b"SERI");

/// The schema version this build writes: the number of migrations in
/// `sqlite-schema.sql`. Bump it when appending a migration.
pub const SCHEMA_VERSION: i64 = 23;

/// The schema file, compiled in.
pub const SCHEMA_SQL: &str = include_str!("../../sqlite-schema.sql");

/// The PostgreSQL schema version this build writes: the number of
/// migrations in `postgres-schema.sql`. Bump it when appending a migration.
pub const POSTGRES_SCHEMA_VERSION: i64 = 14;

/// The PostgreSQL schema file, compiled in.
pub const POSTGRES_SCHEMA_SQL: &str = include_str!("../../postgres-schema.sql");

/// The SQLite migration that makes the search index: the events written
/// before it are indexed once the migrations run, in their transaction.
pub(crate) const SQLITE_SEARCH_MIGRATION: i64 = 21;

/// [`SQLITE_SEARCH_MIGRATION`] of PostgreSQL.
pub(crate) const POSTGRES_SEARCH_MIGRATION: i64 = 13;

const MARKER: &str = "-- migration ";

/// One migration: a numbered section of the schema file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Migration {
    /// The `user_version` after it ran.
    pub(crate) version: i64,
    /// What it does, from its marker line.
    pub(crate) title: &'static str,
    /// Its statements.
    pub(crate) sql: &'static str,
}

/// Splits the schema file into its migrations, checking that they are
/// numbered 1, 2, 3, … and that there are [`SCHEMA_VERSION`] of them.
pub(crate) fn migrations() -> Result<Vec<Migration>> {
    parse("sqlite-schema.sql", SCHEMA_SQL, SCHEMA_VERSION)
}

/// The migrations of `postgres-schema.sql`, checked the same way.
pub(crate) fn postgres_migrations() -> Result<Vec<Migration>> {
    parse("postgres-schema.sql", POSTGRES_SCHEMA_SQL, POSTGRES_SCHEMA_VERSION)
}

fn parse(file: &'static str, text: &'static str, expected: i64) -> Result<Vec<Migration>> {
    let bad = |problem: String| StoreError::Open(OpenError::SchemaFile { file, problem });
    // (version, title, where the marker line starts, where the body starts)
    let mut heads: Vec<(i64, &'static str, usize, usize)> = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let Some(rest) = line.strip_prefix(MARKER) else { continue };
        let (number, title) =
            rest.split_once(':').ok_or_else(|| bad(format!("marker line `{}` has no `:`", line.trim_end())))?;
        let version: i64 =
            number.trim().parse().map_err(|_| bad(format!("marker line `{}` has no number", line.trim_end())))?;
        let wanted = heads.len() as i64 + 1;
        if version != wanted {
            return Err(bad(format!("migration {version} where migration {wanted} was expected")));
        }
        heads.push((version, title.trim(), start, offset));
    }
    if heads.len() as i64 != expected {
        return Err(bad(format!("{} migrations, but SCHEMA_VERSION is {expected}", heads.len())));
    }
    let ends = heads.iter().skip(1).map(|h| h.2).chain([text.len()]);
    Ok(heads
        .iter()
        .zip(ends)
        .map(|(&(version, title, _, body), end)| Migration { version, title, sql: &text[body..end] })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_file_splits_into_schema_version_migrations() {
        let all = migrations().unwrap();
        assert_eq!(all.len() as i64, SCHEMA_VERSION);
        assert_eq!(all[0].title, "sessions, append-only events, continuation edges");
        assert!(all[0].sql.contains("CREATE TABLE session_continuations"));
        // Every statement of the file is in exactly one migration.
        let statements: usize = all.iter().map(|m| m.sql.matches("CREATE ").count()).sum();
        assert_eq!(statements, SCHEMA_SQL.matches("CREATE ").count());
    }

    #[test]
    fn the_postgres_schema_file_splits_into_its_migrations() {
        let all = postgres_migrations().unwrap();
        assert_eq!(all.len() as i64, POSTGRES_SCHEMA_VERSION);
        let statements: usize = all.iter().map(|m| m.sql.matches("CREATE TABLE").count()).sum();
        // Every table SQLite has but `search_pending` (PostgreSQL's index is
        // written whole with each event) and `session_forks_next` (SQLite
        // builds a table again to change a CHECK; PostgreSQL alters it), and
        // the version table.
        let sqlite_only = ["CREATE TABLE search_pending", "CREATE TABLE session_forks_next"];
        assert!(sqlite_only.iter().all(|t| SCHEMA_SQL.contains(t)));
        assert_eq!(statements, SCHEMA_SQL.matches("CREATE TABLE").count() - sqlite_only.len() + 1);
    }

    #[test]
    fn later_migrations_are_cut_at_their_markers() {
        let text = "-- header\n-- migration 1: one\nCREATE TABLE a (x);\n-- migration 2: two\nCREATE TABLE b (y);\n";
        let all = parse("t.sql", text, 2).unwrap();
        assert_eq!(all.iter().map(|m| (m.version, m.title)).collect::<Vec<_>>(), [(1, "one"), (2, "two")]);
        assert_eq!(all[0].sql, "CREATE TABLE a (x);\n");
        assert_eq!(all[1].sql, "CREATE TABLE b (y);\n");
    }

    #[test]
    fn misnumbered_or_miscounted_files_are_refused() {
        let gap = "-- migration 1: one\nSELECT 1;\n-- migration 3: three\nSELECT 3;\n";
        assert_eq!(
            parse("t.sql", gap, 2).unwrap_err().to_string(),
            "t.sql is malformed: migration 3 where migration 2 was expected"
        );
        let one = "-- migration 1: one\nSELECT 1;\n";
        assert_eq!(
            parse("t.sql", one, 2).unwrap_err().to_string(),
            "t.sql is malformed: 1 migrations, but SCHEMA_VERSION is 2"
        );
    }
}
