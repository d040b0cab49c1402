//! A person's search query, parsed into a small typed tree before any
//! database sees it, and rendered from the tree into each backend's own
//! syntax: SQLite FTS5's `MATCH` and PostgreSQL's `to_tsquery`.
//!
//! Parsing it ourselves is what keeps a typo from ever reaching a database
//! as a syntax error: every query either becomes a [`Query`] whose
//! renderings both engines accept, or a [`QueryError`] naming what was
//! wrong and where. Words are folded the way the index folds them
//! ([`words`]): lowercase runs of letters and digits, so `lib.rs` is the
//! phrase `lib rs` on both backends.
//!
//! The syntax, as a search box's users expect it:
//!
//! - `retry policy`: both words (juxtaposition is `AND`);
//! - `"retry policy"`: the phrase, words next to each other;
//! - `retr*`: a prefix (also the last word of a phrase: `"retry pol"*`);
//! - `a OR b`, `a AND b`, `NOT b` / `-b`, and parentheses. Operators are
//!   upper case; `or` and `not` are words. `NOT` binds tightest, then
//!   `AND`, then `OR`.
//!
//! A `NOT` needs a positive word beside it (`retry NOT policy`): a query
//! of only exclusions would list every event of every session.

use std::fmt::Write as _;

/// The longest query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;

/// The most words (and phrase words) one query may hold.
pub const MAX_QUERY_WORDS: usize = 64;

/// A parsed query: what to find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// One word or phrase.
    Term(Term),
    /// Every one of `all`, and none of `none`; `all` is never empty.
    And {
        /// What must match.
        all: Vec<Query>,
        /// What must not.
        none: Vec<Query>,
    },
    /// Any of these (two or more).
    Or(Vec<Query>),
}

/// Words that must stand next to each other, in order (one word is a
/// phrase of one); `prefix`: the last may be the start of a longer word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// Folded words ([`words`]), never empty.
    pub words: Vec<String>,
    /// Whether the last word is a prefix.
    pub prefix: bool,
}

/// Why a query was refused, with the character position it was found at
/// (counted from 0), so a caller can point at it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// Nothing to search for.
    #[error("the query has no words to search for")]
    Empty,
    /// Longer than [`MAX_QUERY_CHARS`] or [`MAX_QUERY_WORDS`].
    #[error("the query is too long: at most {MAX_QUERY_CHARS} characters and {MAX_QUERY_WORDS} words")]
    TooLong,
    /// A `"` with no closing one.
    #[error("the quote at character {at} is never closed")]
    UnclosedQuote {
        /// Where the quote opened.
        at: usize,
    },
    /// A `(` with no closing one.
    #[error("the parenthesis at character {at} is never closed")]
    UnclosedParen {
        /// Where it opened.
        at: usize,
    },
    /// A `)` with no opening one.
    #[error("the `)` at character {at} closes nothing")]
    StrayParen {
        /// Where it is.
        at: usize,
    },
    /// An operator with nothing (or only another operator) on one side.
    #[error("`{operator}` at character {at} has nothing {side} it")]
    MissingOperand {
        /// `AND`, `OR` or `NOT`.
        operator: &'static str,
        /// `before` or `after`.
        side: &'static str,
        /// Where the operator is.
        at: usize,
    },
    /// `*` not right after a word or a phrase.
    #[error("the `*` at character {at} follows no word: write it right after one, as in `retr*`")]
    StrayStar {
        /// Where it is.
        at: usize,
    },
    /// A group of only exclusions (`NOT a`, `a OR -b`).
    #[error("`{text}` only excludes: add a word to search for, as in `WORD NOT {text_tail}`")]
    OnlyExcluded {
        /// The exclusion as written.
        text: String,
        /// The excluded part, for the hint.
        text_tail: String,
    },
}

/// The words of `text` as the index folds them: runs of letters and
/// digits, lower-cased. The same split the snippet marks by and the
/// PostgreSQL index is built from; SQLite's `unicode61` tokenizer (with
/// diacritics kept) splits the same way.
pub fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start = None;
    let mut chars = text.char_indices().chain([(text.len(), ' ')]);
    std::iter::from_fn(move || {
        for (at, c) in chars.by_ref() {
            let inside = at < text.len() && c.is_alphanumeric();
            match (start, inside) {
                (None, true) => start = Some(at),
                (Some(from), false) => {
                    start = None;
                    return Some((from, &text[from..at]));
                }
                _ => {}
            }
        }
        None
    })
}

/// A word folded for the index: lower case.
pub fn fold(word: &str) -> String {
    word.to_lowercase()
}

impl Query {
    /// Parses a query as a person typed it.
    pub fn parse(text: &str) -> Result<Query, QueryError> {
        if text.chars().count() > MAX_QUERY_CHARS {
            return Err(QueryError::TooLong);
        }
        let tokens = lex(text)?;
        let words: usize = tokens
            .iter()
            .map(|t| match &t.kind {
                Tok::Word(w) | Tok::Phrase(w) => w.len(),
                _ => 0,
            })
            .sum();
        if words > MAX_QUERY_WORDS {
            return Err(QueryError::TooLong);
        }
        let mut parser = Parser { tokens: &tokens, at: 0, text };
        let node = parser.or()?;
        if let Some(token) = parser.peek() {
            return Err(match token.kind {
                Tok::Close => QueryError::StrayParen { at: token.at },
                _ => QueryError::Empty,
            });
        }
        let node = node.ok_or(QueryError::Empty)?;
        node.into_query(text)
    }

    /// The query in SQLite FTS5's `MATCH` syntax: every word quoted, every
    /// group parenthesized, so no word is ever read as an operator.
    pub fn to_fts5(&self) -> String {
        let mut out = String::new();
        self.write_fts5(&mut out);
        out
    }

    fn write_fts5(&self, out: &mut String) {
        match self {
            Query::Term(term) => {
                let _ = write!(out, "\"{}\"", term.words.join(" "));
                if term.prefix {
                    out.push('*');
                }
            }
            Query::And { all, none } => {
                out.push('(');
                for (i, q) in all.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" AND ");
                    }
                    q.write_fts5(out);
                }
                out.push(')');
                for q in none {
                    out.push_str(" NOT ");
                    q.write_fts5(out);
                }
            }
            Query::Or(any) => {
                out.push('(');
                for (i, q) in any.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" OR ");
                    }
                    q.write_fts5(out);
                }
                out.push(')');
            }
        }
    }

    /// The query in PostgreSQL's `to_tsquery` syntax (for the `simple`
    /// configuration): phrases with `<->`, prefixes with `:*`.
    pub fn to_tsquery(&self) -> String {
        let mut out = String::new();
        self.write_tsquery(&mut out);
        out
    }

    fn write_tsquery(&self, out: &mut String) {
        match self {
            Query::Term(term) => {
                out.push('(');
                for (i, word) in term.words.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" <-> ");
                    }
                    // Folded words hold only letters and digits, but a
                    // quote is doubled anyway, as the syntax wants.
                    let _ = write!(out, "'{}'", word.replace('\'', "''"));
                    if term.prefix && i + 1 == term.words.len() {
                        out.push_str(":*");
                    }
                }
                out.push(')');
            }
            Query::And { all, none } => {
                out.push('(');
                for (i, q) in all.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" & ");
                    }
                    q.write_tsquery(out);
                }
                for q in none {
                    out.push_str(" & !");
                    q.write_tsquery(out);
                }
                out.push(')');
            }
            Query::Or(any) => {
                out.push('(');
                for (i, q) in any.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" | ");
                    }
                    q.write_tsquery(out);
                }
                out.push(')');
            }
        }
    }

    /// Every term the query looks for (not those it excludes): what a
    /// snippet marks.
    pub fn wanted_terms(&self) -> Vec<&Term> {
        let mut out = Vec::new();
        self.collect_wanted(&mut out);
        out
    }

    fn collect_wanted<'q>(&'q self, out: &mut Vec<&'q Term>) {
        match self {
            Query::Term(term) => out.push(term),
            Query::And { all, .. } => all.iter().for_each(|q| q.collect_wanted(out)),
            Query::Or(any) => any.iter().for_each(|q| q.collect_wanted(out)),
        }
    }
}

impl std::fmt::Display for Query {
    /// The query in its own syntax, normalized: what [`Query::parse`]
    /// reads back as the same query.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Query::Term(term) if term.words.len() == 1 => {
                write!(f, "{}{}", term.words[0], if term.prefix { "*" } else { "" })
            }
            Query::Term(term) => write!(f, "\"{}\"{}", term.words.join(" "), if term.prefix { "*" } else { "" }),
            Query::And { all, none } => {
                f.write_str("(")?;
                for (i, q) in all.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" AND ")?;
                    }
                    write!(f, "{q}")?;
                }
                for q in none {
                    write!(f, " NOT {q}")?;
                }
                f.write_str(")")
            }
            Query::Or(any) => {
                f.write_str("(")?;
                for (i, q) in any.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" OR ")?;
                    }
                    write!(f, "{q}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// One token of a query, at its character position.
#[derive(Debug, Clone, PartialEq)]
struct Token {
    kind: Tok,
    at: usize,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A bare word's folded words (`lib.rs`: two), maybe none (`--`).
    Word(Vec<String>),
    /// A quoted phrase's folded words.
    Phrase(Vec<String>),
    Star,
    And,
    Or,
    Not,
    Open,
    Close,
}

fn folded(text: &str) -> Vec<String> {
    words(text).map(|(_, w)| fold(w)).collect()
}

fn lex(text: &str) -> Result<Vec<Token>, QueryError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let special = |c: char| c.is_whitespace() || matches!(c, '"' | '(' | ')' | '*');
    while i < chars.len() {
        let c = chars[i];
        let at = i;
        match c {
            c if c.is_whitespace() => i += 1,
            '"' => {
                let close = chars[i + 1..].iter().position(|&c| c == '"').ok_or(QueryError::UnclosedQuote { at })?;
                let inner: String = chars[i + 1..i + 1 + close].iter().collect();
                out.push(Token { kind: Tok::Phrase(folded(&inner)), at });
                i += close + 2;
            }
            '(' => {
                out.push(Token { kind: Tok::Open, at });
                i += 1;
            }
            ')' => {
                out.push(Token { kind: Tok::Close, at });
                i += 1;
            }
            '*' => {
                out.push(Token { kind: Tok::Star, at });
                i += 1;
            }
            // A minus that starts a word excludes it; inside a word
            // (`retry-policy`) it separates, and alone it is nothing.
            '-' if (i == 0 || chars[i - 1].is_whitespace() || chars[i - 1] == '(')
                && chars.get(i + 1).is_some_and(|&c| !c.is_whitespace() && !matches!(c, ')' | '*' | '-')) =>
            {
                out.push(Token { kind: Tok::Not, at });
                i += 1;
            }
            _ => {
                let start = i;
                while i < chars.len() && !special(chars[i]) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let kind = match word.as_str() {
                    "AND" => Tok::And,
                    "OR" => Tok::Or,
                    "NOT" => Tok::Not,
                    _ => Tok::Word(folded(&word)),
                };
                out.push(Token { kind, at: start });
            }
        }
    }
    Ok(out)
}

/// The parse tree before it is checked: `Not` may stand anywhere here.
#[derive(Debug)]
enum Node {
    Term(Term),
    Not(Box<Node>, usize),
    And(Vec<Node>),
    Or(Vec<Node>),
}

struct Parser<'t> {
    tokens: &'t [Token],
    at: usize,
    text: &'t str,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn or(&mut self) -> Result<Option<Node>, QueryError> {
        let mut any = Vec::new();
        if let Some(first) = self.and()? {
            any.push(first);
        }
        while let Some(token) = self.peek().filter(|t| t.kind == Tok::Or) {
            let at = token.at;
            if any.is_empty() {
                return Err(QueryError::MissingOperand { operator: "OR", side: "before", at });
            }
            self.at += 1;
            match self.and()? {
                Some(next) => any.push(next),
                None => return Err(QueryError::MissingOperand { operator: "OR", side: "after", at }),
            }
        }
        Ok(match any.len() {
            0 => None,
            1 => any.pop(),
            _ => Some(Node::Or(any)),
        })
    }

    fn and(&mut self) -> Result<Option<Node>, QueryError> {
        let mut all = Vec::new();
        loop {
            match self.peek().map(|t| (&t.kind, t.at)) {
                Some((Tok::And, at)) => {
                    if all.is_empty() {
                        return Err(QueryError::MissingOperand { operator: "AND", side: "before", at });
                    }
                    self.at += 1;
                    match self.unary()? {
                        Some(Some(next)) => all.push(next),
                        Some(None) => {}
                        None => return Err(QueryError::MissingOperand { operator: "AND", side: "after", at }),
                    }
                }
                Some((Tok::Or | Tok::Close, _)) | None => break,
                Some(_) => match self.unary()? {
                    Some(Some(next)) => all.push(next),
                    Some(None) => {}
                    None => break,
                },
            }
        }
        Ok(match all.len() {
            0 => None,
            1 => all.pop(),
            _ => Some(Node::And(all)),
        })
    }

    /// `None`: nothing here to read; `Some(None)`: a word with no letters
    /// or digits (`--`), read and dropped.
    fn unary(&mut self) -> Result<Option<Option<Node>>, QueryError> {
        let Some(token) = self.peek().cloned() else { return Ok(None) };
        match token.kind {
            Tok::Not => {
                self.at += 1;
                match self.unary()? {
                    Some(Some(inner)) => Ok(Some(Some(Node::Not(Box::new(inner), token.at)))),
                    _ => Err(QueryError::MissingOperand { operator: "NOT", side: "after", at: token.at }),
                }
            }
            Tok::Open => {
                self.at += 1;
                let inner = self.or()?;
                match self.peek() {
                    Some(t) if t.kind == Tok::Close => self.at += 1,
                    _ => return Err(QueryError::UnclosedParen { at: token.at }),
                }
                self.star_after(inner.is_some())?;
                Ok(Some(inner))
            }
            Tok::Word(words) | Tok::Phrase(words) => {
                self.at += 1;
                let prefix = self.star_after(!words.is_empty())?;
                let some = !words.is_empty();
                Ok(Some(some.then_some(Node::Term(Term { words, prefix }))))
            }
            Tok::Star => Err(QueryError::StrayStar { at: token.at }),
            Tok::And | Tok::Or | Tok::Close => Ok(None),
        }
    }

    /// Reads a `*` right after a term (`true`), which only a term may have.
    fn star_after(&mut self, term: bool) -> Result<bool, QueryError> {
        match self.peek() {
            Some(t) if t.kind == Tok::Star => {
                let at = t.at;
                // Only right after: `retr *` is a stray star.
                let touching = at > 0 && self.text.chars().nth(at - 1).is_some_and(|c| !c.is_whitespace() && c != ')');
                if !term || !touching {
                    return Err(QueryError::StrayStar { at });
                }
                self.at += 1;
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

impl Node {
    /// Checks that every group has something to find, and flattens it.
    fn into_query(self, text: &str) -> Result<Query, QueryError> {
        match self {
            Node::Term(term) => Ok(Query::Term(term)),
            Node::Not(inner, at) => match *inner {
                // `NOT NOT a` is `a`.
                Node::Not(inner, _) => inner.into_query(text),
                inner => Err(only_excluded(text, at, &inner)),
            },
            Node::And(nodes) => {
                let (mut all, mut none) = (Vec::new(), Vec::new());
                let mut first_not = None;
                for node in nodes {
                    match node {
                        Node::Not(inner, at) => match *inner {
                            Node::Not(inner, _) => all.push(inner.into_query(text)?),
                            inner => {
                                first_not.get_or_insert((at, inner.describe()));
                                none.push(inner.into_query_excluded(text)?);
                            }
                        },
                        node => match node.into_query(text)? {
                            Query::And { all: inner_all, none: inner_none } => {
                                all.extend(inner_all);
                                none.extend(inner_none);
                            }
                            q => all.push(q),
                        },
                    }
                }
                if all.is_empty() {
                    let (at, tail) = first_not.unwrap_or((0, String::new()));
                    return Err(QueryError::OnlyExcluded { text: excerpt(text, at), text_tail: tail });
                }
                if none.is_empty() && all.len() == 1 {
                    return Ok(all.remove(0));
                }
                Ok(Query::And { all, none })
            }
            Node::Or(nodes) => {
                let mut any = Vec::new();
                for node in nodes {
                    match node.into_query(text)? {
                        Query::Or(inner) => any.extend(inner),
                        q => any.push(q),
                    }
                }
                Ok(Query::Or(any))
            }
        }
    }

    /// The inside of a `NOT`: checked like any query, but a group of only
    /// exclusions is as wrong inside as outside.
    fn into_query_excluded(self, text: &str) -> Result<Query, QueryError> {
        self.into_query(text)
    }

    /// The node as the hint of [`QueryError::OnlyExcluded`] shows it.
    fn describe(&self) -> String {
        match self {
            Node::Term(term) => Query::Term(term.clone()).to_string(),
            Node::Not(inner, _) => format!("NOT {}", inner.describe()),
            Node::And(nodes) => format!("({})", nodes.iter().map(Node::describe).collect::<Vec<_>>().join(" ")),
            Node::Or(nodes) => format!("({})", nodes.iter().map(Node::describe).collect::<Vec<_>>().join(" OR ")),
        }
    }
}

fn only_excluded(text: &str, at: usize, inner: &Node) -> QueryError {
    QueryError::OnlyExcluded { text: excerpt(text, at), text_tail: inner.describe() }
}

/// The query's text from character `at` on, trimmed, for an error.
fn excerpt(text: &str, at: usize) -> String {
    text.chars().skip(at).collect::<String>().trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// How a query parses, renders for each engine, or is refused: one line each.
    fn render(text: &str) -> String {
        match Query::parse(text) {
            Ok(q) => format!("{text}\n  query:    {q}\n  fts5:     {}\n  tsquery:  {}", q.to_fts5(), q.to_tsquery()),
            Err(e) => format!("{text}\n  refused:  {e}"),
        }
    }

    #[test]
    fn queries_parse_and_render_for_both_engines() {
        let cases = [
            "retry policy",
            "\"retry policy\"",
            "retr*",
            "\"retry pol\"*",
            "lib.rs",
            "crates/store/src/lib.rs",
            "retry OR backoff",
            "retry AND backoff OR jitter",
            "retry NOT backoff",
            "retry -backoff -\"exponential backoff\"",
            "(retry OR backoff) jitter",
            "retry-policy",
            "or and not",
            "NOT NOT retry",
            "Ünïcode ÉTÉ 東京",
            "retry -- policy",
        ];
        let out: Vec<String> = cases.iter().map(|c| render(c)).collect();
        insta::assert_snapshot!("queries_parse_and_render", out.join("\n"));
    }

    #[test]
    fn queries_the_syntax_refuses_say_why() {
        let cases = [
            "",
            "   ",
            "--",
            "\"retry policy",
            "(retry",
            "retry)",
            "retry OR",
            "OR retry",
            "AND retry",
            "retry AND",
            "NOT",
            "NOT retry",
            "-retry",
            "retry OR -backoff",
            "*",
            "retry *",
            "\"\"",
        ];
        let out: Vec<String> = cases.iter().map(|c| render(c)).collect();
        insta::assert_snapshot!("queries_refused", out.join("\n"));
    }

    #[test]
    fn words_split_and_fold_as_the_index_does() {
        let got: Vec<String> = words("Fix lib.rs: retry_policy, ÉTÉ-2 x86").map(|(_, w)| fold(w)).collect();
        assert_eq!(got, ["fix", "lib", "rs", "retry", "policy", "été", "2", "x86"]);
    }

    fn word() -> impl Strategy<Value = String> {
        "[a-z0-9]{1,6}"
    }

    fn term() -> impl Strategy<Value = Query> {
        (prop::collection::vec(word(), 1..3), any::<bool>())
            .prop_map(|(words, prefix)| Query::Term(Term { words, prefix }))
    }

    fn tree() -> impl Strategy<Value = Query> {
        term().prop_recursive(3, 12, 3, |inner| {
            prop_oneof![
                (prop::collection::vec(inner.clone(), 1..3), prop::collection::vec(inner.clone(), 0..2))
                    .prop_filter("an AND of one is that one", |(all, none)| all.len() + none.len() > 1)
                    .prop_map(|(all, none)| Query::And { all, none }),
                prop::collection::vec(inner, 2..4).prop_map(Query::Or),
            ]
        })
    }

    /// The same tree, with ANDs in ANDs and ORs in ORs merged as the parser merges them.
    fn flattened(q: Query) -> Query {
        match q {
            Query::Term(t) => Query::Term(t),
            Query::And { all, none } => {
                let (mut a, mut n) = (Vec::new(), Vec::new());
                for q in all.into_iter().map(flattened) {
                    match q {
                        Query::And { all, none } => {
                            a.extend(all);
                            n.extend(none);
                        }
                        q => a.push(q),
                    }
                }
                n.extend(none.into_iter().map(flattened));
                if n.is_empty() && a.len() == 1 { a.remove(0) } else { Query::And { all: a, none: n } }
            }
            Query::Or(any) => Query::Or(
                any.into_iter()
                    .map(flattened)
                    .flat_map(|q| match q {
                        Query::Or(inner) => inner,
                        q => vec![q],
                    })
                    .collect(),
            ),
        }
    }

    proptest! {
        #[test]
        fn any_text_parses_or_is_refused_without_panicking(text in "\\PC{0,60}") {
            let _ = Query::parse(&text);
        }

        #[test]
        fn operator_soup_parses_or_is_refused_without_panicking(
            parts in prop::collection::vec(prop_oneof![
                Just("AND"), Just("OR"), Just("NOT"), Just("-"), Just("("), Just(")"), Just("\""), Just("*"),
                Just("retry"), Just("pol*"), Just("a.b"), Just(" "),
            ], 0..12)
        ) {
            let text = parts.join(" ");
            if let Ok(q) = Query::parse(&text) {
                prop_assert!(!q.to_fts5().is_empty());
            }
        }

        #[test]
        fn a_tree_written_out_parses_back_to_itself(q in tree()) {
            let q = flattened(q);
            prop_assert_eq!(Query::parse(&q.to_string()), Ok(q));
        }

        // That SQLite's FTS5 accepts every query parsed: `db/sqlite/fts5.rs`
        // (only the store's SQLite backend names its driver).
    }
}
