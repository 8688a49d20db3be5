//! The part of checking constraints that needs a regular-expression engine: every
//! `pattern` compiles with the engine generated servers match with (the `regex` crate,
//! whose matching is linear in the input, so no request can make a pattern slow). The rest
//! (keys that do not apply, limits no value meets) is `Constraints::problems`, checked
//! where the constraints are read; literals are checked in [`super::types`].

use crate::project::Project;
use svc_frontend::flow::BodySchema;
use svc_frontend::{Code, Diagnostic, Diagnostics, Span};
use svc_types::manifest::PinDefinition;

/// Compiles `pattern` as generated servers will.
pub fn compile_pattern(pattern: &str) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(pattern)
        .size_limit(svc_types::constraints::PATTERN_SIZE_LIMIT)
        .build()
}

/// Reports every pattern of the config's structures and the flows' request inputs that
/// does not compile.
pub fn check_patterns(project: &Project, diags: &mut Diagnostics) {
    if let Some(config) = &project.config {
        for (s, spans) in config.assets.structures.iter().zip(&config.spans.structures) {
            for (f, at) in s.fields.iter().zip(&spans.constraints) {
                if let (Some(p), Some(span)) = (&f.constraints.pattern, at.span("pattern")) {
                    check_pattern(p, span, diags);
                }
            }
        }
    }
    for flow in &project.flows {
        let request = &flow.request;
        let body_fields = match &request.body {
            Some(BodySchema::Fields(fields)) => fields.as_slice(),
            _ => &[],
        };
        for f in body_fields.iter().chain(&request.query).chain(&request.headers) {
            if let (Some(p), Some(span)) = (&f.constraints.pattern, f.constraint_spans.span("pattern")) {
                check_pattern(p, span, diags);
            }
        }
    }
}

/// Reports a pin's `pattern` that does not compile, or that the pin's default does not
/// match (the pin language checks the rest of a default where it is read).
pub fn check_pin_pattern(id: &str, pin: &PinDefinition, pattern: &str, span: Span, diags: &mut Diagnostics) {
    if !check_pattern(pattern, span, diags) {
        return;
    }
    let Ok(re) = compile_pattern(pattern) else { return };
    let strings: Vec<&str> = match &pin.default {
        Some(serde_json::Value::String(s)) => vec![s],
        Some(serde_json::Value::Array(items)) => items.iter().filter_map(|i| i.as_str()).collect(),
        _ => Vec::new(),
    };
    if let Some(s) = strings.into_iter().find(|s| !re.is_match(s)) {
        diags.push(
            Diagnostic::new(
                Code::LiteralBreaksConstraint,
                span,
                format!("the default `{s}` of pin `{id}` does not match its pattern `{pattern}`"),
            )
            .label("default breaks the pin's pattern")
            .help("give a default the pattern matches, or change the pattern"),
        );
    }
}

/// Reports `pattern` when it does not compile; whether it does.
fn check_pattern(pattern: &str, span: Span, diags: &mut Diagnostics) -> bool {
    let Err(e) = compile_pattern(pattern) else { return true };
    // The engine's message shows the pattern with a caret, then the reason: keep the reason.
    let reason = e.to_string();
    diags.push(
        Diagnostic::new(
            Code::InvalidConstraint,
            span,
            format!("the pattern `{pattern}` does not compile"),
        )
        .label("not a pattern svc can match")
        .help(format!(
            "{}; svc matches patterns in time linear in the input, so look-around and backreferences are not available",
            reason
                .lines()
                .last()
                .unwrap_or(&reason)
                .trim()
                .trim_start_matches("error: ")
        )),
    );
    false
}
