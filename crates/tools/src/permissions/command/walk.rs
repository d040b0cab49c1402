//! The walk over a parsed command: every simple command the shell would
//! run, wherever it sits (lists, pipelines, subshells, groups, control flow
//! bodies, function bodies, `$(…)`, backticks, process substitutions,
//! redirection targets), with each word's quotes and escapes undone. What
//! each simple command runs in turn (wrappers, `sh -c`) is
//! [`super::wrappers`]'s part.
//!
//! The parser is brush's (`brush-parser`), which reads bash's syntax as
//! bash does; what it cannot parse is one unseen part.

use brush_parser::ast;
use brush_parser::word::{WordPiece, WordPieceWithSource};
use brush_parser::{Parser, ParserOptions, SourceInfo};

use super::{Sight, Unseen, UnseenKind};

/// How deep commands inside commands are followed (`sh -c "bash -c '…'"`,
/// `$(…)` in `$(…)`, `sudo env nice …`) before the rest is unseen.
pub(super) const MAX_DEPTH: usize = 16;

/// One word of a simple command, after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Word {
    /// The word's value when `known`; else its text as written (`$f`).
    pub(super) text: String,
    /// Whether the value is fixed by the command's text: no parameter,
    /// substitution or arithmetic in it.
    pub(super) known: bool,
    /// Whether an unquoted part may expand to something else: a glob
    /// (`*`, `?`, `[`) or a brace expansion (`{r,}m`).
    pub(super) expands: bool,
}

/// What a simple command reads as its input, when a shell may run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Input {
    /// Whatever the caller's input is: a terminal, nothing, or seri's.
    Inherited,
    /// A here-document or here-string whose text is known.
    Known(String),
    /// A pipe, or a here-document whose text is built at run time.
    Unknown,
}

/// The walker: what has been seen and what could not be.
#[derive(Debug, Default)]
pub(super) struct Walker {
    pub(super) sight: Sight,
}

fn options() -> ParserOptions {
    ParserOptions::default()
}

impl Walker {
    pub(super) fn unseen(&mut self, kind: UnseenKind, text: impl Into<String>) {
        let text = text.into();
        let unseen = Unseen { kind, text };
        if !self.sight.unseen.contains(&unseen) {
            self.sight.unseen.push(unseen);
        }
    }

    /// Parses `code` as a shell program and walks it. `depth` counts the
    /// commands it sits inside.
    pub(super) fn program(&mut self, code: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.unseen(UnseenKind::TooDeep, code);
            return;
        }
        let mut parser = Parser::new(code.as_bytes(), &options(), &SourceInfo::default());
        match parser.parse_program() {
            Ok(program) => {
                for list in &program.complete_commands {
                    self.list(list, depth);
                }
            }
            Err(error) => self.unseen(UnseenKind::Syntax, format!("{} ({error})", code.trim())),
        }
    }

    fn list(&mut self, list: &ast::CompoundList, depth: usize) {
        for ast::CompoundListItem(and_or, _) in &list.0 {
            self.pipeline(&and_or.first, depth);
            for next in &and_or.additional {
                let (ast::AndOr::And(pipeline) | ast::AndOr::Or(pipeline)) = next;
                self.pipeline(pipeline, depth);
            }
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, depth: usize) {
        for (n, command) in pipeline.seq.iter().enumerate() {
            let input = if n > 0 { Input::Unknown } else { Input::Inherited };
            self.command(command, input, depth);
        }
    }

    fn command(&mut self, command: &ast::Command, input: Input, depth: usize) {
        match command {
            ast::Command::Simple(simple) => self.simple(simple, input, depth),
            ast::Command::Compound(compound, redirects) => {
                self.compound(compound, depth);
                for redirect in redirects.iter().flat_map(|r| r.0.iter()) {
                    self.redirect(redirect, depth);
                }
            }
            ast::Command::Function(function) => {
                self.compound(&function.body.0, depth);
                for redirect in function.body.1.iter().flat_map(|r| r.0.iter()) {
                    self.redirect(redirect, depth);
                }
            }
            ast::Command::ExtendedTest(test) => self.test(&test.expr, depth),
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand, depth: usize) {
        use ast::CompoundCommand as C;
        match compound {
            C::Arithmetic(arithmetic) => self.arithmetic(&arithmetic.expr.value),
            C::ArithmeticForClause(clause) => {
                for expr in [&clause.initializer, &clause.condition, &clause.updater].into_iter().flatten() {
                    self.arithmetic(&expr.value);
                }
                self.list(&clause.body.list, depth);
            }
            C::BraceGroup(group) => self.list(&group.list, depth),
            C::Subshell(subshell) => self.list(&subshell.list, depth),
            C::ForClause(clause) => {
                for word in clause.values.iter().flatten() {
                    self.word(word, depth);
                }
                self.list(&clause.body.list, depth);
            }
            C::CaseClause(clause) => {
                self.word(&clause.value, depth);
                for item in &clause.cases {
                    for pattern in &item.patterns {
                        self.word(pattern, depth);
                    }
                    if let Some(list) = &item.cmd {
                        self.list(list, depth);
                    }
                }
            }
            C::IfClause(clause) => {
                self.list(&clause.condition, depth);
                self.list(&clause.then, depth);
                for other in clause.elses.iter().flatten() {
                    if let Some(condition) = &other.condition {
                        self.list(condition, depth);
                    }
                    self.list(&other.body, depth);
                }
            }
            C::WhileClause(clause) | C::UntilClause(clause) => {
                self.list(&clause.0, depth);
                self.list(&clause.1.list, depth);
            }
        }
    }

    fn test(&mut self, expr: &ast::ExtendedTestExpr, depth: usize) {
        use ast::ExtendedTestExpr as T;
        match expr {
            T::And(a, b) | T::Or(a, b) => {
                self.test(a, depth);
                self.test(b, depth);
            }
            T::Not(a) | T::Parenthesized(a) => self.test(a, depth),
            T::UnaryTest(_, word) => {
                self.word(word, depth);
            }
            T::BinaryTest(_, a, b) => {
                self.word(a, depth);
                self.word(b, depth);
            }
        }
    }

    /// Arithmetic is evaluated, not run; a substitution inside it is not
    /// followed.
    fn arithmetic(&mut self, text: &str) {
        if holds_substitution(text) {
            self.unseen(UnseenKind::Expansion, format!("(( {} ))", text.trim()));
        }
    }

    /// Walks a redirection's words; returns the input it gives the command,
    /// if it is one.
    fn redirect(&mut self, redirect: &ast::IoRedirect, depth: usize) -> Option<Input> {
        match redirect {
            ast::IoRedirect::File(_, kind, target) => {
                match target {
                    ast::IoFileRedirectTarget::Filename(word) | ast::IoFileRedirectTarget::Duplicate(word) => {
                        self.word(word, depth);
                    }
                    ast::IoFileRedirectTarget::ProcessSubstitution(_, subshell) => {
                        self.list(&subshell.list, depth + 1);
                    }
                    ast::IoFileRedirectTarget::Fd(_) => {}
                }
                matches!(kind, ast::IoFileRedirectKind::Read).then_some(Input::Unknown)
            }
            ast::IoRedirect::HereDocument(_, here) => {
                let body = &here.doc.value;
                if here.requires_expansion && (body.contains('$') || body.contains('`')) {
                    if holds_substitution(body) {
                        self.unseen(
                            UnseenKind::Expansion,
                            format!("<<{} … {}", here.here_end.value, here.here_end.value),
                        );
                    }
                    return Some(Input::Unknown);
                }
                Some(Input::Known(body.clone()))
            }
            ast::IoRedirect::HereString(_, word) => {
                let word = self.word(word, depth);
                Some(if word.known { Input::Known(format!("{}\n", word.text)) } else { Input::Unknown })
            }
            ast::IoRedirect::OutputAndError(word, _) => {
                self.word(word, depth);
                None
            }
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, mut input: Input, depth: usize) {
        let mut words = Vec::new();
        let items = simple.prefix.iter().flat_map(|p| p.0.iter());
        for item in items {
            match item {
                ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment, _) => match &assignment.value {
                    ast::AssignmentValue::Scalar(word) => {
                        self.word(word, depth);
                    }
                    ast::AssignmentValue::Array(values) => {
                        for (key, value) in values {
                            if let Some(key) = key {
                                self.word(key, depth);
                            }
                            self.word(value, depth);
                        }
                    }
                },
                other => self.item(other, &mut words, &mut input, depth),
            }
        }
        if let Some(name) = &simple.word_or_name {
            let word = self.word(name, depth);
            words.push(word);
        }
        for item in simple.suffix.iter().flat_map(|s| s.0.iter()) {
            self.item(item, &mut words, &mut input, depth);
        }
        self.run(&words, &input, depth);
    }

    fn item(&mut self, item: &ast::CommandPrefixOrSuffixItem, words: &mut Vec<Word>, input: &mut Input, depth: usize) {
        match item {
            ast::CommandPrefixOrSuffixItem::Word(word) | ast::CommandPrefixOrSuffixItem::AssignmentWord(_, word) => {
                let word = self.word(word, depth);
                words.push(word);
            }
            ast::CommandPrefixOrSuffixItem::IoRedirect(redirect) => {
                if let Some(given) = self.redirect(redirect, depth) {
                    *input = given;
                }
            }
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, subshell) => {
                self.list(&subshell.list, depth + 1);
                words.push(Word { text: "<(…)".to_owned(), known: false, expands: false });
            }
        }
    }

    /// A word's value with quotes and escapes undone; the commands inside
    /// it (`$(…)`, backticks) are walked.
    pub(super) fn word(&mut self, word: &ast::Word, depth: usize) -> Word {
        let raw = word.value.as_str();
        match brush_parser::word::parse(raw, &options()) {
            Ok(pieces) => {
                let mut out = Word { text: String::new(), known: true, expands: false };
                self.pieces(raw, &pieces, false, &mut out, depth);
                out
            }
            Err(error) => {
                self.unseen(UnseenKind::Syntax, format!("{raw} ({error})"));
                Word { text: raw.to_owned(), known: false, expands: false }
            }
        }
    }

    fn pieces(&mut self, raw: &str, pieces: &[WordPieceWithSource], quoted: bool, out: &mut Word, depth: usize) {
        for piece in pieces {
            let source = raw.get(piece.start_index..piece.end_index).unwrap_or(raw);
            match &piece.piece {
                WordPiece::Text(text) => {
                    if !quoted && text.contains(['*', '?', '[', '{']) {
                        out.expands = true;
                    }
                    out.text.push_str(text);
                }
                WordPiece::SingleQuotedText(text) => out.text.push_str(text),
                WordPiece::AnsiCQuotedText(text) => {
                    if text.contains('\\') {
                        // `$'\x72m'`: escapes seri does not decode.
                        out.known = false;
                        out.text.push_str(source);
                    } else {
                        out.text.push_str(text);
                    }
                }
                WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(raw, inner, true, out, depth);
                }
                WordPiece::TildePrefix(user) => {
                    out.text.push('~');
                    out.text.push_str(user);
                }
                WordPiece::ArithmeticExpression(expr) => {
                    self.arithmetic(&expr.value);
                    out.known = false;
                    out.text.push_str(source);
                }
                WordPiece::ParameterExpansion(_) => {
                    if holds_substitution(source) {
                        self.unseen(UnseenKind::Expansion, source);
                    }
                    out.known = false;
                    out.text.push_str(source);
                }
                WordPiece::CommandSubstitution(code) | WordPiece::BackquotedCommandSubstitution(code) => {
                    self.program(code, depth + 1);
                    out.known = false;
                    out.text.push_str(source);
                }
                WordPiece::EscapeSequence(escape) => {
                    let escaped = escape.strip_prefix('\\').unwrap_or(escape);
                    if escaped == "\n" {
                        // A line continuation.
                    } else if !quoted || matches!(escaped, "$" | "`" | "\"" | "\\") {
                        out.text.push_str(escaped);
                    } else {
                        out.text.push_str(escape);
                    }
                }
            }
        }
    }
}

/// Whether `text` holds a command substitution (`$(…)`, backticks), which
/// the shell would run when it expands `text`.
pub(super) fn holds_substitution(text: &str) -> bool {
    text.contains("$(") || text.contains('`')
}
