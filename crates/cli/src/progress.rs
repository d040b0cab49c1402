//! Progress bars on standard error, drawn only when it is a terminal: an
//! import's ([`Bar`], by bytes read) and the migration that indexes an
//! older profile's events for search ([`index_progress`]).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How many bytes an import must read for a progress bar: less goes by
/// before a bar would say anything.
const PROGRESS_FROM: u64 = 4 * 1024 * 1024;

/// An import's progress bar ([`progress_bar`]), for `seri import` and the
/// import of the profile's `sessions/` folder at a start.
pub(crate) struct Bar(ProgressBar);

impl Bar {
    pub(crate) fn new() -> Self {
        Self(progress_bar(std::io::IsTerminal::is_terminal(&std::io::stderr())))
    }

    /// What the import tells how far it got: drawn once there is enough
    /// to read for a bar to say something.
    pub(crate) fn tell(&self) -> impl FnMut(u64, u64) + '_ {
        |done, total| {
            if total >= PROGRESS_FROM {
                self.0.set_length(total);
                self.0.set_position(done);
            }
        }
    }

    /// Clears the bar.
    pub(crate) fn done(self) {
        self.0.finish_and_clear();
    }
}

/// `importing [#####>....] 120 MiB/400 MiB · 30 MiB/s · 9s` on one line of
/// standard error when it is a terminal (a bar that draws nothing
/// otherwise), cleared when each target is imported. The bytes are those
/// read, so a single large file moves it too.
fn progress_bar(terminal: bool) -> ProgressBar {
    if !terminal {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("importing [{bar:30}] {bytes}/{total_bytes} · {bytes_per_sec} · {eta}")
    {
        bar.set_style(style.progress_chars("#>."));
    }
    bar
}

/// Events a migration must index before it draws a progress bar: fewer
/// go by before a bar would say anything.
const BAR_FROM_EVENTS: u64 = 20_000;

/// The progress bar of the migration that indexes an older profile's
/// events for search, on standard error when it is a terminal.
pub(crate) fn index_progress() -> Option<seri_store::IndexProgress> {
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return None;
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("indexing sessions for search [{bar:30}] {pos}/{len} events · {eta}")
    {
        bar.set_style(style.progress_chars("#>."));
    }
    Some(seri_store::IndexProgress(std::sync::Arc::new(move |done, total| {
        if total < BAR_FROM_EVENTS {
            return;
        }
        bar.set_length(total);
        bar.set_position(done);
        if done >= total {
            bar.finish_and_clear();
        }
    })))
}
