//! The SQLite backend: opening, identifying and migrating a file
//! ([`connection`]), `BEGIN` / `BEGIN IMMEDIATE` transactions with the busy
//! retry, and how SQLite's errors become [`crate::StoreError`]s
//! ([`error`]). The queries are the store's one set (`crate::db`).

pub(crate) mod connection;
pub(crate) mod error;
mod fts5;
pub(crate) mod schema;
pub(crate) mod space;

pub(crate) use connection::Database;
