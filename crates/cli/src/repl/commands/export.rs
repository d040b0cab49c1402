//! `/export [FILE]`: the session's transcript as markdown.

use seri_core::SessionId;

use crate::exit::Exit;
use crate::inspect;
use crate::repl::Repl;

impl Repl<'_> {
    /// `/export [FILE]`: the session's transcript as markdown, to FILE
    /// (default `seri-<id>.md` in the working directory); the path written.
    pub(in crate::repl) fn export(&self, id: SessionId, file: &str) -> Result<std::path::PathBuf, Exit> {
        let store = self.app.store.agent(&self.app.agent);
        let info = store.info(id)?;
        let mut bodies = Vec::new();
        store.each_body(id, seri_store::SeqRange::ALL, &mut |_, body| bodies.push(body))?;
        let text = crate::slash::transcript_markdown(&info.title, &inspect::short(self.app, id), &bodies);
        let path = match file.trim() {
            "" => self.app.cwd.join(format!("seri-{}.md", inspect::short(self.app, id))),
            given => self.app.cwd.join(given),
        };
        std::fs::write(&path, text)
            .map_err(|e| Exit::Failure(anyhow::anyhow!("cannot write {}: {e}", path.display())))?;
        Ok(path)
    }
}
