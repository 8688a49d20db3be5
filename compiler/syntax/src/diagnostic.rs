//! Diagnostics: every problem the compiler reports, with a stable code, a place, and a
//! hint. Rendered like rustc's for people, and as one JSON object per line for tools.
//!
//! Codes are stable: tools and docs refer to them. `docs/diagnostics.md` lists them all
//! with an example each; add a row there when adding a code here.

use crate::source::{SourceMap, Span};
use std::fmt::Write as _;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
}

macro_rules! codes {
    ($( $variant:ident = $code:literal, $name:literal; )*) => {
        /// A stable diagnostic code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code { $( $variant, )* }

        impl Code {
            /// Every code, in order.
            pub const ALL: &'static [Code] = &[ $( Code::$variant, )* ];

            /// The code as printed: `E0401`.
            pub fn as_str(self) -> &'static str {
                match self { $( Code::$variant => $code, )* }
            }

            /// A short kebab-case name: `unknown-node-key`.
            pub fn name(self) -> &'static str {
                match self { $( Code::$variant => $name, )* }
            }

            /// The severity this code is reported with.
            pub fn severity(self) -> Severity {
                if self.as_str().starts_with('W') { Severity::Warning } else { Severity::Error }
            }
        }
    };
}

codes! {
    // Loading files (E01xx)
    Io = "E0100", "io";
    YamlSyntax = "E0101", "yaml-syntax";
    WrongShape = "E0102", "wrong-shape";
    UnknownField = "E0103", "unknown-field";
    MissingField = "E0104", "missing-field";
    InvalidValue = "E0105", "invalid-value";
    RustSyntax = "E0106", "rust-syntax";
    // Config assets (E02xx)
    InvalidAssetName = "E0201", "invalid-asset-name";
    DuplicateAssetName = "E0202", "duplicate-asset-name";
    EmptyEnum = "E0203", "empty-enum";
    DuplicateEnumKey = "E0204", "duplicate-enum-key";
    DuplicateEnumValue = "E0205", "duplicate-enum-value";
    InvalidFieldName = "E0206", "invalid-field-name";
    DuplicateField = "E0207", "duplicate-field";
    InvalidType = "E0208", "invalid-type";
    UnknownStructure = "E0209", "unknown-structure";
    UnknownEnum = "E0210", "unknown-enum";
    InvalidSecretName = "E0211", "invalid-secret-name";
    DuplicateSecret = "E0212", "duplicate-secret";
    InvalidProjectId = "E0213", "invalid-project-id";
    InvalidConstraint = "E0214", "invalid-constraint";
    // Node definitions in Rust source (E03xx)
    InvalidNodeKey = "E0301", "invalid-node-key";
    DuplicateNodeKey = "E0302", "duplicate-node-key";
    InvalidNodeDefinition = "E0303", "invalid-node-definition";
    UndeclaredSecret = "E0304", "undeclared-secret";
    ForbiddenApi = "E0305", "forbidden-api";
    NonLiteralSecretName = "E0306", "non-literal-secret-name";
    NodeNotPublic = "E0307", "node-not-public";
    ForbiddenDependency = "E0308", "forbidden-dependency";
    RustNodesWithTypeScriptConfig = "E0309", "rust-nodes-with-typescript-config";
    // An error since the second outside review (it was the warning W0705): cargo cannot
    // build a server from two copies of svc's crates, and accepted means builds.
    SdkOutsideProject = "E0310", "sdk-outside-project";
    // Names in flows (E04xx)
    UnknownNodeKey = "E0401", "unknown-node-key";
    UnknownNodeId = "E0402", "unknown-node-id";
    UnknownPin = "E0403", "unknown-pin";
    UnknownRequestField = "E0404", "unknown-request-field";
    InvalidReference = "E0405", "invalid-reference";
    // Types (E05xx)
    TypeMismatch = "E0501", "type-mismatch";
    UnknownFieldPath = "E0502", "unknown-field-path";
    LiteralMismatch = "E0503", "literal-mismatch";
    InlineValueNotAllowed = "E0504", "inline-value-not-allowed";
    OptionalToRequired = "E0505", "optional-to-required";
    LiteralBreaksConstraint = "E0506", "literal-breaks-constraint";
    // Flow graphs (E06xx)
    RequiredInputUnwired = "E0601", "required-input-unwired";
    CheckOutputUnwired = "E0602", "check-output-unwired";
    PathWithoutResponse = "E0603", "path-without-response";
    Cycle = "E0604", "cycle";
    NotRunOnEveryPath = "E0605", "not-run-on-every-path";
    DuplicateRoute = "E0606", "duplicate-route";
    RateLimitWithoutIdentity = "E0607", "rate-limit-without-identity";
    InvalidRoute = "E0608", "invalid-route";
    DuplicateRequestInput = "E0609", "duplicate-request-input";
    // Warnings (W07xx)
    WriteRouteWithoutApiKey = "W0701", "write-route-without-api-key";
    RateLimitByUncheckedKey = "W0702", "rate-limit-by-unchecked-key";
    UnreachableNode = "W0703", "unreachable-node";
    UnusedSecret = "W0704", "unused-secret";
    ModuleStateBetweenCalls = "W0706", "module-state-between-calls";
    // TypeScript sources: `svc.config.ts` and node modules (E08xx)
    TypeScriptSyntax = "E0801", "typescript-syntax";
    NotStatic = "E0802", "not-static";
    ImportNotAllowed = "E0803", "import-not-allowed";
    UnresolvedImport = "E0804", "unresolved-import";
    UnsupportedByEngine = "E0805", "unsupported-by-engine";
    // Flow tests, `tests/*.yaml` (E11xx)
    DuplicateTestCase = "E1101", "duplicate-test-case";
    UnknownTestRoute = "E1102", "unknown-test-route";
    UnknownKeyFixture = "E1103", "unknown-key-fixture";
    UnknownTraceStep = "E1104", "unknown-trace-step";
    TestRequestMismatch = "E1105", "test-request-mismatch";
}

/// A span with a short message shown under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// One reported problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: Code,
    pub message: String,
    /// Where the problem is. Every diagnostic the checker emits has one.
    pub primary: Label,
    /// Related places (the first definition of a duplicate, the node that comes too late, …).
    pub secondary: Vec<Label>,
    /// What to do about it.
    pub help: String,
}

impl Diagnostic {
    /// A diagnostic with the code's own severity.
    pub fn new(code: Code, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: code.severity(),
            code,
            message: message.into(),
            primary: Label {
                span,
                message: String::new(),
            },
            secondary: Vec::new(),
            help: String::new(),
        }
    }

    /// The short text under the primary span.
    pub fn label(mut self, text: impl Into<String>) -> Self {
        self.primary.message = text.into();
        self
    }

    pub fn help(mut self, text: impl Into<String>) -> Self {
        self.help = text.into();
        self
    }

    pub fn with_secondary(mut self, span: Span, text: impl Into<String>) -> Self {
        self.secondary.push(Label {
            span,
            message: text.into(),
        });
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The order diagnostics are printed in: by file, line, column, then code.
    pub fn sort_key(&self, sources: &SourceMap) -> (String, u32, u32, Code, String) {
        let span = self.primary.span;
        (
            sources.get(span.file).display_path.clone(),
            span.line,
            span.column,
            self.code,
            self.message.clone(),
        )
    }

    /// Renders like rustc:
    ///
    /// ```text
    /// error[E0401]: unknown node key `acme.pric-order`
    ///   --> flows/orders.yaml:12:11
    ///    |
    /// 12 |     node: acme.pric-order
    ///    |           ^^^^^^^^^^^^^^^ no node has this key
    ///    |
    ///    = help: did you mean `acme.price-order`?
    /// ```
    pub fn render(&self, sources: &SourceMap) -> String {
        let mut out = String::new();
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let _ = writeln!(out, "{severity}[{}]: {}", self.code.as_str(), self.message);
        let labels: Vec<&Label> = std::iter::once(&self.primary).chain(&self.secondary).collect();
        let gutter = labels.iter().map(|l| l.span.line.to_string().len()).max().unwrap_or(1);
        let pad = " ".repeat(gutter);
        for (i, label) in labels.iter().enumerate() {
            let file = sources.get(label.span.file);
            let arrow = if i == 0 { "-->" } else { ":::" };
            let _ = writeln!(
                out,
                "{pad}{arrow} {}:{}:{}",
                file.display_path, label.span.line, label.span.column
            );
            let excerpt = file
                .line(label.span.line)
                .filter(|l| !l.trim().is_empty() || label.span.len > 0);
            if let Some(line) = excerpt {
                let line = line.replace('\t', "    ");
                let _ = writeln!(out, "{pad} |");
                let _ = writeln!(out, "{:>gutter$} | {}", label.span.line, line);
                let available = line
                    .chars()
                    .count()
                    .saturating_sub((label.span.column as usize).saturating_sub(1));
                let width = (label.span.len as usize).clamp(1, available.max(1));
                let marker = if i == 0 { "^" } else { "-" };
                let underline = format!(
                    "{}{}",
                    " ".repeat((label.span.column as usize).saturating_sub(1)),
                    marker.repeat(width)
                );
                if label.message.is_empty() {
                    let _ = writeln!(out, "{pad} | {underline}");
                } else {
                    let _ = writeln!(out, "{pad} | {underline} {}", label.message);
                }
            }
        }
        if !self.help.is_empty() {
            let _ = writeln!(out, "{pad} |");
            let _ = writeln!(out, "{pad} = help: {}", self.help);
        }
        out
    }

    /// One JSON object (for `svc check --format json`).
    pub fn to_json(&self, sources: &SourceMap) -> serde_json::Value {
        let place = |l: &Label| {
            serde_json::json!({
                "file": sources.get(l.span.file).display_path,
                "line": l.span.line,
                "column": l.span.column,
                "endColumn": l.span.column + l.span.len.max(1),
                "message": l.message,
            })
        };
        let primary = &self.primary;
        serde_json::json!({
            "severity": match self.severity { Severity::Error => "error", Severity::Warning => "warning" },
            "code": self.code.as_str(),
            "name": self.code.name(),
            "message": self.message,
            "file": sources.get(primary.span.file).display_path,
            "line": primary.span.line,
            "column": primary.span.column,
            "endColumn": primary.span.column + primary.span.len.max(1),
            "label": primary.message,
            "help": self.help,
            "related": self.secondary.iter().map(place).collect::<Vec<_>>(),
        })
    }
}

/// A list of diagnostics being collected by a pass.
#[derive(Debug, Default, Clone)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, d: Diagnostic) {
        self.items.push(d);
    }

    pub fn extend(&mut self, other: impl IntoIterator<Item = Diagnostic>) {
        self.items.extend(other);
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(Diagnostic::is_error)
    }

    pub fn error_count(&self) -> usize {
        self.items.iter().filter(|d| d.is_error()).count()
    }

    pub fn warning_count(&self) -> usize {
        self.items.len() - self.error_count()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Sorts into print order and removes exact duplicates.
    pub fn sorted(mut self, sources: &SourceMap) -> Vec<Diagnostic> {
        self.items.sort_by_cached_key(|d| d.sort_key(sources));
        self.items.dedup();
        self.items
    }

    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.items
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    #[test]
    fn codes_are_unique_and_well_formed() {
        let mut seen = std::collections::BTreeSet::new();
        for code in Code::ALL {
            assert!(seen.insert(code.as_str()), "duplicate {}", code.as_str());
            assert!(code.as_str().len() == 5);
            assert!(!code.name().is_empty());
        }
    }

    #[test]
    fn renders_like_rustc() {
        let mut sources = SourceMap::new();
        let file = sources.add(SourceFile::new(
            "flows/orders.yaml",
            None,
            "nodes:\n  price:\n    node: acme.pric-order\n".into(),
        ));
        let d = Diagnostic::new(
            Code::UnknownNodeKey,
            Span::new(file, 3, 11, 15),
            "unknown node key `acme.pric-order`",
        )
        .label("no node has this key")
        .help("did you mean `acme.price-order`?");
        let expected = "\
error[E0401]: unknown node key `acme.pric-order`
 --> flows/orders.yaml:3:11
  |
3 |     node: acme.pric-order
  |           ^^^^^^^^^^^^^^^ no node has this key
  |
  = help: did you mean `acme.price-order`?
";
        assert_eq!(d.render(&sources), expected);
        let json = d.to_json(&sources);
        assert_eq!(json["code"], "E0401");
        assert_eq!(json["line"], 3);
        assert_eq!(json["column"], 11);
        assert_eq!(json["severity"], "error");
    }
}
