//! `/permissions`: each tool's permission, the command rules and the mode in force.

use crate::repl::Repl;

impl Repl<'_> {
    /// `/permissions`: what each gated tool, MCP pattern and command rule says.
    pub(in crate::repl) fn permissions(&self) {
        let permissions = self.runtime.permissions();
        let policy = permissions.policy();
        for (tool, _) in seri_tools::permissions::GATED_TOOLS {
            println!("  {tool:<12} {}", policy.permission(tool));
        }
        for (pattern, permission) in policy.mcp_settings() {
            println!("  {pattern:<12} {permission}");
        }
        println!("  {:<12} ask, unless set above", "mcp__*");
        if policy.is_trusted() {
            println!("  --yes: every question is answered yes (deny still refuses)");
        }
        let commands = policy.commands();
        for (list, patterns) in [("allow", &commands.allow), ("ask", &commands.ask), ("deny", &commands.deny)] {
            for pattern in patterns {
                println!("  {:<12} {list}", pattern.to_string());
            }
        }
        println!("  permission mode: {} (Shift+Tab cycles)", self.mode());
        println!("Set them in config.json \"permissions\", or with --allow TOOL / --deny TOOL.");
    }
}
