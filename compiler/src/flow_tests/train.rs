//! The training run of a profile-guided build (`svc build --pgo`, [`crate::pgo`]): the
//! requests of the project's flow tests, sent again and again to its instrumented server.
//!
//! The server runs as in production (no `--test-mode`: no traces in responses, the
//! limiters on the real clock), so that the profile counts the branches production
//! takes; nothing is checked. Each round is one run of a test file against a server
//! started for it with the file's fixtures, as `svc test` runs it: a rate limit the
//! file spends on purpose is spent once a round, and the round's requests have the mix
//! of outcomes the tests were written for. (One server for all rounds answered 19,704
//! of examples/shop's 20,583 training requests with 429 once the per-key limits were
//! spent: a profile of refusals.) The servers' start-ups are counted too, once a round.

use super::case::Requests;
use super::server::{Mode, Server};
use super::suite::Suite;
use crate::project::Project;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long the requests of all test files are sent, in all: long enough that a route's
/// code is counted thousands of times, against a start-up per round (the benchmark
/// project: 2,175 requests in 87 rounds).
pub const TRAINING_TIME: Duration = Duration::from_secs(3);

/// What a training run sent.
#[derive(Debug, Default)]
pub struct Trained {
    /// Requests answered, by status.
    pub answered: BTreeMap<u16, usize>,
    /// Requests that got no answer (the connection failed).
    pub unanswered: usize,
    /// Rounds (one run of one test file's cases), in all.
    pub rounds: usize,
}

impl Trained {
    pub fn requests(&self) -> usize {
        self.answered.values().sum()
    }

    /// Requests answered 2xx.
    pub fn successes(&self) -> usize {
        self.answered.range(200..300).map(|(_, n)| n).sum()
    }
}

/// Sends the cases of `suites` to `binary` in rounds for [`TRAINING_TIME`], a server per
/// round of a test file (with that file's fixtures), each stopped with SIGTERM so that it
/// writes its profile to `profile_file` (an `LLVM_PROFILE_FILE` pattern).
pub fn train(project: &Project, suites: &[Suite], binary: &Path, profile_file: &Path) -> Result<Trained, String> {
    let (runtime, http) = super::client()?;
    let suites: Vec<&Suite> = suites.iter().filter(|s| !s.tests.cases.is_empty()).collect();
    let share = TRAINING_TIME / suites.len().max(1) as u32;
    let mut trained = Trained::default();
    let mode = Mode::Training {
        profile_file: profile_file.to_path_buf(),
    };
    for suite in suites {
        let started = Instant::now();
        let mut rounds = 0;
        while rounds == 0 || started.elapsed() < share {
            let server = Server::start_as(binary, &suite.tests, &mode).map_err(|e| format!("{}: {e}", suite.shown))?;
            for (n, case) in suite.tests.cases.iter().enumerate() {
                let requests = Requests::new(project, &server, case);
                for i in 0..case.repeat {
                    let request = requests.build(&http, n, i);
                    let sent = runtime.block_on(async {
                        let response = request.send().await?;
                        let status = response.status().as_u16();
                        response.bytes().await?;
                        Ok::<u16, reqwest::Error>(status)
                    });
                    match sent {
                        Ok(status) => *trained.answered.entry(status).or_default() += 1,
                        Err(_) => trained.unanswered += 1,
                    }
                }
            }
            server.stop().map_err(|e| format!("{}: {e}", suite.shown))?;
            rounds += 1;
        }
        trained.rounds += rounds;
    }
    Ok(trained)
}
