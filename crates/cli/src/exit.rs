//! How seri ends: exit 0 on success, 1 when a run did not finish (turn
//! budget, failure), 2 on a usage error (a bad flag, an unknown session, a
//! configuration that cannot be used). The message names what was wrong.

use std::process::ExitCode;

/// A failure that ends the command, with its exit code.
#[derive(Debug)]
pub(crate) enum Exit {
    /// The command line or configuration cannot be used: exit 2.
    Usage(anyhow::Error),
    /// The work itself failed: exit 1.
    Failure(anyhow::Error),
}

impl Exit {
    /// A usage error from anything displayable.
    pub(crate) fn usage(message: impl std::fmt::Display) -> Self {
        Exit::Usage(anyhow::anyhow!("{message}"))
    }

    /// The exit code.
    pub(crate) fn code(&self) -> ExitCode {
        match self {
            Exit::Usage(_) => ExitCode::from(2),
            Exit::Failure(_) => ExitCode::from(1),
        }
    }

    /// The message, with its causes.
    pub(crate) fn message(&self) -> String {
        match self {
            Exit::Usage(e) | Exit::Failure(e) => format!("{e:#}"),
        }
    }
}

impl From<anyhow::Error> for Exit {
    fn from(e: anyhow::Error) -> Self {
        Exit::Failure(e)
    }
}

impl From<seri_store::StoreError> for Exit {
    fn from(e: seri_store::StoreError) -> Self {
        use seri_store::StoreErrorKind as K;
        match e.kind() {
            // Naming a session that is not there, or a profile that cannot
            // be used, is the person's to fix, not seri's failure.
            K::NotFound | K::Invalid | K::NewerSchema | K::Unusable => Exit::Usage(e.into()),
            K::Busy | K::Full | K::Conflict | K::Corrupt | K::Unavailable | K::Failed => Exit::Failure(e.into()),
        }
    }
}

impl From<seri_runloop::RunError> for Exit {
    fn from(e: seri_runloop::RunError) -> Self {
        match e {
            seri_runloop::RunError::Store(store) => store.into(),
            other => Exit::Failure(other.into()),
        }
    }
}

impl From<seri_runloop::CommandError> for Exit {
    fn from(e: seri_runloop::CommandError) -> Self {
        match e {
            seri_runloop::CommandError::Run(run) => run.into(),
            other => Exit::Failure(other.into()),
        }
    }
}
