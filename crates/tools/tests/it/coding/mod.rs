//! The coding tools and their permission layer, on real temporary folders
//! and real processes.

mod bash;
mod commands;
mod contained;
mod deny;
mod edit;
mod escapes;
mod facts;
mod modes;
mod patterns;
mod permissions;
mod policy;
mod races;
mod read_file;
mod sandbox;
mod secrets;
mod walk;
mod world;
mod write_file;
