//! `svc test`'s run: check, build once, then each file's cases against a server of its
//! own, reported, with the coverage their traces give.

use super::{case, coverage, report, server, suite};
use crate::project::Project;
use std::path::{Path, PathBuf};
use svc_frontend::Diagnostics;

pub struct Options {
    /// Only cases whose `file: name` contains this text.
    pub filter: Option<String>,
    pub format: report::Format,
    /// Where to write the coverage as JSON.
    pub coverage_json: Option<PathBuf>,
    /// Fail below this percentage of branches reached.
    pub min_coverage: Option<f64>,
    /// The server tested: what `svc build` ships, or what `svc dev` serves.
    pub flavour: crate::pipeline::Flavour,
}

/// One case's result.
pub struct CaseResult {
    /// `tests/greeting.yaml`
    pub file: String,
    pub name: String,
    /// `tests/greeting.yaml:12`
    pub place: String,
    pub failures: Vec<String>,
    pub seconds: f64,
}

/// Runs the tests of the project at `dir`; returns the exit code.
pub fn run(dir: &Path, opts: &Options) -> i32 {
    let mut diags = Diagnostics::new();
    let mut project = Project::load(dir, &mut diags);
    let suites = suite::load(&mut project, &mut diags);
    let checked = crate::check::check(&project, &mut diags);
    let errors = diags.error_count();
    crate::pipeline::print_diagnostics(diags, &project.sources, "no test was run");
    if checked.has_errors || errors > 0 {
        return 1;
    }
    if suites.iter().all(|s| s.tests.cases.is_empty()) {
        eprintln!(
            "error: `{}` has no test cases\n  = help: write cases in `{}/*.yaml` (see docs/testing.md)",
            dir.display(),
            suite::TESTS_DIR
        );
        return 1;
    }

    // One build for every file.
    let crate_dir = crate::pipeline::out_dir(dir, opts.flavour);
    let name = match crate::pipeline::write_checked(dir, &crate_dir, &checked, true, opts.flavour) {
        Ok(report) => report.bin,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let build = crate::build::BuildOptions {
        flags: None,
        runtime: opts.flavour.runtime(),
        release: false,
        output: Some(dir.join(".svc").join("bin").join(&name)),
        quiet: !matches!(opts.format, report::Format::Human),
    };
    eprintln!(
        "   Building `{name}` ({}) for its tests",
        match opts.flavour {
            crate::pipeline::Flavour::Shipped => "debug",
            crate::pipeline::Flavour::Dev => "as `svc dev` builds it",
        }
    );
    let binary = match crate::build::cargo_build(dir, &crate_dir, &name, &build) {
        Ok(built) => built.binary,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };

    let (runtime, http) = match client() {
        Ok(client) => client,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let mut results: Vec<CaseResult> = Vec::new();
    let mut routes = coverage::branches(&project);
    let mut reporter = report::Reporter::new(opts.format);
    let mut n = 0;
    for suite in &suites {
        let selected: Vec<_> = suite
            .tests
            .cases
            .iter()
            .filter(|c| {
                opts.filter
                    .as_ref()
                    .is_none_or(|f| format!("{}: {}", suite.shown, c.name.value).contains(f.as_str()))
            })
            .collect();
        if selected.is_empty() {
            continue;
        }
        let server = match server::Server::start(&binary, &suite.tests) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {}: {e}", suite.shown);
                return 1;
            }
        };
        for case in selected {
            let outcome = runtime.block_on(case::run(&http, &project, &server, case, n));
            n += 1;
            if let Some(flow) = suite::flow_named(&project, &case.request.route.value)
                && let Some(route) = routes.iter_mut().find(|r| r.route == case.request.route.value)
            {
                for trace in &outcome.traces {
                    coverage::mark(route, flow, trace);
                }
            }
            let result = CaseResult {
                file: suite.shown.clone(),
                name: case.name.value.clone(),
                place: suite::case_place(&project, case.name.span),
                failures: outcome.failures,
                seconds: outcome.seconds,
            };
            reporter.case(&result);
            results.push(result);
        }
    }
    let coverage = coverage::finish(routes);
    reporter.finish(&results, &coverage);
    if let Some(path) = &opts.coverage_json {
        let text = serde_json::to_string_pretty(&coverage).unwrap_or_default();
        if let Err(e) = std::fs::write(path, text + "\n") {
            eprintln!("error: cannot write `{}`: {e}", path.display());
            return 1;
        }
    }
    let failed = results.iter().any(|r| !r.failures.is_empty());
    let below = opts.min_coverage.is_some_and(|min| coverage.percent + 1e-9 < min);
    if below {
        eprintln!(
            "error: flow coverage {:.1}% is below --min-coverage {}%",
            coverage.percent,
            opts.min_coverage.unwrap_or_default()
        );
    }
    if failed || below { 1 } else { 0 }
}

/// The runtime and HTTP client cases are sent with: one thread, no proxy, 30 s a request.
pub fn client() -> Result<(tokio::runtime::Runtime, reqwest::Client), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start an async runtime: {e}"))?;
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
    Ok((runtime, http))
}
