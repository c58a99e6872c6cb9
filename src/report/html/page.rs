//! The page itself: a title, the run's facts, and a list of [`Section`]s, each a title and an
//! HTML fragment, rendered into one self-contained document.
//!
//! Self-contained is the invariant: the CSS is inline, the charts are inline SVG, and the page
//! has no `<script>`, no web font and no `src`/`href` that leaves the file, so it opens
//! offline exactly as it was written (the browser test in `tests/it/report_html.rs` checks it).
//! Anything that adds to the page (a comparison table, a new results kind) does it by pushing
//! a section; the page knows nothing about where a section's content comes from.

use std::io;
use std::sync::Arc;

/// One part of the page: a heading and its content.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// The heading (plain text; escaped when rendered).
    pub title: String,
    /// The content: HTML, trusted as it is (build it with [`escape`] and [`markdown`]).
    pub html: String,
    /// Charts (SVG documents) after the content, in a grid, one `<figure>` each.
    pub figures: Vec<Arc<String>>,
}

impl Section {
    /// A section of `title` over `html`.
    pub fn new(title: impl Into<String>, html: impl Into<String>) -> Section {
        Section {
            title: title.into(),
            html: html.into(),
            figures: Vec::new(),
        }
    }
}

/// A whole page: what it shows, the facts of the run, then the sections in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Page {
    /// The `<title>` and the first heading.
    pub title: String,
    /// One line under the heading saying what the page answers.
    pub lede: String,
    /// The run's facts (command line, machine, versions, date), in order.
    pub facts: Vec<(String, String)>,
    /// The sections, in order.
    pub sections: Vec<Section>,
}

impl Page {
    /// Adds a section at the end.
    pub fn push(&mut self, section: Section) {
        self.sections.push(section);
    }

    /// The complete HTML document.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail, and everything written is UTF-8.
        let _ = self.write_to(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Writes the document to `out` piece by piece: the charts are shared with the memo of
    /// drawn charts, and a page gathered into one string first would copy them all again.
    pub fn write_to(&self, out: &mut impl io::Write) -> io::Result<()> {
        let title = escape(&self.title);
        write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{title}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<header>\n\
             <h1>{title}</h1>\n<p class=\"lede\">{}</p>\n",
            escape(&self.lede)
        )?;
        if !self.facts.is_empty() {
            out.write_all(b"<dl class=\"facts\">\n")?;
            for (k, v) in &self.facts {
                writeln!(out, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(v))?;
            }
            out.write_all(b"</dl>\n")?;
        }
        out.write_all(b"</header>\n<nav><ul>\n")?;
        for (i, s) in self.sections.iter().enumerate() {
            writeln!(out, "<li><a href=\"#s{i}\">{}</a></li>", escape(&s.title))?;
        }
        out.write_all(b"</ul></nav>\n<main>\n")?;
        for (i, s) in self.sections.iter().enumerate() {
            write!(
                out,
                "<section id=\"s{i}\">\n<h2>{}</h2>\n{}\n",
                escape(&s.title),
                s.html
            )?;
            if !s.figures.is_empty() {
                out.write_all(b"<div class=\"charts\">\n")?;
                for svg in &s.figures {
                    out.write_all(b"<figure>")?;
                    out.write_all(svg.as_bytes())?;
                    out.write_all(b"</figure>\n")?;
                }
                out.write_all(b"</div>\n")?;
            }
            out.write_all(b"</section>\n")?;
        }
        out.write_all(b"</main>\n</body>\n</html>\n")
    }
}

/// Text made safe for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The results' markdown (tables, lists, headings) as HTML, so the page carries the same
/// tables as `results.md` and its siblings. Raw HTML in the text is shown as text, never
/// passed through: a target's error message must not become markup.
pub fn markdown(md: &str) -> String {
    use pulldown_cmark::{Event, Options, Parser};
    let events = Parser::new_ext(md, Options::ENABLE_TABLES).map(|e| match e {
        Event::Html(t) | Event::InlineHtml(t) => Event::Text(t),
        e => e,
    });
    let mut html = String::with_capacity(md.len() * 2);
    pulldown_cmark::html::push_html(&mut html, events);
    format!("<div class=\"md\">{html}</div>")
}

/// The page's style: readable tables, charts two to a row on a wide screen, and print-safe
/// colours. No web font: the system's sans-serif, which is also what the SVG text names.
const CSS: &str = "
body{font-family:sans-serif;margin:0 auto;max-width:1600px;padding:0 1.5rem 3rem;color:#1d1d1f;background:#fff}
header{border-bottom:1px solid #ddd;padding-bottom:.5rem}
h1{font-size:1.6rem;margin:1.2rem 0 .3rem}
h2{font-size:1.25rem;margin:2rem 0 .6rem;border-bottom:1px solid #eee;padding-bottom:.2rem}
h3{font-size:1.05rem}
.lede{font-size:1.05rem;color:#333;margin:.2rem 0 .8rem}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;font-size:.9rem;margin:.5rem 0}
dl.facts dt{color:#666}
dl.facts dd{margin:0;font-family:monospace;word-break:break-all}
nav ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.4rem 1.2rem;font-size:.9rem}
nav a{color:#0b5cad}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(640px,1fr));gap:1rem}
figure{margin:0;border:1px solid #eee;border-radius:4px;padding:.3rem}
figure svg{width:100%;height:auto;display:block}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0 1rem}
th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:right}
th:first-child,td:first-child{text-align:left}
th{background:#f5f5f7}
.md{overflow-x:auto}
.md td{white-space:nowrap}
table.glance td{text-align:left}
td.fastest{font-weight:bold;white-space:nowrap}
.swatch{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:.4em;vertical-align:-.05em}
.note{color:#555;font-size:.9rem}
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_markup_and_quotes() {
        assert_eq!(escape("a<b>&\"c\"'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;");
    }

    #[test]
    fn markdown_tables_become_html_tables_and_html_stays_text() {
        let html = markdown("| A | B |\n|-|-|\n| 1 | <b>x</b> |\n");
        assert_eq!(
            html,
            "<div class=\"md\"><table><thead><tr><th>A</th><th>B</th></tr></thead><tbody>\n\
             <tr><td>1</td><td>&lt;b&gt;x&lt;/b&gt;</td></tr>\n</tbody></table>\n</div>"
        );
    }

    #[test]
    fn page_has_sections_in_order_and_nothing_external() {
        let mut page = Page {
            title: "t <1>".into(),
            lede: "l".into(),
            facts: vec![("command".into(), "edgebench coredata".into())],
            sections: Vec::new(),
        };
        page.push(Section::new("First", "<p>1</p>"));
        page.push(Section::new("Second", "<p>2</p>"));
        let html = page.render();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<title>t &lt;1&gt;</title>"));
        assert!(html.contains("<dt>command</dt><dd>edgebench coredata</dd>"));
        let first = html
            .find("<section id=\"s0\">\n<h2>First</h2>\n<p>1</p>")
            .unwrap();
        let second = html.find("<section id=\"s1\">\n<h2>Second</h2>").unwrap();
        assert!(first < second);
        for external in ["<script", "http://", "https://", "@import", "url("] {
            assert!(!html.contains(external), "{external}");
        }
    }
}
