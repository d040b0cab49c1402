//! How seri ends: exit 0 on success, 1 when a run did not finish (turn
//! budget, failure), 2 on a usage error (a bad flag, an unknown session, a
//! configuration that cannot be used), 130 when Ctrl-C stopped `seri -p`
//! (`headless::Ended`). The message names what was wrong.

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

    /// Whether the person's input was at fault (exit 2), not the work.
    pub(crate) fn is_usage(&self) -> bool {
        matches!(self, Exit::Usage(_))
    }

    /// The exit code.
    pub(crate) fn code(&self) -> ExitCode {
        match self {
            Exit::Usage(_) => ExitCode::from(2),
            Exit::Failure(_) => ExitCode::from(1),
        }
    }

    /// The message, with its causes: each cause once, so one the message
    /// already quotes (a store error's `{source}`) is not said again.
    pub(crate) fn message(&self) -> String {
        let (Exit::Usage(e) | Exit::Failure(e)) = self;
        let mut message = e.to_string();
        for cause in e.chain().skip(1) {
            let cause = cause.to_string();
            if !message.contains(&cause) {
                message.push_str(": ");
                message.push_str(&cause);
            }
        }
        message
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_the_message_already_quotes_is_said_once() {
        let quoted = seri_store::StoreError::Import(seri_store::ImportError::Folder {
            path: "/tmp/notes.jsonl".into(),
            source: std::io::Error::from_raw_os_error(20),
        });
        let message = Exit::from(quoted).message();
        assert_eq!(message.matches("Not a directory").count(), 1, "{message}");
        let chained = Exit::Failure(anyhow::anyhow!("inner").context("outer"));
        assert_eq!(chained.message(), "outer: inner");
    }
}
