//! The PostgreSQL backend: connections and transactions
//! ([`connection`]), the schema of `postgres-schema.sql` ([`schema`]) and
//! how the server's errors become [`crate::StoreError`]s ([`error`]).
//! The queries themselves are the store's one set (`crate::db`), run
//! through [`crate::db::sql`].

pub(crate) mod connection;
pub(crate) mod error;
mod io;
pub(crate) mod listen;
pub(crate) mod relay;
pub(crate) mod schema;
pub(crate) mod space;
pub(crate) mod tls;

pub(crate) use connection::{Connection, Database};
