//! What bounds TypeScript nodes that wait on slow services (the outside review: engine
//! calls held threads, and their runtimes, without limit): at most `SVC_TS_CONCURRENCY`
//! calls in the engine at once, the next answered `node_busy` after a short wait; and a
//! fetched body counts against the node's memory limit before it enters the heap.
//!
//! Its own test binary: the limits are read from the environment once per process.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};
use svc_script::Engine;
use svc_sdk::__private::NodeAbort;
use svc_sdk::fetch::{Headers, Response};
use svc_sdk::testing::TestHost;

const SDK: &str = include_str!("../../../sdk-ts/index.js");

const NODE: &str = r#"
import { defineCodeFunctionNode, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "slow.fetch",
  name: "Slow fetch",
  inputs: { url: t.string() },
  outputs: { length: t.number() },
  async run(ctx) {
    const response = await fetch(ctx.inputs.url);
    return { length: (await response.text()).length };
  },
});
"#;

static ENGINE: std::sync::LazyLock<&'static Engine> = std::sync::LazyLock::new(|| {
    let modules = vec![("src/nodes/slow.ts".to_string(), NODE.to_string())];
    let bundle = svc_script::compile(&modules, SDK).expect("compiles");
    Box::leak(Box::new(Engine::new(Box::leak(bundle.into_boxed_slice()))))
});

#[derive(Serialize, Clone)]
struct Inputs {
    url: String,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Outputs {
    length: f64,
}

/// The limits of this process, and a turn at the engine's places: the tests share them.
fn limits() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    static SET: Once = Once::new();
    SET.call_once(|| unsafe {
        std::env::set_var("SVC_TS_CONCURRENCY", "2");
        std::env::set_var("SVC_TS_DEADLINE_MS", "5000");
        std::env::set_var("SVC_TS_MEMORY_MB", "8");
    });
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where the test hosts' fetches wait: until `open` is set, counted in `waiting`.
#[derive(Clone, Default)]
struct Gate {
    open: Arc<AtomicBool>,
    waiting: Arc<AtomicUsize>,
}

impl Gate {
    fn opened() -> Gate {
        let gate = Gate::default();
        gate.open.store(true, Ordering::SeqCst);
        gate
    }

    /// A host whose `fetch` waits at this gate, then answers `body`.
    fn host(&self, body: Vec<u8>) -> TestHost {
        let gate = self.clone();
        TestHost::new().on_fetch(move |_| {
            gate.waiting.fetch_add(1, Ordering::SeqCst);
            while !gate.open.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(Response::new(
                200,
                Headers::new(),
                "https://slow.example/",
                body.clone(),
            ))
        })
    }
}

/// One call on a task of its own: an abort unwinds it, as in the server.
async fn call(host: TestHost) -> Result<svc_sdk::NodeResult<Outputs>, NodeAbort> {
    let task = tokio::spawn(async move {
        let ctx = host.context(
            "slow.fetch",
            Inputs {
                url: "https://slow.example/".into(),
            },
        );
        ENGINE
            .run::<Inputs, Outputs>("slow.fetch", "src/nodes/slow.ts", &ctx)
            .await
    });
    task.await
        .map_err(|e| *e.into_panic().downcast::<NodeAbort>().expect("a NodeAbort"))
}

/// A runtime with `n` worker threads: calls run in parallel, as in a server.
fn threads(n: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(n)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn calls_past_the_concurrency_limit_answer_node_busy_and_the_rest_go_on() {
    let _turn = limits();
    threads(4).block_on(async {
        let gate = Gate::default();
        let slow = |body: &str| gate.host(body.as_bytes().to_vec());
        let first = tokio::spawn(call(slow("one")));
        let second = tokio::spawn(call(slow("two!")));
        while gate.waiting.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // Two calls hold the engine's two places: the third waits briefly, then is told.
        let asked = Instant::now();
        let third = call(slow("three")).await.expect_err("no room");
        assert_eq!(third.code, "node_busy", "{third:?}");
        assert!(
            asked.elapsed() < Duration::from_secs(2),
            "answered after a short wait: {:?}",
            asked.elapsed()
        );
        // The two go on as if nothing happened, and their places free up.
        gate.open.store(true, Ordering::SeqCst);
        assert_eq!(first.await.unwrap().unwrap().unwrap(), Outputs { length: 3.0 });
        assert_eq!(second.await.unwrap().unwrap().unwrap(), Outputs { length: 4.0 });
        assert_eq!(call(slow("fourth")).await.unwrap().unwrap(), Outputs { length: 6.0 });
    });
}

#[test]
fn a_fetched_body_counts_against_the_memory_limit() {
    let _turn = limits();
    threads(2).block_on(async {
        let gate = Gate::opened();
        // 16 MiB where the limit is 8: refused before it enters the heap.
        let big = gate.host(vec![b'x'; 16 << 20]);
        let abort = call(big).await.expect_err("over the limit");
        assert_eq!(abort.code, "node_memory_limit", "{abort:?}");
        // A body that fits is read as before.
        let small = gate.host(vec![b'x'; 1 << 20]);
        assert_eq!(
            call(small).await.unwrap().unwrap(),
            Outputs {
                length: (1 << 20) as f64
            }
        );
    });
}
