//! Running nodes in unit tests, without a server: a [`TestHost`] with secrets and a
//! scripted `fetch`, and a minimal [`block_on`] so node crates need no async runtime.
//!
//! ```ignore
//! use svc_sdk::testing::TestHost;
//! let run = TestHost::new().secret("API_TOKEN", "t").run::<price_order::Node>(price_order::Inputs { … });
//! assert_eq!(run.result.unwrap().total, 42.0);
//! assert_eq!(run.logs, ["priced 3 lines"]);
//! ```

use crate::context::{BoxFuture, Env, Host, RunContext, Secret};
use crate::fetch::{FetchError, Request, Response};
use crate::{CodeFunctionNode, NodeResult};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

type FetchHandler = dyn Fn(Request) -> Result<Response, FetchError> + Send + Sync;

/// A host for tests: secrets from a map, fetch answered by a closure (or refused).
#[derive(Default, Clone)]
pub struct TestHost {
    secrets: BTreeMap<String, String>,
    fetch: Option<Arc<FetchHandler>>,
    /// Shared by every context it makes, as a server shares its one `Env`.
    env: Arc<Env>,
}

/// The outcome of [`TestHost::run`].
#[derive(Debug)]
pub struct TestRun<O> {
    pub result: NodeResult<O>,
    pub logs: Vec<String>,
}

impl TestHost {
    pub fn new() -> Self {
        TestHost {
            env: Arc::new(Env::dev("0.0.0-test", "test", [])),
            ..Default::default()
        }
    }

    /// Provides a secret value.
    pub fn secret(mut self, name: &str, value: &str) -> Self {
        self.secrets.insert(name.to_string(), value.to_string());
        self
    }

    /// Answers `ctx.fetch` with `handler`.
    pub fn on_fetch(
        mut self,
        handler: impl Fn(Request) -> Result<Response, FetchError> + Send + Sync + 'static,
    ) -> Self {
        self.fetch = Some(Arc::new(handler));
        self
    }

    /// Sets `ctx.env`.
    pub fn env(mut self, env: Env) -> Self {
        self.env = Arc::new(env);
        self
    }

    /// A run context for `inputs`.
    pub fn context<I>(&self, node_key: &'static str, inputs: I) -> RunContext<I> {
        RunContext::new(node_key, inputs, None, self.env.clone(), Arc::new(self.clone()))
    }

    /// Runs node `N` to completion on the current thread.
    pub fn run<N: CodeFunctionNode>(&self, inputs: N::Inputs) -> TestRun<N::Outputs> {
        let ctx = self.context(N::NODE_KEY, inputs);
        let result = block_on(N::run(&ctx));
        TestRun {
            result,
            logs: ctx.logs(),
        }
    }
}

impl Host for TestHost {
    fn secret(&self, name: &str) -> Option<Secret> {
        self.secrets.get(name).map(|v| Secret::new(v.clone()))
    }

    fn fetch(&self, request: Request) -> BoxFuture<'_, Result<Response, FetchError>> {
        let outcome = match &self.fetch {
            Some(handler) => handler(request),
            None => Err(FetchError::Unavailable(
                "this TestHost has no fetch handler; add one with on_fetch".into(),
            )),
        };
        Box::pin(async move { outcome })
    }
}

struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs a future to completion on the current thread.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(out) => return out,
            Poll::Pending => std::thread::park(),
        }
    }
}
