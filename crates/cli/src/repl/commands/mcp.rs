//! `/mcp`: each MCP server, its state and tools, and the project servers
//! that wait to be trusted.

use crate::repl::Repl;

impl Repl<'_> {
    /// `/mcp`: the servers as they stand.
    pub(in crate::repl) fn mcp(&self) {
        let reports = self.app.mcp.get().map(|m| m.report()).unwrap_or_default();
        let untrusted = crate::mcp::config(self.app).map(|c| c.untrusted).unwrap_or_default();
        print!("{}", crate::mcp::render(&reports, &untrusted));
    }
}
