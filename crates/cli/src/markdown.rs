//! The model's markdown, drawn for a terminal: headings bold, lists with
//! bullets and hanging indents, code blocks indented and coloured, quotes
//! barred, links followed by their address, tables as aligned columns in
//! a frame (cells wrapped so the table fits the terminal), line breaks kept
//! where the model wrote them, and every paragraph wrapped at the
//! terminal's width between words, never inside one. Pure: text, a width
//! and whether to colour in, text out. Without colour (`NO_COLOR`) the
//! structure is the same, only the ANSI codes are left out; a pipe gets the
//! model's text as it came.
//!
//! For streamed text ([`crate::live`]): [`top_level_blocks`] says where
//! each top-level block starts (all but the last are complete), and
//! [`CodeLines`] colours a code block line by line, as it arrives.

use pulldown_cmark::{Alignment, BrokenLink, CodeBlockKind, CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

const BOLD: &str = "\x1b[1m";
const NOT_BOLD: &str = "\x1b[22m";
const ITALIC: &str = "\x1b[3m";
const NOT_ITALIC: &str = "\x1b[23m";
const UNDERLINE: &str = "\x1b[4m";
const NOT_UNDERLINE: &str = "\x1b[24m";
const CODE: &str = "\x1b[36m";
const DIM: &str = "\x1b[2m";
const PLAIN: &str = "\x1b[0m";

/// How a list numbers its items.
enum List {
    Bullets,
    Numbered(u64),
}

struct Renderer {
    width: usize,
    out: String,
    /// The inline text of the block being read.
    line: String,
    lists: Vec<List>,
    /// The bullet or number of the item whose first line is pending.
    item: Option<String>,
    quote: usize,
    code: Option<String>,
    links: Vec<String>,
    heading: Option<HeadingLevel>,
    /// The open code block's language (its fence's info word).
    language: Option<String>,
    /// The table being read, drawn at its end.
    table: Option<Table>,
}

/// A table's cells as they are read: rows of inline text (with codes).
#[derive(Default)]
struct Table {
    alignments: Vec<Alignment>,
    /// The header row first, when there is one.
    rows: Vec<Vec<String>>,
    /// How many rows are the header.
    head: usize,
}

/// The code's lines, coloured by its language when syntect knows it (by
/// name or file extension: `rust`, `rs`, `py`, `sh`…), else in one colour.
fn highlighted(code: &str, language: Option<&str>) -> Vec<String> {
    let mut lines = CodeLines::new(language);
    code.lines().map(|line| lines.line(line)).collect()
}

fn syntaxes() -> &'static syntect::parsing::SyntaxSet {
    static SYNTAXES: std::sync::OnceLock<syntect::parsing::SyntaxSet> = std::sync::OnceLock::new();
    SYNTAXES.get_or_init(syntect::parsing::SyntaxSet::load_defaults_newlines)
}

/// A code block's lines coloured one at a time, each as it arrives: the
/// highlighter keeps its state from line to line (a string or a comment
/// that spans lines), so a block streamed line by line is coloured as the
/// whole block would be.
pub(crate) struct CodeLines {
    /// `None` for a language syntect does not know (one colour then), and
    /// from a line it could not highlight on.
    highlighter: Option<syntect::easy::HighlightLines<'static>>,
}

impl std::fmt::Debug for CodeLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeLines").field("highlighted", &self.highlighter.is_some()).finish()
    }
}

impl CodeLines {
    /// For a block whose fence says `language` (its first word names it).
    pub(crate) fn new(language: Option<&str>) -> Self {
        use std::sync::OnceLock;
        use syntect::highlighting::ThemeSet;
        static THEMES: OnceLock<ThemeSet> = OnceLock::new();
        let highlighter = (|| {
            let word = language?.split_whitespace().next()?;
            let syntax = syntaxes().find_syntax_by_token(word)?;
            let theme = THEMES.get_or_init(ThemeSet::load_defaults).themes.get("base16-ocean.dark")?;
            Some(syntect::easy::HighlightLines::new(syntax, theme))
        })();
        CodeLines { highlighter }
    }

    /// The next line (without its newline), coloured.
    pub(crate) fn line(&mut self, line: &str) -> String {
        if let Some(highlighter) = &mut self.highlighter {
            match highlighter.highlight_line(&format!("{line}\n"), syntaxes()) {
                Ok(ranges) => {
                    let escaped = syntect::util::as_24_bit_terminal_escaped(&ranges, false);
                    return escaped.trim_end_matches(['\n', '\r']).to_owned();
                }
                Err(_) => self.highlighter = None,
            }
        }
        format!("{CODE}{line}")
    }

    /// A line still being written, in the code's one colour: it is drawn
    /// again, highlighted, once it is whole.
    pub(crate) fn partial(line: &str) -> String {
        format!("{CODE}{line}")
    }
}

impl Renderer {
    /// The quote bars and list indentation in front of a block's lines.
    /// Each takes two columns a level, up to half the width: deeper levels
    /// are drawn at the deepest that fits, so a nested list in a narrow
    /// terminal keeps room for its words instead of running past the edge.
    fn indent(&self) -> String {
        let levels = self.width / 2 / 2;
        let quote = self.quote.min(levels);
        let lists = self.lists.len().saturating_sub(1).min(levels - quote);
        format!("{}{}", format!("{DIM}│{PLAIN} ").repeat(quote), "  ".repeat(lists))
    }

    /// Writes the pending inline text as a wrapped block.
    fn flush(&mut self) {
        if self.table.is_some() {
            return;
        }
        let text = std::mem::take(&mut self.line);
        let item = self.item.take();
        if text.trim().is_empty() && item.is_none() {
            return;
        }
        let indent = self.indent();
        let (first, rest) = match &item {
            Some(marker) => (format!("{indent}{marker}"), format!("{indent}{}", " ".repeat(marker.chars().count()))),
            None => (indent.clone(), indent),
        };
        let options = textwrap::Options::new(self.width.max(20))
            .initial_indent(&first)
            .subsequent_indent(&rest)
            .break_words(false)
            .word_splitter(textwrap::WordSplitter::NoHyphenation);
        if text.trim().is_empty() {
            // An item that opens with another block (a nested list, code):
            // its bullet on a line of its own, not a blank line.
            self.out.push_str(first.trim_end());
            self.out.push('\n');
            return;
        }
        for (i, paragraph_line) in text.split('\n').enumerate() {
            let options = if i == 0 { options.clone() } else { options.clone().initial_indent(&rest) };
            for wrapped in textwrap::wrap(paragraph_line, options) {
                self.out.push_str(&wrapped);
                self.out.push('\n');
            }
        }
    }

    /// A blank line between blocks, except inside a tight list.
    fn gap(&mut self) {
        if self.lists.is_empty() && !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                self.flush();
                self.gap();
                self.heading = Some(level);
            }
            Event::End(TagEnd::Heading(_)) => {
                let underline = matches!(self.heading.take(), Some(HeadingLevel::H1));
                let text = std::mem::take(&mut self.line);
                let (on, off) = if underline { (UNDERLINE, NOT_UNDERLINE) } else { ("", "") };
                self.line = format!("{BOLD}{on}{text}{off}{NOT_BOLD}");
                self.flush();
            }
            // A loose item's first paragraph is its first line.
            Event::Start(Tag::Paragraph) if self.item.is_none() => {
                self.flush();
                self.gap();
            }
            Event::End(TagEnd::Paragraph) => self.flush(),
            Event::Start(Tag::List(first)) => {
                self.flush();
                if self.lists.is_empty() {
                    self.gap();
                }
                self.lists.push(first.map_or(List::Bullets, List::Numbered));
            }
            Event::End(TagEnd::List(_)) => {
                self.flush();
                self.lists.pop();
            }
            Event::Start(Tag::Item) => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(List::Numbered(n)) => {
                        let marker = format!("{n}. ");
                        *n += 1;
                        marker
                    }
                    _ => "• ".to_owned(),
                };
                self.item = Some(marker);
            }
            Event::End(TagEnd::Item) => self.flush(),
            Event::Start(Tag::BlockQuote(_)) => {
                self.flush();
                self.gap();
                self.quote += 1;
            }
            Event::End(TagEnd::BlockQuote(_)) => {
                self.flush();
                self.quote = self.quote.saturating_sub(1);
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                self.flush();
                self.gap();
                let language = match kind {
                    CodeBlockKind::Fenced(language) => language.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                if !language.is_empty() {
                    let indent = self.indent();
                    self.out.push_str(&format!("{indent}{DIM}{language}{PLAIN}\n"));
                }
                self.language = Some(language);
                self.code = Some(String::new());
            }
            Event::End(TagEnd::CodeBlock) => {
                let indent = self.indent();
                let code = self.code.take().unwrap_or_default();
                // Code keeps its lines: never wrapped, never reflowed.
                for line in highlighted(&code, self.language.take().as_deref()) {
                    self.out.push_str(&format!("{indent}  {line}{PLAIN}\n"));
                }
            }
            Event::Start(Tag::Emphasis) => self.line.push_str(ITALIC),
            Event::End(TagEnd::Emphasis) => self.line.push_str(NOT_ITALIC),
            Event::Start(Tag::Strong) => self.line.push_str(BOLD),
            Event::End(TagEnd::Strong) => self.line.push_str(NOT_BOLD),
            Event::Start(Tag::Link { dest_url, .. }) => {
                self.links.push(dest_url.to_string());
                self.line.push_str(UNDERLINE);
            }
            Event::End(TagEnd::Link) => {
                self.line.push_str(NOT_UNDERLINE);
                if let Some(url) = self.links.pop() {
                    self.line.push_str(&format!(" {DIM}({url}){PLAIN}"));
                }
            }
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => match &mut self.code {
                Some(code) => code.push_str(&text),
                None => self.line.push_str(&text),
            },
            Event::Code(code) => self.line.push_str(&format!("{CODE}{code}{PLAIN}")),
            // A line break the model wrote is kept (a haiku stays three
            // lines), as chat interfaces keep it.
            Event::SoftBreak => self.line.push('\n'),
            Event::HardBreak => self.line.push('\n'),
            Event::Rule => {
                self.flush();
                self.gap();
                let indent = self.indent();
                self.out.push_str(&format!("{indent}{DIM}{}{PLAIN}\n", "─".repeat(self.width.clamp(3, 40))));
            }
            Event::TaskListMarker(done) => self.line.push_str(if done { "[x] " } else { "[ ] " }),
            Event::Start(Tag::Table(alignments)) => {
                self.flush();
                self.gap();
                self.table = Some(Table { alignments, ..Table::default() });
            }
            Event::Start(Tag::TableHead | Tag::TableRow) => {
                if let Some(table) = &mut self.table {
                    table.rows.push(Vec::new());
                }
            }
            Event::End(TagEnd::TableHead) => {
                if let Some(table) = &mut self.table {
                    table.head = table.rows.len();
                }
            }
            Event::End(TagEnd::TableCell) => {
                let cell = std::mem::take(&mut self.line);
                if let Some(row) = self.table.as_mut().and_then(|t| t.rows.last_mut()) {
                    row.push(cell.trim().to_owned());
                }
            }
            Event::End(TagEnd::Table) => {
                if let Some(table) = self.table.take() {
                    let indent = self.indent();
                    let width = self.width.saturating_sub(console::measure_text_width(&indent));
                    for line in table.draw(width) {
                        self.out.push_str(&format!("{indent}{line}\n"));
                    }
                }
            }
            _ => {}
        }
    }
}

/// `text` drawn for a terminal `width` columns wide; without `color`, the
/// same lines without ANSI codes.
#[cfg(test)]
pub(crate) fn render(text: &str, width: usize, color: bool) -> String {
    render_with(text, width, color, After::Nothing, &Definitions::default())
}

/// What a drawing goes on from, which decides the blank line before its
/// first block: nothing yet, a line, or a blank line after one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum After {
    Nothing,
    Line,
    Blank,
}

/// `text` drawn as its part of a longer text whose drawing so far ends as
/// `after` says: what drawing the whole at once adds for `text`. A
/// reference to a label `text` does not define is drawn as a link when
/// `definitions` (from elsewhere in the longer text) do.
pub(crate) fn render_with(text: &str, width: usize, color: bool, after: After, definitions: &Definitions) -> String {
    let before = match after {
        After::Nothing => "",
        After::Line => "-\n",
        After::Blank => "-\n\n",
    };
    let drawn = render_coloured(before, text, width, definitions);
    // The renderer only ever appends to what it was given.
    let drawn = drawn.get(before.len()..).unwrap_or_default();
    if color { drawn.to_owned() } else { console::strip_ansi_codes(drawn).into_owned() }
}

/// The markdown seri reads: CommonMark with tables, task lists and strikethrough.
const OPTIONS: Options = Options::ENABLE_STRIKETHROUGH.union(Options::ENABLE_TASKLISTS).union(Options::ENABLE_TABLES);

/// A top-level block of a text: where its first line starts, and for a
/// fenced code block, its fence's info string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TopBlock {
    /// The byte offset of the start of the block's first line.
    pub(crate) start: usize,
    /// The info string (`rust`, or empty) when the block is a fenced code block.
    pub(crate) fence: Option<String>,
}

/// The top-level blocks of `text`, as the renderer reads them. Of a text
/// made of whole lines, every block but the last is complete: no line that
/// follows can change it (the last may still grow, or turn out to be a
/// table or a heading).
pub(crate) fn top_level_blocks(text: &str) -> Vec<TopBlock> {
    let line_start = |at: usize| text.get(..at).and_then(|t| t.rfind('\n')).map_or(0, |i| i + 1);
    let mut depth = 0usize;
    let mut blocks = Vec::new();
    let parser = Parser::new_ext(text, OPTIONS);
    // Definitions read as the start of the paragraph that follows them
    // with no blank line between: the paragraph's block starts with them,
    // or read apart from them its first line may read as another block.
    let definitions: Vec<std::ops::Range<usize>> =
        parser.reference_definitions().iter().map(|(_, d)| d.span.clone()).collect();
    let with_definitions = |mut start: usize| {
        while let Some(def) = definitions.iter().find(|d| {
            d.end <= start && line_start(d.start) < start && {
                let between = &text[d.end..start];
                between.chars().all(char::is_whitespace) && between.matches('\n').count() <= 1
            }
        }) {
            start = line_start(def.start);
        }
        start
    };
    for (event, range) in parser.into_offset_iter() {
        match event {
            Event::Start(tag) => {
                if depth == 0 {
                    let fence = match tag {
                        Tag::CodeBlock(CodeBlockKind::Fenced(info)) => Some(info.to_string()),
                        Tag::Paragraph | Tag::Heading { .. } | Tag::Table(_) => {
                            blocks.push(TopBlock { start: with_definitions(line_start(range.start)), fence: None });
                            depth += 1;
                            continue;
                        }
                        _ => None,
                    };
                    blocks.push(TopBlock { start: line_start(range.start), fence });
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            // A thematic break is a block without a start and an end.
            _ if depth == 0 => blocks.push(TopBlock { start: line_start(range.start), fence: None }),
            _ => {}
        }
    }
    blocks
}

/// The text of the first code block in `text`, as the renderer reads it.
pub(crate) fn code_text(text: &str) -> Option<String> {
    let mut code: Option<String> = None;
    for event in Parser::new_ext(text, OPTIONS) {
        match (event, &mut code) {
            (Event::Start(Tag::CodeBlock(_)), None) => code = Some(String::new()),
            (Event::Text(t), Some(code)) => code.push_str(&t),
            (Event::End(TagEnd::CodeBlock), Some(_)) => break,
            _ => {}
        }
    }
    code
}

/// A code fence: ```` ``` ```` or `~~~` (or longer), indented up to three spaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fence {
    mark: char,
    length: usize,
    indent: usize,
}

impl Fence {
    /// The fence `line` opens, if it opens one.
    pub(crate) fn open(line: &str) -> Option<Fence> {
        let rest = line.trim_start_matches(' ');
        let indent = line.len() - rest.len();
        let mark = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
        let length = rest.chars().take_while(|c| *c == mark).count();
        let info = &rest[length..];
        (indent <= 3 && length >= 3 && !(mark == '`' && info.contains('`'))).then_some(Fence { mark, length, indent })
    }

    /// Whether `line` closes this fence: the same mark, at least as long,
    /// indented up to three spaces, nothing after it but spaces.
    pub(crate) fn closes(&self, line: &str) -> bool {
        let rest = line.trim_start_matches(' ');
        let length = rest.chars().take_while(|c| *c == self.mark).count();
        line.len() - rest.len() <= 3
            && length >= self.length
            && rest[length * self.mark.len_utf8()..].trim_matches([' ', '\t']).is_empty()
    }

    /// A line of the code inside: the fence's indentation taken off it.
    pub(crate) fn content<'a>(&self, line: &'a str) -> &'a str {
        let spaces = line.len() - line.trim_start_matches(' ').len();
        &line[spaces.min(self.indent)..]
    }
}

impl Renderer {
    fn new(width: usize, out: String) -> Self {
        Renderer {
            width,
            out,
            line: String::new(),
            lists: Vec::new(),
            item: None,
            quote: 0,
            code: None,
            links: Vec::new(),
            heading: None,
            language: None,
            table: None,
        }
    }
}

/// Link reference definitions (`[label]: address`) read from a text, by
/// label (case and runs of spaces aside): what a reference elsewhere in a
/// longer text resolves to.
#[derive(Debug, Default, Clone)]
pub(crate) struct Definitions(std::collections::HashMap<String, String>);

/// A reference label as definitions are matched: case and runs of white
/// space do not count.
fn label_key(label: &str) -> String {
    label.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

impl Definitions {
    /// Adds the definitions `text` makes; a label defined already keeps its
    /// first address, as in one text.
    pub(crate) fn add(&mut self, text: &str) {
        let parser = Parser::new_ext(text, OPTIONS);
        let mut found: Vec<(usize, String, String)> = parser
            .reference_definitions()
            .iter()
            .map(|(label, def)| (def.span.start, label_key(label), def.dest.to_string()))
            .collect();
        found.sort();
        for (_, label, dest) in found {
            self.0.entry(label).or_insert(dest);
        }
    }

    fn resolve(&self, link: &BrokenLink<'_>) -> Option<(CowStr<'static>, CowStr<'static>)> {
        let dest = self.0.get(&label_key(&link.reference))?;
        Some((CowStr::from(dest.clone()), CowStr::from(String::new())))
    }
}

/// Where `text` uses a link reference (`[text][label]`, `[label][]`,
/// `[label]`) to a label neither it nor `definitions` define: the byte
/// offsets of each. Such a one reads as plain text until its definition
/// comes.
pub(crate) fn unresolved_references(text: &str, definitions: &Definitions) -> Vec<usize> {
    let mut missing = Vec::new();
    let callback = |link: BrokenLink<'_>| {
        let found = definitions.resolve(&link);
        if found.is_none() {
            missing.push(link.span.start);
        }
        found
    };
    Parser::new_with_broken_link_callback(text, OPTIONS, Some(callback)).for_each(drop);
    missing
}

fn render_coloured(before: &str, text: &str, width: usize, definitions: &Definitions) -> String {
    let mut renderer = Renderer::new(width, before.to_owned());
    let callback = |link: BrokenLink<'_>| definitions.resolve(&link);
    for event in Parser::new_with_broken_link_callback(text, OPTIONS, Some(callback)) {
        renderer.event(event);
    }
    renderer.flush();
    renderer.out
}

impl Table {
    /// The table framed in box-drawing lines, at most `width` columns wide
    /// when its columns can be narrowed that far: the widest columns give
    /// way first, and a cell too wide for its column wraps between words.
    fn draw(&self, width: usize) -> Vec<String> {
        let widths = self.widths(width);
        if widths.is_empty() {
            return Vec::new();
        }
        let mut out = vec![rule(&widths, "┌", "┬", "┐")];
        for index in 0..self.rows.len() {
            out.extend(self.row(index, &widths));
        }
        out.push(rule(&widths, "└", "┴", "┘"));
        out
    }

    /// Each column's width, the table at most `width` columns wide when
    /// its columns can be narrowed that far; none for a table without cells.
    fn widths(&self, width: usize) -> Vec<usize> {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        if columns == 0 {
            return Vec::new();
        }
        let cell_width = |cell: &str| cell.split('\n').map(console::measure_text_width).max().unwrap_or(0);
        let mut widths: Vec<usize> = (0..columns)
            .map(|c| self.rows.iter().filter_map(|r| r.get(c)).map(|cell| cell_width(cell)).max().unwrap_or(0).max(1))
            .collect();
        // Each column costs its width and three more (`│ ` and a space); one
        // more closes the frame.
        let frame = 3 * columns + 1;
        let longest_word = |c: usize| {
            self.rows
                .iter()
                .filter_map(|r| r.get(c))
                .flat_map(|cell| cell.split_whitespace())
                .map(console::measure_text_width)
                .max()
                .unwrap_or(1)
                .clamp(1, 12)
        };
        while widths.iter().sum::<usize>() + frame > width {
            let Some((widest, _)) = widths
                .iter()
                .enumerate()
                .filter(|(c, w)| **w > longest_word(*c).min(**w).max(3))
                .max_by_key(|(_, w)| **w)
            else {
                break;
            };
            widths[widest] -= 1;
        }
        widths
    }

    /// Row `index`'s lines in columns of `widths` (a cell wider than its
    /// column wraps, between words where it can), after the rule under the
    /// header when it is the first row of the body. Cells past the last
    /// column are left out.
    fn row(&self, index: usize, widths: &[usize]) -> Vec<String> {
        let mut out = Vec::new();
        let Some(row) = self.rows.get(index) else { return out };
        if index == self.head && index > 0 {
            out.push(rule(widths, "├", "┼", "┤"));
        }
        let wrapped: Vec<Vec<String>> = widths
            .iter()
            .enumerate()
            .map(|(c, width)| {
                let cell = row.get(c).map_or("", String::as_str);
                let options = textwrap::Options::new(*width).word_splitter(textwrap::WordSplitter::NoHyphenation);
                cell.split('\n').flat_map(|line| textwrap::wrap(line, &options)).map(|l| l.into_owned()).collect()
            })
            .collect();
        let height = wrapped.iter().map(Vec::len).max().unwrap_or(1).max(1);
        for line in 0..height {
            let mut text = format!("{DIM}│{PLAIN}");
            for (c, cell) in wrapped.iter().enumerate() {
                let content = cell.get(line).map_or("", String::as_str);
                let content = if index < self.head { format!("{BOLD}{content}{NOT_BOLD}") } else { content.to_owned() };
                let pad = widths[c].saturating_sub(console::measure_text_width(&content));
                let (before, after) = match self.alignments.get(c) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                text.push_str(&format!(" {}{content}{} {DIM}│{PLAIN}", " ".repeat(before), " ".repeat(after)));
            }
            out.push(text);
        }
        out
    }
}

/// A table's horizontal rule over columns of `widths`.
fn rule(widths: &[usize], left: &str, middle: &str, right: &str) -> String {
    let parts: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
    format!("{DIM}{left}{}{right}{PLAIN}", parts.join(middle))
}

/// The table a text starts with, as far as the text goes, read as the
/// renderer reads it: for a table streamed row by row in columns fixed
/// once it is taller than the screen ([`crate::live`]).
pub(crate) struct LeadingTable {
    table: Table,
    /// Where the text after the table starts (the start of the line after
    /// its last row), or the text's end.
    pub(crate) end: usize,
}

impl std::fmt::Debug for LeadingTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeadingTable").field("rows", &self.table.rows.len()).field("end", &self.end).finish()
    }
}

impl LeadingTable {
    /// The table `text` starts with (at the top level), if it starts with one.
    pub(crate) fn read(text: &str) -> Option<LeadingTable> {
        let mut events = Parser::new_ext(text, OPTIONS).into_offset_iter();
        let (first, _) = events.next()?;
        let Event::Start(Tag::Table(alignments)) = first else { return None };
        let mut renderer = Renderer::new(usize::MAX, String::new());
        renderer.table = Some(Table { alignments, ..Table::default() });
        for (event, range) in events {
            if let Event::End(TagEnd::Table) = event {
                let table = renderer.table.take()?;
                let end = text[range.end..].find('\n').map_or(text.len(), |i| range.end + i + 1);
                let end = if text[..range.end].ends_with('\n') { range.end } else { end };
                return Some(LeadingTable { table, end });
            }
            renderer.event(event);
        }
        None
    }

    /// How many rows it has so far, the header's included.
    pub(crate) fn rows(&self) -> usize {
        self.table.rows.len()
    }

    /// Columns for the rows still to come, fixed now: as drawing the table
    /// so far sets them, then widened into what is left of `width`, two
    /// columns more each (a count that grows a digit), the rest to the
    /// widest (the one with the most words, as a rule).
    pub(crate) fn widths(&self, width: usize) -> Vec<usize> {
        let mut widths = self.table.widths(width);
        let frame = 3 * widths.len() + 1;
        let mut spare = width.saturating_sub(widths.iter().sum::<usize>() + frame);
        for column in &mut widths {
            let more = spare.min(2);
            *column += more;
            spare -= more;
        }
        if let Some(widest) = widths.iter_mut().max_by_key(|w| **w) {
            *widest += spare;
        }
        widths
    }

    /// The lines of rows `from..to` in columns of `widths`, the frame's top
    /// first when `from` is 0.
    pub(crate) fn lines(&self, from: usize, to: usize, widths: &[usize]) -> Vec<String> {
        let mut out = Vec::new();
        if from == 0 && !widths.is_empty() {
            out.push(rule(widths, "┌", "┬", "┐"));
        }
        for index in from..to.min(self.rows()) {
            out.extend(self.table.row(index, widths));
        }
        out
    }

    /// The frame's bottom, in columns of `widths`.
    pub(crate) fn bottom(widths: &[usize]) -> String {
        if widths.is_empty() { String::new() } else { rule(widths, "└", "┴", "┘") }
    }
}

#[cfg(test)]
mod tests;
