//! What `svc dev` is doing with its server, for the Builder's status line: building after
//! a change, serving a build, or keeping the last good server after a change that does
//! not check or build. The dev loop reports on its own thread; the Builder's API waits
//! for the next report (`GET /api/dev?after=<generation>`).

use serde::Serialize;
use tokio::sync::watch;

/// One report. `generation` grows with every report, so that a page that saw one asks
/// for the next.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DevStatus {
    pub generation: u64,
    pub phase: Phase,
    /// What to show beside the phase: how long the build took, or why it failed.
    pub detail: String,
    /// Whether a server answers (during a build, and after a failed one, the last good
    /// server may).
    pub serving: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Checking, emitting and compiling after a change (or the first build).
    Building,
    /// The server of the last change answers.
    Serving,
    /// The last change did not check or build.
    Failed,
}

/// The dev loop's side: each call is one report.
#[derive(Clone)]
pub struct Reporter(watch::Sender<DevStatus>);

impl Default for Reporter {
    fn default() -> Self {
        Reporter(watch::Sender::new(DevStatus {
            generation: 0,
            phase: Phase::Building,
            detail: "the first build".into(),
            serving: false,
        }))
    }
}

impl Reporter {
    pub fn building(&self, detail: &str) {
        self.report(Phase::Building, detail, None);
    }

    pub fn serving(&self, detail: &str) {
        self.report(Phase::Serving, detail, Some(true));
    }

    /// A change that did not check or build; `serving` says whether an older server
    /// still answers.
    pub fn failed(&self, detail: &str, serving: bool) {
        self.report(Phase::Failed, detail, Some(serving));
    }

    fn report(&self, phase: Phase, detail: &str, serving: Option<bool>) {
        self.0.send_modify(|s| {
            s.generation += 1;
            s.phase = phase;
            s.detail = detail.to_string();
            if let Some(serving) = serving {
                s.serving = serving;
            }
        });
    }

    /// The Builder's side.
    pub fn subscribe(&self) -> watch::Receiver<DevStatus> {
        self.0.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_report_is_a_new_generation_and_a_failure_keeps_saying_whether_a_server_answers() {
        let reporter = Reporter::default();
        let seen = reporter.subscribe();
        reporter.serving("built in 1.0s");
        reporter.building("flows/a.yaml changed");
        assert_eq!(seen.borrow().generation, 2);
        assert!(
            seen.borrow().serving,
            "the last good server answers while the next builds"
        );
        reporter.failed("the project has errors", true);
        let now = seen.borrow().clone();
        assert_eq!((now.generation, now.phase, now.serving), (3, Phase::Failed, true));
    }
}
