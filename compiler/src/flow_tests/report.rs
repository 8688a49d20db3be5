//! How `svc test` reports: like `cargo test` for people (`human`), one JSON document for
//! tools (`json`), or JUnit XML for CI systems (`junit`).

use super::CaseResult;
use super::coverage::{self, Coverage};
use std::io::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per case on stdout, the differences of failed cases, a summary, coverage.
    Human,
    /// One JSON object on stdout: every case, the summary and the coverage.
    Json,
    /// A JUnit XML report on stdout.
    Junit,
}

pub struct Reporter {
    format: Format,
}

impl Reporter {
    pub fn new(format: Format) -> Reporter {
        Reporter { format }
    }

    /// A case finished (human output streams as cases run).
    pub fn case(&mut self, result: &CaseResult) {
        if self.format == Format::Human {
            let status = if result.failures.is_empty() { "ok" } else { "FAILED" };
            println!("test {}: {} ... {status}", result.file, result.name);
        }
    }

    pub fn finish(&mut self, results: &[CaseResult], coverage: &Coverage) {
        let passed = results.iter().filter(|r| r.failures.is_empty()).count();
        let failed = results.len() - passed;
        let seconds: f64 = results.iter().map(|r| r.seconds).sum();
        let mut out = std::io::stdout().lock();
        match self.format {
            Format::Human => {
                let failures: Vec<&CaseResult> = results.iter().filter(|r| !r.failures.is_empty()).collect();
                if !failures.is_empty() {
                    let _ = writeln!(out, "\nfailures:");
                    for r in &failures {
                        let _ = writeln!(out, "\n---- {}: {} ({}) ----", r.file, r.name, r.place);
                        for f in &r.failures {
                            let _ = writeln!(out, "  {f}");
                        }
                    }
                    let _ = writeln!(out);
                }
                let _ = writeln!(
                    out,
                    "\ntest result: {}. {passed} passed; {failed} failed; finished in {seconds:.2}s\n",
                    if failed == 0 { "ok" } else { "FAILED" }
                );
                let _ = write!(out, "{}", coverage::render(coverage));
            }
            Format::Json => {
                let cases: Vec<serde_json::Value> = results
                    .iter()
                    .map(|r| {
                        serde_json::json!({
                            "file": r.file,
                            "name": r.name,
                            "place": r.place,
                            "passed": r.failures.is_empty(),
                            "failures": r.failures,
                            "seconds": r.seconds,
                        })
                    })
                    .collect();
                let doc = serde_json::json!({
                    "passed": passed,
                    "failed": failed,
                    "cases": cases,
                    "coverage": coverage,
                });
                let _ = writeln!(out, "{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
            }
            Format::Junit => {
                let _ = write!(out, "{}", junit(results, seconds));
            }
        }
    }
}

/// A JUnit report: one `<testsuite>` per test file, one `<testcase>` per case.
pub fn junit(results: &[CaseResult], seconds: f64) -> String {
    let failed = results.iter().filter(|r| !r.failures.is_empty()).count();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"svc test\" tests=\"{}\" failures=\"{failed}\" time=\"{seconds:.3}\">\n",
        results.len()
    ));
    let mut files: Vec<&str> = results.iter().map(|r| r.file.as_str()).collect();
    files.dedup();
    for file in files {
        let cases: Vec<&CaseResult> = results.iter().filter(|r| r.file == file).collect();
        let failures = cases.iter().filter(|r| !r.failures.is_empty()).count();
        let time: f64 = cases.iter().map(|r| r.seconds).sum();
        xml.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" time=\"{time:.3}\">\n",
            escape(file),
            cases.len()
        ));
        for case in cases {
            xml.push_str(&format!(
                "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" time=\"{:.3}\"",
                escape(file),
                escape(&case.name),
                escape(file),
                case.seconds
            ));
            if case.failures.is_empty() {
                xml.push_str("/>\n");
            } else {
                xml.push_str(">\n");
                xml.push_str(&format!(
                    "      <failure message=\"{}\">{}</failure>\n",
                    escape(case.failures[0].lines().next().unwrap_or_default()),
                    escape(&format!("{}\n{}", case.place, case.failures.join("\n")))
                ));
                xml.push_str("    </testcase>\n");
            }
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 cannot carry at all.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junit_escapes_and_counts() {
        let results = vec![
            CaseResult {
                file: "tests/a.yaml".into(),
                name: "ok <1>".into(),
                place: "tests/a.yaml:3".into(),
                failures: vec![],
                seconds: 0.01,
            },
            CaseResult {
                file: "tests/a.yaml".into(),
                name: "fails & \"quotes\"".into(),
                place: "tests/a.yaml:9".into(),
                failures: vec!["status: expected 201, got 400\n    body: {}".into()],
                seconds: 0.02,
            },
        ];
        let xml = junit(&results, 0.03);
        assert!(
            xml.contains("<testsuites name=\"svc test\" tests=\"2\" failures=\"1\""),
            "{xml}"
        );
        assert!(xml.contains("name=\"ok &lt;1&gt;\""), "{xml}");
        assert!(xml.contains("name=\"fails &amp; &quot;quotes&quot;\""), "{xml}");
        assert!(
            xml.contains("<failure message=\"status: expected 201, got 400\">tests/a.yaml:9"),
            "{xml}"
        );
    }
}
