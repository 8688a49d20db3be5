//! Byte offsets (oxc's spans) to svc's spans: 1-based line and column in characters.

use oxc_span::Span as OxcSpan;
use svc_frontend::{FileId, Span};

/// The start of every line of one file, to turn byte offsets into lines and columns.
pub struct LineIndex<'t> {
    file: FileId,
    text: &'t str,
    line_starts: Vec<u32>,
}

impl<'t> LineIndex<'t> {
    pub fn new(file: FileId, text: &'t str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i as u32 + 1));
        LineIndex {
            file,
            text,
            line_starts,
        }
    }

    /// The file the lines are of.
    pub fn file(&self) -> FileId {
        self.file
    }

    /// The svc span of an oxc span: its start, and its length in characters when it
    /// stays on one line.
    pub fn span(&self, span: OxcSpan) -> Span {
        let start = (span.start as usize).min(self.text.len());
        let mut end = (span.end as usize).clamp(start, self.text.len());
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let line = self.line_starts.partition_point(|&s| s as usize <= start);
        let line_start = self.line_starts[line - 1] as usize;
        let column = char_count(self.text, line_start, start) + 1;
        let on_line = self.text.get(start..end).unwrap_or("");
        let len = match on_line.find('\n') {
            None => on_line.chars().count(),
            Some(_) => 1,
        };
        Span::new(self.file, line as u32, column as u32, len as u32)
    }
}

fn char_count(text: &str, from: usize, to: usize) -> usize {
    // Offsets come from the parser, so they fall on character boundaries; be safe anyway.
    text.get(from..to).map_or(to - from, |s| s.chars().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_count_characters() {
        let text = "ab\n€x = 1;\n\nlast";
        let index = LineIndex::new(FileId(0), text);
        let x = text.find('x').unwrap() as u32;
        assert_eq!(index.span(OxcSpan::new(x, x + 1)), Span::new(FileId(0), 2, 2, 1));
        let last = text.find("last").unwrap() as u32;
        assert_eq!(index.span(OxcSpan::new(last, last + 4)), Span::new(FileId(0), 4, 1, 4));
        assert_eq!(
            index.span(OxcSpan::new(0, 5)).len,
            1,
            "a span over lines marks its start"
        );
        assert_eq!(index.span(OxcSpan::new(0, 0)), Span::new(FileId(0), 1, 1, 0));
    }
}
