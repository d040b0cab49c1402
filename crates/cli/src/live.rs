//! An answer drawn on a terminal while it streams: markdown rendered as the
//! text arrives, never held back until a block ends.
//!
//! The text is cut into top-level blocks ([`markdown::top_level_blocks`]).
//! Every block but the last is complete, and is drawn for good; the last
//! one is drawn as it stands and drawn again as it grows, so a line that
//! turns out to be a table's header row or a heading's text is redrawn as
//! one. A fenced code block streams line by line instead: each line is
//! coloured and drawn for good once its newline comes, so a long block
//! never has to be redrawn. Only the lines that changed are redrawn (the
//! cursor goes up over them, `ESC[nA`, and clears to the end of the screen,
//! `ESC[J`), and never more than the screen holds.
//!
//! A table at the top level is redrawn as rows arrive (a wider cell widens
//! its column) until it is taller than the screen reaches: then its top
//! could not be redrawn, so its columns are fixed as they stand (widened
//! into the spare width) and each row is drawn for good as it comes, a
//! wider cell wrapping in its column; only the frame's bottom is redrawn.
//!
//! A link reference whose definition has not come yet (`[the docs][1]`,
//! defined at the end) reads as plain text: the block using it is kept
//! drawn as it stands, with all after it, and drawn again as a link once
//! the definition comes, as long as it stays within the screen's reach
//! (past that it is drawn for good as it reads). Definitions read so far
//! resolve references in text drawn apart from them.
//!
//! Every line drawn ends with its newline, so the cursor always waits at
//! the start of the line under the answer: the spinner's place, never over
//! the text. On a terminal that cannot rewrite a line (`TERM=dumb`), only
//! what is final is drawn: whole blocks, and code line by line.
//!
//! Thinking is drawn by the same renderer ([`LiveText::thinking`]), set
//! apart: each line behind a `│ ` gutter, dim and italic where there is
//! colour, its markdown's structure kept and its own colours left out. The
//! gutter stays without colour (`NO_COLOR`), so thinking never reads as
//! the answer.
//!
//! Pure: deltas in, the bytes to write out.

use crate::markdown::{self, After, CodeLines, Fence, LeadingTable};

/// One answer, streamed onto a terminal.
#[derive(Debug)]
pub(crate) struct LiveText {
    /// The width markdown is wrapped at.
    width: usize,
    /// The terminal's columns: how many rows a line takes.
    columns: usize,
    /// How many rows above the cursor may be rewritten (the screen's height
    /// less the cursor's row); 0 where none may be, and then only final
    /// lines are drawn.
    reach: usize,
    color: bool,
    /// The text not yet drawn for good: the last block as far as it came.
    pending: String,
    /// A fenced code block at the top level, streamed line by line.
    code: Option<OpenCode>,
    /// A table at the top level taller than the screen reaches, streamed
    /// row by row in columns fixed when it grew that tall.
    table: Option<OpenTable>,
    /// The lines on screen above the cursor that may still change (each
    /// followed by a newline).
    shown: Vec<String>,
    /// How many lines were drawn for good, and whether they end in a blank
    /// line after another: the next block is set off by a blank line, as in
    /// one drawing of the whole text.
    kept: usize,
    blank: bool,
    /// Thinking: each line behind a gutter, dim and italic when `true`.
    thought: Option<bool>,
    /// The link reference definitions read so far (from whole lines), for
    /// the references of text drawn apart from them.
    definitions: markdown::Definitions,
}

#[derive(Debug)]
struct OpenCode {
    fence: Fence,
    /// Its opening fence's line.
    opening: String,
    lines: CodeLines,
}

#[derive(Debug)]
struct OpenTable {
    widths: Vec<usize>,
    /// How many of its rows are drawn for good.
    rows: usize,
}

/// `ESC[0m`: every attribute off.
const PLAIN: &str = "\x1b[0m";
/// `ESC[2m`: dim.
const DIM: &str = "\x1b[2m";
/// `ESC[2;3m`: dim and italic, as thinking is drawn.
const THOUGHT: &str = "\x1b[2;3m";
/// What sets each line of thinking apart, with or without colour.
const GUTTER: &str = "│ ";

impl LiveText {
    /// An answer drawn `width` columns wide on a terminal `columns` wide, of
    /// which `reach` rows above the cursor may be rewritten.
    pub(crate) fn new(width: usize, columns: usize, reach: usize, color: bool) -> Self {
        LiveText {
            width: width.max(20),
            columns: columns.max(1),
            reach,
            color,
            pending: String::new(),
            code: None,
            table: None,
            shown: Vec::new(),
            kept: 0,
            blank: false,
            thought: None,
            definitions: markdown::Definitions::default(),
        }
    }

    /// Thinking, drawn like an answer but set apart (see the module's
    /// documentation): `color` makes it dim and italic.
    pub(crate) fn thinking(width: usize, columns: usize, reach: usize, color: bool) -> Self {
        let width = width.saturating_sub(GUTTER.chars().count());
        LiveText { thought: Some(color), ..LiveText::new(width, columns, reach, false) }
    }

    /// A line as drawn on screen, with what ends it (its newline aside).
    fn finished(&self, line: &str) -> String {
        let gutter = if line.is_empty() { GUTTER.trim_end() } else { GUTTER };
        match self.thought {
            Some(true) => format!("{THOUGHT}{gutter}{line}{PLAIN}"),
            Some(false) => format!("{gutter}{line}"),
            // Nothing a line turned on reaches the next (the spinner's).
            None if self.color => format!("{line}{PLAIN}"),
            None => line.to_owned(),
        }
    }

    /// The terminal changed size mid-answer: what is still drawn as it
    /// stands is wrapped anew at `width` (the lines drawn for good stay as
    /// they are). Rows on screen are counted at the new `columns`, as a
    /// terminal that re-wraps its lines shows them.
    pub(crate) fn resize(&mut self, width: usize, columns: usize, reach: usize) {
        let gutter = if self.thought.is_some() { GUTTER.chars().count() } else { 0 };
        self.width = width.saturating_sub(gutter).max(20);
        self.columns = columns.max(1);
        self.reach = reach;
    }

    /// The width and columns it draws at, as [`LiveText::resize`] takes them.
    pub(crate) fn size(&self) -> (usize, usize) {
        let gutter = if self.thought.is_some() { GUTTER.chars().count() } else { 0 };
        (self.width + gutter, self.columns)
    }

    /// Adds a delta of the answer; the bytes that draw it.
    pub(crate) fn push(&mut self, delta: &str) -> String {
        self.pending.push_str(delta);
        let done = self.settle();
        let provisional = if self.reach == 0 { Vec::new() } else { self.provisional() };
        self.draw(done, provisional)
    }

    /// The answer ended: what is left drawn for good.
    pub(crate) fn finish(&mut self) -> String {
        let mut done = self.settle();
        let rest = std::mem::take(&mut self.pending);
        match self.code.take() {
            // A code block cut short: its last line is as far as it came,
            // as the markdown parser reads it (which may drop a blank one).
            Some(mut code) => {
                let last = markdown::code_text(&format!("{}\n{rest}", code.opening)).unwrap_or_default();
                if let Some(last) = last.lines().next() {
                    let line = code.lines.line(last);
                    let line = self.code_line(&line);
                    self.keep(&mut done, (vec![line], false));
                }
            }
            None => {
                let rest = match self.table.take() {
                    Some(table) => {
                        let (lines, after) = self.table_rest(&table, &rest);
                        self.keep(&mut done, (lines, false));
                        after
                    }
                    None => rest,
                };
                let drawn = self.drawn(&rest);
                self.keep(&mut done, drawn);
            }
        }
        self.draw(done, Vec::new())
    }

    /// An open table's rows not yet drawn and its frame's bottom, read from
    /// `text` (the table as far as it came, and what follows it); and that
    /// text after the table.
    fn table_rest(&self, table: &OpenTable, text: &str) -> (Vec<String>, String) {
        let Some(read) = LeadingTable::read(text) else {
            return (vec![self.painted(LeadingTable::bottom(&table.widths))], text.to_owned());
        };
        let mut lines = read.lines(table.rows, read.rows(), &table.widths);
        lines.push(LeadingTable::bottom(&table.widths));
        let lines = lines.into_iter().map(|l| self.painted(l)).collect();
        (lines, text[read.end..].to_owned())
    }

    fn painted(&self, line: String) -> String {
        painted(self.color, line)
    }

    /// Takes what became final out of `pending`: the blocks before the
    /// last, and the whole lines of an open code block. Their lines.
    fn settle(&mut self) -> Vec<String> {
        let mut done = Vec::new();
        loop {
            if let Some(code) = &mut self.code {
                let mut closed = false;
                while let Some(end) = self.pending.find('\n') {
                    let line: String = self.pending.drain(..=end).collect();
                    let line = line.trim_end_matches(['\n', '\r']);
                    if code.fence.closes(line) {
                        closed = true;
                        break;
                    }
                    let coloured = code.lines.line(code.fence.content(line));
                    done.push(painted(self.color, format!("  {coloured}{PLAIN}")));
                    (self.kept, self.blank) = (self.kept + 1, false);
                }
                if !closed {
                    break;
                }
                self.code = None;
                continue;
            }
            if let Some(mut table) = self.table.take() {
                // Every row whose line ended is final; the table ends when a
                // block follows it.
                let whole = self.pending.rfind('\n').map_or(0, |i| i + 1);
                if let Some(read) = LeadingTable::read(&self.pending[..whole]) {
                    let rows = read.lines(table.rows, read.rows(), &table.widths);
                    table.rows = table.rows.max(read.rows());
                    let rows = rows.into_iter().map(|l| painted(self.color, l)).collect();
                    self.keep(&mut done, (rows, false));
                }
                let blocks = markdown::top_level_blocks(&self.pending[..whole]);
                let Some(next) = blocks.get(1).map(|b| b.start) else {
                    self.table = Some(table);
                    break;
                };
                self.pending.drain(..next);
                let bottom = painted(self.color, LeadingTable::bottom(&table.widths));
                self.keep(&mut done, (vec![bottom], false));
                continue;
            }
            let whole = self.pending.rfind('\n').map_or(0, |i| i + 1);
            self.definitions.add(&self.pending[..whole]);
            let blocks = markdown::top_level_blocks(&self.pending[..whole]);
            let Some(last) = blocks.last() else { break };
            let stable = self.waiting_for_definitions(&blocks, stable_prefix(&self.pending, &blocks));
            if stable > 0 {
                let before: String = self.pending.drain(..stable).collect();
                let drawn = self.drawn(&before);
                self.keep(&mut done, drawn);
            }
            if stable < last.start {
                break;
            }
            let whole = self.pending.rfind('\n').map_or(0, |i| i + 1);
            if self.table_too_tall(whole) {
                // Drawn again at each row, its top would leave the screen's
                // reach: from here its rows are final, in the columns it has.
                let widths =
                    LeadingTable::read(&self.pending[..whole]).map(|t| t.widths(self.width)).unwrap_or_default();
                let gap: Vec<String> = self.gap().into_iter().collect();
                self.keep(&mut done, (gap, false));
                self.table = Some(OpenTable { widths, rows: 0 });
                continue;
            }
            // The last block is a code block: from its fence on, it streams
            // line by line.
            let Some(info) = &last.fence else { break };
            let fence_line = self.pending.split('\n').next().unwrap_or_default();
            let Some(fence) = Fence::open(fence_line.trim_end_matches('\r')) else { break };
            let end = fence_line.len() + 1;
            let mut head: Vec<String> = self.gap().into_iter().collect();
            let blank = info.is_empty();
            if !info.is_empty() {
                head.push(painted(self.color, format!("{DIM}{info}{PLAIN}")));
            }
            self.keep(&mut done, (head, blank));
            let lines = CodeLines::new(Some(info));
            let opening: String = self.pending.drain(..end.min(self.pending.len())).collect();
            let opening = opening.trim_end_matches(['\n', '\r']).to_owned();
            self.code = Some(OpenCode { fence, opening, lines });
        }
        done
    }

    /// How much of `stable` (the text that may be drawn for good) is drawn
    /// for good: up to the first block that uses a link reference whose
    /// definition has not come (a model may write it at the end). That
    /// block, and those after it, stay drawn as they stand, to be drawn as
    /// links once it comes; unless they would pass the screen's reach, when
    /// they are drawn for good as they read now.
    fn waiting_for_definitions(&self, blocks: &[markdown::TopBlock], stable: usize) -> usize {
        if self.reach == 0 || stable == 0 {
            return stable;
        }
        let Some(&first) = markdown::unresolved_references(&self.pending[..stable], &self.definitions).first() else {
            return stable;
        };
        let Some(block) = blocks.iter().rev().find(|b| b.start <= first) else { return stable };
        let rows: usize =
            self.lines_of(&self.pending[block.start..]).iter().map(|l| self.rows(&self.finished(l))).sum();
        if rows > self.reach { stable } else { block.start }
    }

    /// Whether `pending` (whose whole lines end at `whole`) is a table at
    /// the top level that, drawn as it stands, is taller than the screen
    /// reaches.
    fn table_too_tall(&self, whole: usize) -> bool {
        if self.reach == 0 || LeadingTable::read(&self.pending[..whole]).is_none() {
            return false;
        }
        let rows: usize = self.lines_of(&self.pending).iter().map(|l| self.rows(&self.finished(l))).sum();
        rows > self.reach
    }

    /// What `pending` looks like drawn as it stands.
    fn provisional(&self) -> Vec<String> {
        match (&self.code, &self.table) {
            (Some(_), _) if self.pending.is_empty() => Vec::new(),
            (Some(code), _) => {
                let partial = CodeLines::partial(code.fence.content(self.pending.trim_end_matches('\r')));
                vec![self.code_line(&partial)]
            }
            (None, Some(table)) => {
                let (mut lines, rest) = self.table_rest(table, &self.pending);
                if !rest.trim().is_empty() {
                    let after = markdown::render_with(&rest, self.width, true, After::Line, &self.definitions);
                    lines.extend(after.lines().map(|line| painted(self.color, line.to_owned())));
                }
                lines
            }
            (None, None) => self.lines_of(&self.pending),
        }
    }

    /// A line of code as drawn: indented under its block.
    fn code_line(&self, coloured: &str) -> String {
        painted(self.color, format!("  {coloured}{PLAIN}"))
    }

    /// `text` (whole blocks, or the last as far as it came) drawn, set off
    /// by a blank line from a block drawn before it.
    fn lines_of(&self, text: &str) -> Vec<String> {
        self.drawn(text).0
    }

    /// [`Self::lines_of`], and whether the last line is empty before its
    /// codes are taken off (a heading without words is not).
    fn drawn(&self, text: &str) -> (Vec<String>, bool) {
        let drawn = markdown::render_with(text, self.width, true, self.after(), &self.definitions);
        let empty = drawn.lines().last() == Some("");
        (drawn.lines().map(|line| painted(self.color, line.to_owned())).collect(), empty)
    }

    /// How what was drawn for good ends.
    fn after(&self) -> After {
        match (self.kept, self.blank) {
            (0, _) => After::Nothing,
            (_, true) => After::Blank,
            (_, false) => After::Line,
        }
    }

    /// The blank line before the next block, when one is due.
    fn gap(&self) -> Option<String> {
        (self.after() == After::Line).then(String::new)
    }

    /// Adds `lines`, drawn for good, to `done`; `empty`: whether the last
    /// one is empty.
    fn keep(&mut self, done: &mut Vec<String>, (lines, empty): (Vec<String>, bool)) {
        if !lines.is_empty() {
            self.kept += lines.len();
            self.blank = empty && self.kept > 1;
        }
        done.extend(lines);
    }

    /// Rows a line takes on screen.
    fn rows(&self, line: &str) -> usize {
        console::measure_text_width(line).div_ceil(self.columns).max(1)
    }

    /// The bytes that turn the lines on screen into `done` (final) then
    /// `provisional`: the lines from the first that differs are redrawn,
    /// as far up as the screen reaches.
    fn draw(&mut self, done: Vec<String>, provisional: Vec<String>) -> String {
        let done: Vec<String> = done.iter().map(|line| self.finished(line)).collect();
        let provisional: Vec<String> = provisional.iter().map(|line| self.finished(line)).collect();
        let desired: Vec<&String> = done.iter().chain(&provisional).collect();
        let same = self.shown.iter().zip(&desired).take_while(|(a, b)| a == *b).count();
        let mut from = same;
        let mut up: usize = self.shown[from..].iter().map(|l| self.rows(l)).sum();
        while up > self.reach && from < self.shown.len() {
            up -= self.rows(&self.shown[from]);
            from += 1;
        }
        let mut out = String::new();
        if from < self.shown.len() {
            if up > 0 {
                out.push_str(&format!("\x1b[{up}A"));
            }
            out.push_str("\r\x1b[J");
        }
        for line in desired.iter().skip(from) {
            out.push_str(line);
            out.push('\n');
        }
        self.shown = provisional;
        out
    }
}

/// How much of `text` (whose top-level blocks are `blocks`) may be drawn
/// for good: up to the start of the latest block such that the text before
/// it, read alone, is read as the same blocks. Reading the whole can split
/// lines differently from reading a part: a line that follows may turn a
/// lazy continuation line into a paragraph of its own.
fn stable_prefix(text: &str, blocks: &[markdown::TopBlock]) -> usize {
    (1..blocks.len())
        .rev()
        .map(|k| (k, blocks[k].start))
        .find(|&(k, at)| {
            let alone = markdown::top_level_blocks(&text[..at]);
            alone.len() == k && alone.iter().zip(blocks).all(|(a, b)| a.start == b.start)
        })
        .map_or(0, |(_, at)| at)
}

/// `line` as drawn: without its codes when there is no colour.
fn painted(color: bool, line: String) -> String {
    if color { line } else { console::strip_ansi_codes(&line).into_owned() }
}

#[cfg(test)]
mod tests;
