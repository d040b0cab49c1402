//! Drawing a schedule from its seed: which store, how many servers and
//! sessions, which clients send which messages when, and which faults
//! strike when. Pure: the same seed and backend give the same schedule, so
//! a failing seed replays (what it draws is the same; when the machine
//! gets to each step may differ).

use super::prng::{Rng, derive};

/// The store a schedule runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub(crate) const ALL: [Backend; 2] = [Backend::Sqlite, Backend::Postgres];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }

    /// `sqlite`, `postgres` or `both`.
    pub(crate) fn parse_list(text: &str) -> Option<Vec<Backend>> {
        match text {
            "sqlite" => Some(vec![Backend::Sqlite]),
            "postgres" | "postgresql" => Some(vec![Backend::Postgres]),
            "both" => Some(Backend::ALL.to_vec()),
            _ => None,
        }
    }

    fn salt(self) -> u64 {
        match self {
            Backend::Sqlite => 0x5117E,
            Backend::Postgres => 0x0905_76E5,
        }
    }
}

/// The seeds of `count` schedules drawn from `master` for `backend`: each
/// schedule gets a seed of its own, so any one of them replays alone.
pub(crate) fn schedule_seeds(master: u64, backend: Backend, count: u64) -> Vec<u64> {
    let mut rng = Rng::new(derive(master, backend.salt()));
    (0..count).map(|_| rng.next_u64()).collect()
}

/// What the model is asked to do with one message; the misbehaving model
/// server reads it from the message's `do:` word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Answer with the token.
    Plain,
    /// Call `bash` (`echo`), then answer.
    Bash,
    /// Call `bash` with a `sleep` first, so kills land inside the call.
    SlowBash,
    /// Call `continue_session`; the successor answers.
    Continue,
    /// Call the suite's MCP server's `echo`, then answer.
    Mcp,
    /// The check after the schedule: answered without provider faults.
    Probe,
}

impl Action {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Action::Plain => "plain",
            Action::Bash => "bash",
            Action::SlowBash => "slowbash",
            Action::Continue => "continue",
            Action::Mcp => "mcp",
            Action::Probe => "probe",
        }
    }

    pub(crate) fn from_word(word: &str) -> Option<Action> {
        [Action::Plain, Action::Bash, Action::SlowBash, Action::Continue, Action::Mcp, Action::Probe]
            .into_iter()
            .find(|a| a.word() == word)
    }
}

/// Who sends a client's messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClientKind {
    /// `POST /api/sessions/{id}/messages` to a server that is up.
    Api,
    /// `seri -r ID -p TEXT --output-format json`, one process a message.
    Cli,
    /// `seri -r ID` with its messages on standard input, one process.
    Repl,
}

impl ClientKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            ClientKind::Api => "api",
            ClientKind::Cli => "cli",
            ClientKind::Repl => "repl",
        }
    }
}

/// One message a client sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MessagePlan {
    /// `FQ-` and 12 hex digits, unique in the schedule: the checker pairs
    /// messages, answers and what clients were told by it.
    pub(crate) token: String,
    pub(crate) action: Action,
    /// API clients: `"wait": true` (200 at the end) or false (202 at once).
    pub(crate) wait: bool,
    /// How long the client pauses before sending it.
    pub(crate) pause_ms: u64,
}

impl MessagePlan {
    /// The text sent: the token, what to do, and a few words.
    pub(crate) fn text(&self) -> String {
        format!("{} do:{} please handle this message", self.token, self.action.word())
    }
}

/// One client: its kind, its session (an index into the schedule's
/// sessions), when it starts and what it sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClientPlan {
    pub(crate) kind: ClientKind,
    pub(crate) session: usize,
    pub(crate) start_ms: u64,
    pub(crate) messages: Vec<MessagePlan>,
}

/// A fault. Targets are picked when the fault strikes, among what runs
/// then (`pick` modulo their number), so the pick is drawn up front.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// `kill -9` of a running CLI or REPL process.
    KillCli { pick: u64 },
    /// `kill -9` of a server, started again after `restart_after_ms` if set.
    KillServer { pick: u64, restart_after_ms: Option<u64> },
    /// SIGTERM to a server, started again after `restart_after_ms` if set.
    TermServer { pick: u64, restart_after_ms: Option<u64> },
    /// The store goes away for `ms`: on SQLite another connection holds
    /// the write lock; on PostgreSQL the cluster stops and starts again.
    StoreOutage { ms: u64 },
    /// PostgreSQL only: every connection to the database is terminated.
    TerminateBackends,
}

impl Fault {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Fault::KillCli { .. } => "kill -9 cli",
            Fault::KillServer { .. } => "kill -9 server",
            Fault::TermServer { .. } => "sigterm server",
            Fault::StoreOutage { .. } => "store outage",
            Fault::TerminateBackends => "terminate backends",
        }
    }
}

/// A fault and when it strikes, in milliseconds from the schedule's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timed {
    pub(crate) at_ms: u64,
    pub(crate) fault: Fault,
}

/// Everything one schedule does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Schedule {
    pub(crate) seed: u64,
    pub(crate) backend: Backend,
    /// `seri serve` processes on the store (2 on PostgreSQL).
    pub(crate) servers: usize,
    /// Sessions created before the clients start.
    pub(crate) sessions: usize,
    /// `Some(window)`: the compact strategy with this context window, so
    /// compaction runs; `None`: the continue strategy.
    pub(crate) compact_window: Option<u64>,
    /// Whether the suite's MCP server is configured (its `echo` tool).
    pub(crate) mcp: bool,
    /// How often, in percent, the model server misbehaves on a request.
    pub(crate) provider_faults: u64,
    pub(crate) clients: Vec<ClientPlan>,
    pub(crate) faults: Vec<Timed>,
    /// How long faults keep striking, from the start.
    pub(crate) span_ms: u64,
}

/// What the drawing may use; the REPL and MCP can be left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Options {
    pub(crate) repl: bool,
    pub(crate) mcp: bool,
}

impl Schedule {
    /// The schedule `seed` names on `backend`.
    pub(crate) fn draw(seed: u64, backend: Backend, options: Options) -> Schedule {
        let mut rng = Rng::new(seed);
        let servers = match backend {
            Backend::Sqlite => 1 + rng.below(2) as usize,
            Backend::Postgres => 2,
        };
        let sessions = 1 + rng.below(3) as usize;
        let compact_window = rng.chance(25).then(|| 1000 * rng.between(8, 14));
        let mcp = options.mcp && rng.chance(35);
        let provider_faults = if rng.chance(25) { 0 } else { rng.between(5, 35) };
        let span_ms = rng.between(6_000, 16_000);
        let client_count = rng.between(2, 8) as usize;
        let mut clients = Vec::with_capacity(client_count);
        for c in 0..client_count {
            // REPLs are rarer: one process holds all of its messages.
            let kind = match rng.weighted(&[5, 4, if options.repl { 1 } else { 0 }]) {
                0 => ClientKind::Api,
                1 => ClientKind::Cli,
                _ => ClientKind::Repl,
            };
            let session = rng.below(sessions as u64) as usize;
            let start_ms = rng.below(span_ms / 2);
            let count = rng.between(1, if kind == ClientKind::Repl { 2 } else { 4 });
            let messages = (0..count)
                .map(|m| {
                    let weights = [5, 2, 1, if compact_window.is_none() { 1 } else { 0 }, if mcp { 2 } else { 0 }];
                    let action = [Action::Plain, Action::Bash, Action::SlowBash, Action::Continue, Action::Mcp]
                        [rng.weighted(&weights)];
                    MessagePlan {
                        token: token(seed, c as u64 * 64 + m),
                        action,
                        wait: rng.chance(60),
                        pause_ms: if m == 0 { 0 } else { rng.below(2_000) },
                    }
                })
                .collect();
            clients.push(ClientPlan { kind, session, start_ms, messages });
        }
        let fault_count = rng.between(1, 6);
        let mut faults: Vec<Timed> = (0..fault_count)
            .map(|_| {
                let at_ms = rng.between(500, span_ms);
                let restart = |rng: &mut Rng| rng.chance(75).then(|| rng.between(300, 4_000));
                let weights = [3, 3, 2, 2, if backend == Backend::Postgres { 2 } else { 0 }];
                let fault = match rng.weighted(&weights) {
                    0 => Fault::KillCli { pick: rng.next_u64() },
                    1 => Fault::KillServer { pick: rng.next_u64(), restart_after_ms: restart(&mut rng) },
                    2 => Fault::TermServer { pick: rng.next_u64(), restart_after_ms: restart(&mut rng) },
                    3 => Fault::StoreOutage { ms: rng.between(1_000, 8_000) },
                    _ => Fault::TerminateBackends,
                };
                Timed { at_ms, fault }
            })
            .collect();
        faults.sort_by_key(|f| f.at_ms);
        Schedule { seed, backend, servers, sessions, compact_window, mcp, provider_faults, clients, faults, span_ms }
    }

    /// Every message of the schedule, with its client's index.
    #[cfg(test)]
    pub(crate) fn messages(&self) -> impl Iterator<Item = (usize, &MessagePlan)> {
        self.clients.iter().enumerate().flat_map(|(c, client)| client.messages.iter().map(move |m| (c, m)))
    }

    /// One line per part, for a failing schedule's report.
    pub(crate) fn describe(&self) -> String {
        let mut lines = vec![format!(
            "{} server(s), {} session(s), {} strategy, mcp {}, provider faults {}%, span {} ms",
            self.servers,
            self.sessions,
            match self.compact_window {
                Some(w) => format!("compact (window {w})"),
                None => "continue".to_owned(),
            },
            if self.mcp { "on" } else { "off" },
            self.provider_faults,
            self.span_ms
        )];
        for (i, c) in self.clients.iter().enumerate() {
            let messages: Vec<String> = c
                .messages
                .iter()
                .map(|m| {
                    let wait = if c.kind == ClientKind::Api { if m.wait { " wait" } else { " nowait" } } else { "" };
                    format!("{} {}{wait}", m.token, m.action.word())
                })
                .collect();
            lines.push(format!(
                "client {i}: {} on session {} from {} ms: {}",
                c.kind.name(),
                c.session,
                c.start_ms,
                messages.join(", ")
            ));
        }
        for f in &self.faults {
            let extra = match f.fault {
                Fault::KillServer { restart_after_ms: Some(ms), .. }
                | Fault::TermServer { restart_after_ms: Some(ms), .. } => format!(", restarted after {ms} ms"),
                Fault::StoreOutage { ms } => format!(" for {ms} ms"),
                _ => String::new(),
            };
            lines.push(format!("at {} ms: {}{extra}", f.at_ms, f.fault.name()));
        }
        lines.join("\n")
    }
}

/// The token of message `n` of a schedule: `FQ-` and 12 hex digits.
pub(crate) fn token(seed: u64, n: u64) -> String {
    format!("FQ-{:012x}", derive(seed, n) & 0xFFFF_FFFF_FFFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Options = Options { repl: true, mcp: true };

    #[test]
    fn a_seed_draws_the_same_schedule_every_time() {
        for seed in [0, 1, 0xDEAD_BEEF, u64::MAX] {
            for backend in Backend::ALL {
                assert_eq!(Schedule::draw(seed, backend, ALL), Schedule::draw(seed, backend, ALL));
            }
        }
        assert_ne!(Schedule::draw(1, Backend::Sqlite, ALL), Schedule::draw(2, Backend::Sqlite, ALL));
    }

    #[test]
    fn schedules_stay_within_their_bounds() {
        for seed in schedule_seeds(99, Backend::Postgres, 200) {
            for backend in Backend::ALL {
                let s = Schedule::draw(seed, backend, ALL);
                assert!((2..=8).contains(&s.clients.len()), "{}", s.describe());
                assert!((1..=3).contains(&s.sessions));
                assert!((1..=6).contains(&s.faults.len()));
                assert!(s.faults.windows(2).all(|w| w[0].at_ms <= w[1].at_ms), "faults in time order");
                assert!(s.faults.iter().all(|f| f.at_ms <= s.span_ms));
                assert!(s.clients.iter().all(|c| c.session < s.sessions && !c.messages.is_empty()));
                match backend {
                    Backend::Postgres => assert_eq!(s.servers, 2),
                    Backend::Sqlite => {
                        assert!((1..=2).contains(&s.servers));
                        let terminate = s.faults.iter().any(|f| f.fault == Fault::TerminateBackends);
                        assert!(!terminate, "no PostgreSQL fault on SQLite");
                    }
                }
                // Compaction and continuation are not drawn together: a
                // compacting session never continues.
                if s.compact_window.is_some() {
                    assert!(s.messages().all(|(_, m)| m.action != Action::Continue));
                }
                if !s.mcp {
                    assert!(s.messages().all(|(_, m)| m.action != Action::Mcp));
                }
                let mut tokens: Vec<&str> = s.messages().map(|(_, m)| m.token.as_str()).collect();
                let count = tokens.len();
                tokens.sort_unstable();
                tokens.dedup();
                assert_eq!(tokens.len(), count, "tokens are unique in a schedule");
            }
        }
    }

    #[test]
    fn everything_is_drawn_somewhere_and_options_leave_things_out() {
        let schedules: Vec<Schedule> = schedule_seeds(5, Backend::Postgres, 300)
            .into_iter()
            .map(|s| Schedule::draw(s, Backend::Postgres, ALL))
            .collect();
        let kinds = |k: ClientKind| schedules.iter().any(|s| s.clients.iter().any(|c| c.kind == k));
        assert!(kinds(ClientKind::Api) && kinds(ClientKind::Cli) && kinds(ClientKind::Repl));
        let fault = |f: fn(&Fault) -> bool| schedules.iter().any(|s| s.faults.iter().any(|t| f(&t.fault)));
        assert!(fault(|f| matches!(f, Fault::KillCli { .. })));
        assert!(fault(|f| matches!(f, Fault::KillServer { .. })));
        assert!(fault(|f| matches!(f, Fault::TermServer { .. })));
        assert!(fault(|f| matches!(f, Fault::StoreOutage { .. })));
        assert!(fault(|f| matches!(f, Fault::TerminateBackends)));
        for action in [Action::Plain, Action::Bash, Action::SlowBash, Action::Continue, Action::Mcp] {
            assert!(schedules.iter().any(|s| s.messages().any(|(_, m)| m.action == action)), "{action:?}");
        }
        assert!(schedules.iter().any(|s| s.compact_window.is_some()));

        let plain = Options { repl: false, mcp: false };
        for seed in schedule_seeds(5, Backend::Sqlite, 100) {
            let s = Schedule::draw(seed, Backend::Sqlite, plain);
            assert!(s.clients.iter().all(|c| c.kind != ClientKind::Repl) && !s.mcp);
        }
    }

    #[test]
    fn seeds_of_a_run_differ_per_backend_and_repeat_per_master_seed() {
        assert_eq!(schedule_seeds(3, Backend::Sqlite, 5), schedule_seeds(3, Backend::Sqlite, 5));
        assert_ne!(schedule_seeds(3, Backend::Sqlite, 5), schedule_seeds(3, Backend::Postgres, 5));
        // A longer run starts with the shorter run's schedules.
        assert_eq!(schedule_seeds(3, Backend::Sqlite, 9)[..5], schedule_seeds(3, Backend::Sqlite, 5)[..]);
    }

    #[test]
    fn message_text_carries_token_and_action() {
        let m = MessagePlan { token: token(1, 2), action: Action::SlowBash, wait: true, pause_ms: 0 };
        assert!(m.token.starts_with("FQ-") && m.token.len() == 15, "{}", m.token);
        assert_eq!(m.text(), format!("{} do:slowbash please handle this message", m.token));
        assert_eq!(Action::from_word("slowbash"), Some(Action::SlowBash));
        assert_eq!(Action::from_word("nope"), None);
    }
}
