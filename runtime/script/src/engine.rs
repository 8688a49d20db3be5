//! The engine: runs a TypeScript node's `run(ctx)` from the embedded bundle.
//!
//! One QuickJS runtime per thread that calls nodes (a tokio worker), created on its
//! first call and kept: a QuickJS runtime is single-threaded, and a call runs start to
//! end on the thread that began it. The promise an async `run` returns settles by
//! draining QuickJS's job queue; the one host call that waits, `fetch`, waits on this
//! thread (`web::fetch`). Each call has a deadline (QuickJS's interrupt handler) and the
//! runtime a memory limit; a call that exceeds either drops its runtime, and the next
//! call starts a fresh one.
//!
//! A call's outcome is what a Rust node's would be: outputs, typed and checked against
//! the pins on the way back; a `ctx.fail` as a [`NodeFailure`] (the flow's `on_fail`);
//! anything else (a thrown exception, wrong outputs, a limit) a [`NodeAbort`], which the
//! server answers with a 500 as it does a panic.

use crate::bundle;
use crate::compile::HOST_MODULE;
use crate::convert::{Reader, WriteError, Writer};
use crate::heap::{MeteredAllocator, Refusals};
use crate::raw::{self, Atoms, ByName};
use crate::web;
use rquickjs::context::intrinsic;
use rquickjs::loader::Loader;
use rquickjs::{CatchResultExt, CaughtError, Context, Ctx, Function, Module, Object, Persistent, Runtime, Value};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use svc_sdk::__private::NodeAbort;
use svc_sdk::__private::js;
use svc_sdk::{Host, NodeFailure, RunContext};

/// What a reader's error says without the value it quotes: serde writes
/// `invalid type: string "…", expected f64`; the answer keeps `invalid type: string,
/// expected f64`. Field names (pins, structure fields) are kept: they are the node's
/// declaration, not its data. Anything else is summarised.
fn without_values(message: &str) -> String {
    if message.starts_with("missing field `") || message.starts_with("unknown field `") {
        return message.to_string();
    }
    if let Some(rest) = message.strip_prefix("invalid type: ")
        && let Some((got, expected)) = rest.split_once(", expected ")
    {
        let first = got.split_whitespace().next().unwrap_or("");
        let kind = match first {
            "floating" => "number",
            "integer" | "string" | "boolean" | "map" | "sequence" | "unit" | "char" | "bytes" => first,
            _ => "value",
        };
        return format!("invalid type: {kind}, expected {expected}");
    }
    if message.contains("nested too deeply") {
        return message.to_string();
    }
    "a value that does not fit the pin's type (the server's log has the detail)".into()
}

/// The limits of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most memory a node's runtime may hold (its heap, between and during calls).
    pub memory_bytes: usize,
    /// The longest a call may run.
    pub deadline: Duration,
    /// The most calls in the engine at once, in the whole server. A call holds a thread
    /// while it runs (and while its `fetch` waits), and each thread its own engine
    /// runtime: this bounds both. A call that finds no room waits for one as long as a
    /// call may run, then answers 503 `node_busy`.
    pub concurrency: usize,
}

/// 64 MiB, one second and 32 calls at once, unless `SVC_TS_MEMORY_MB`,
/// `SVC_TS_DEADLINE_MS` and `SVC_TS_CONCURRENCY` say otherwise.
pub const DEFAULT_LIMITS: Limits = Limits {
    memory_bytes: 64 << 20,
    deadline: Duration::from_secs(1),
    concurrency: 32,
};

impl Limits {
    /// The limits of this process: the environment's (see [`Limits::from_environment`]),
    /// or the defaults where a value is not one (a server has refused to start on it
    /// already).
    pub fn current() -> Limits {
        static LIMITS: OnceLock<Limits> = OnceLock::new();
        *LIMITS.get_or_init(|| Limits::from_environment().unwrap_or(DEFAULT_LIMITS))
    }

    /// The limits `SVC_TS_MEMORY_MB` and `SVC_TS_DEADLINE_MS` set, each a whole number of
    /// 1 or more, or the default where unset. A server with TypeScript nodes calls this at
    /// start-up, so that a value which is not a limit stops it there, named, rather than
    /// leaving every node with the default.
    pub fn from_environment() -> Result<Limits, String> {
        Limits::from_variables(|name| std::env::var(name).ok())
    }

    fn from_variables(var: impl Fn(&str) -> Option<String>) -> Result<Limits, String> {
        let number = |name: &str, unit: &str| -> Result<Option<u64>, String> {
            let Some(value) = var(name) else { return Ok(None) };
            match value.trim().parse::<u64>() {
                Ok(n) if n > 0 => Ok(Some(n)),
                _ => Err(format!(
                    "{name} is `{value}`: it must be a whole number of {unit}, 1 or more"
                )),
            }
        };
        Ok(Limits {
            memory_bytes: number("SVC_TS_MEMORY_MB", "MiB")?
                .map_or(DEFAULT_LIMITS.memory_bytes, |mb| (mb as usize).saturating_mul(1 << 20)),
            deadline: number("SVC_TS_DEADLINE_MS", "milliseconds")?
                .map_or(DEFAULT_LIMITS.deadline, Duration::from_millis),
            concurrency: number("SVC_TS_CONCURRENCY", "calls")?
                .map_or(DEFAULT_LIMITS.concurrency, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        })
    }
}

/// The environment variable naming a bundle file that a development server (`serve
/// --dev`, where `ctx.env.isDev`) runs instead of the one it embeds: `svc dev` sets it,
/// so that a change to TypeScript only needs no Rust rebuild. A deployed server ignores it.
pub const DEV_BUNDLE_ENV: &str = "SVC_TS_BUNDLE";

/// The bundle of [`DEV_BUNDLE_ENV`], read once per process.
fn dev_bundle() -> Result<Option<&'static [u8]>, String> {
    static BUNDLE: OnceLock<Result<Option<&'static [u8]>, String>> = OnceLock::new();
    BUNDLE
        .get_or_init(|| {
            let Some(path) = std::env::var_os(DEV_BUNDLE_ENV) else {
                return Ok(None);
            };
            let bytes = std::fs::read(&path).map_err(|e| {
                format!(
                    "cannot read the bundle {DEV_BUNDLE_ENV}={}: {e}",
                    path.to_string_lossy()
                )
            })?;
            Ok(Some(Box::leak(bytes.into_boxed_slice())))
        })
        .clone()
}

/// How long a call waits for room in the engine: short, as an overloaded proxy answers
/// (Envoy's overload manager refuses at once): a burst is smoothed, a server saturated
/// by slow calls says so instead of queueing requests it cannot serve.
pub const ROOM_WAIT: Duration = Duration::from_millis(100);

/// A permit of [`Limits::concurrency`], for one call; when none frees up within
/// [`ROOM_WAIT`] (or the deadline, if shorter), the call unwinds as `node_busy`
/// (answered 503).
async fn room_in_the_engine() -> tokio::sync::SemaphorePermit<'static> {
    static ROOM: OnceLock<tokio::sync::Semaphore> = OnceLock::new();
    let limits = Limits::current();
    let room = ROOM.get_or_init(|| tokio::sync::Semaphore::new(limits.concurrency.max(1)));
    if let Ok(permit) = room.try_acquire() {
        return permit;
    }
    let waited = match tokio::runtime::Handle::try_current() {
        Ok(_) => tokio::time::timeout(ROOM_WAIT.min(limits.deadline), room.acquire())
            .await
            .ok(),
        // Outside a tokio runtime (a node's unit test): no timer to wait with.
        Err(_) => Some(room.acquire().await),
    };
    match waited {
        Some(Ok(permit)) => permit,
        _ => std::panic::resume_unwind(Box::new(NodeAbort::new(
            svc_sdk::__private::NODE_BUSY,
            format!(
                "{} TypeScript node calls are running already, and none ended within {} ms; try again shortly",
                limits.concurrency,
                ROOM_WAIT.min(limits.deadline).as_millis()
            ),
        ))),
    }
}

/// A project's compiled TypeScript, embedded in the server.
pub struct Engine {
    bundle: &'static [u8],
}

/// How a call ended, when it did not return outputs.
enum Stop {
    Failed(NodeFailure),
    Abort(NodeAbort),
}

impl Engine {
    pub const fn new(bundle: &'static [u8]) -> Engine {
        Engine { bundle }
    }

    /// Runs the node that `module` default-exports, for `ctx`.
    pub async fn run<I, O>(
        &'static self,
        node_key: &'static str,
        module: &'static str,
        ctx: &RunContext<I>,
    ) -> svc_sdk::NodeResult<O>
    where
        I: Serialize,
        O: DeserializeOwned,
    {
        // Waited for without holding a thread: the engine's own calls do hold one.
        let _room = room_in_the_engine().await;
        match self.call(node_key, module, ctx) {
            Ok(outputs) => Ok(outputs),
            Err(Stop::Failed(failure)) => Err(failure),
            // Unwound like a panic (without the panic hook): the server answers 500 and
            // keeps serving; `NodeAbort` carries the code and message it answers with.
            Err(Stop::Abort(abort)) => std::panic::resume_unwind(Box::new(abort)),
        }
    }

    /// Runs a node whose `run` svc compiled to Rust (`compiled`), and in the engine when
    /// the compiled code leaves the call to it (`Exit::Deopt`: the call again, from the
    /// start, its held-back log lines dropped) or when `SVC_TYPESCRIPT=engine` is set.
    /// Under `SVC_TYPESCRIPT=compiled` a call the compiled code leaves is answered 500.
    pub async fn run_compiled<I, O>(
        &'static self,
        node_key: &'static str,
        module: &'static str,
        ctx: &RunContext<I>,
        compiled: fn(&RunContext<I>, &mut Vec<String>) -> js::Flow<O>,
    ) -> svc_sdk::NodeResult<O>
    where
        I: Serialize,
        O: DeserializeOwned,
    {
        if js::engine_only() {
            return self.run(node_key, module, ctx).await;
        }
        let mut logs = Vec::new();
        let answer = match compiled(ctx, &mut logs) {
            Ok(outputs) => Ok(outputs),
            Err(js::Exit::Fail(failure)) => Err(failure),
            Err(js::Exit::Deopt) if js::compiled_only() => std::panic::resume_unwind(Box::new(NodeAbort::new(
                js::DEOPT,
                format!(
                    "node `{node_key}` left its compiled code for the engine, which SVC_TYPESCRIPT=compiled forbids"
                ),
            ))),
            Err(js::Exit::Deopt) => return self.run(node_key, module, ctx).await,
        };
        for line in logs {
            ctx.log(line);
        }
        answer
    }

    fn call<I: Serialize, O: DeserializeOwned>(
        &'static self,
        node_key: &'static str,
        module: &'static str,
        ctx: &RunContext<I>,
    ) -> Result<O, Stop> {
        let abort = |code: &'static str, message: String| Stop::Abort(NodeAbort::new(code, message));
        let limits = Limits::current();

        CALL.with(|call| {
            *call.borrow_mut() = Some(CallState {
                host: ctx.host().clone(),
                logs: Vec::new(),
            })
        });
        let bundle = match ctx.env.is_dev {
            true => dev_bundle()
                .map_err(|e| abort("internal_error", e))?
                .unwrap_or(self.bundle),
            false => self.bundle,
        };
        let settled = WORKERS.with(|workers| {
            let mut workers = workers.borrow_mut();
            let key = (bundle.as_ptr() as usize, bundle.len());
            let worker = match workers.entry(key) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(Worker::start(bundle, limits).map_err(|e| abort("internal_error", e))?)
                }
            };
            let settled = worker.call(module, ctx, limits.deadline);
            if matches!(settled, Err(Trouble::Timeout | Trouble::Memory)) {
                // Its heap may be half-built: the next call starts afresh.
                workers.remove(&key);
            }
            Ok(settled)
        });
        let logs = CALL.with(|call| call.borrow_mut().take().map(|s| s.logs).unwrap_or_default());
        for line in logs {
            ctx.log(line);
        }
        match settled? {
            Ok(Settled::Outputs(outputs)) => Ok(outputs),
            Ok(Settled::Invalid { mut path, message }) => {
                // A circular value's path repeats itself up to the depth limit.
                if let Some((cut, _)) = path.char_indices().nth(120) {
                    path.truncate(cut);
                    path.push('…');
                }
                // The answer names the pin and what was expected, never the value (a
                // secret returned in a number pin would reach the client): the reader's
                // own text, which may quote it, goes to the log only, redacted there.
                let pin = path.split(['.', '[']).find(|s| !s.is_empty());
                let shape = without_values(&message);
                let answer = match pin {
                    None => format!("node `{node_key}` returned outputs that do not fit its pins: {shape}"),
                    Some(pin) => format!("node `{node_key}` returned an invalid output `{pin}`: {shape}"),
                };
                let mut aborted = NodeAbort::new("node_output_invalid", answer);
                aborted.detail = Some(format!("at `{path}`: {message}"));
                Err(Stop::Abort(aborted))
            }
            Ok(Settled::Failure { message, code }) => Err(Stop::Failed(NodeFailure { message, code })),
            Ok(Settled::Threw(detail)) => Err(Stop::Abort(NodeAbort::exception(detail))),
            Err(Trouble::Timeout) => Err(abort(
                "node_timeout",
                format!("node `{node_key}` ran longer than {} ms", limits.deadline.as_millis()),
            )),
            Err(Trouble::Memory) => Err(abort(
                "node_memory_limit",
                format!("node `{node_key}` used more than {} MiB", limits.memory_bytes >> 20),
            )),
            Err(Trouble::NeverSettled) => Err(abort(
                "node_never_settled",
                format!("the promise `run` of node `{node_key}` returned never settled"),
            )),
            Err(Trouble::Engine(e)) => Err(abort("internal_error", format!("node `{node_key}`: {e}"))),
        }
    }
}

/// What the node's current call may reach from JavaScript.
struct CallState {
    host: Arc<dyn Host>,
    logs: Vec<String>,
}

thread_local! {
    static WORKERS: RefCell<ByName<Worker>> = RefCell::default();
    static CALL: RefCell<Option<CallState>> = const { RefCell::new(None) };
}

/// What a call settled to, read back from `svc:host`'s `invoke`.
enum Settled<O> {
    Outputs(O),
    /// `run` returned outputs that do not fit the pins (or that JSON cannot hold: a cycle,
    /// a `BigInt`), at `path`.
    Invalid {
        path: String,
        message: String,
    },
    Failure {
        message: String,
        code: Option<String>,
    },
    Threw(String),
}

enum Trouble {
    Timeout,
    Memory,
    NeverSettled,
    Engine(String),
}

/// An engine error outside the node's code: an allocation refused by the memory limit is
/// that limit; anything else, a broken bundle or engine.
impl From<rquickjs::Error> for Trouble {
    fn from(e: rquickjs::Error) -> Trouble {
        match e {
            rquickjs::Error::Allocation => Trouble::Memory,
            e => Trouble::Engine(e.to_string()),
        }
    }
}

/// One thread's runtime, with the bundle loaded.
///
/// Fields drop in order: the values held for later calls before the context, the
/// context before the runtime (QuickJS frees a runtime only once nothing is left in it).
struct Worker {
    invoke: Persistent<Function<'static>>,
    /// The prototype of what `invoke` settles to when `run` did not return outputs.
    stopped: Persistent<Object<'static>>,
    /// The prototype of `ctx` (its functions).
    context_prototype: Persistent<Object<'static>>,
    /// Each node module's `run`, once imported.
    /// (Keyed by the module name's address: the generated code passes the same literal.)
    runs: ByName<Persistent<Function<'static>>>,
    /// `ctx.env`, frozen, for the `Env` it was made from (one per server): made once.
    /// (Before `context`: persistent values are dropped before their context.)
    env: Option<(Arc<svc_sdk::Env>, Persistent<Value<'static>>)>,
    /// Property names as atoms, for moving values across (freed before the runtime).
    atoms: Atoms,
    context: Context,
    #[allow(dead_code, reason = "held, never read: it must outlive the context")]
    runtime: Runtime,
    deadline: Rc<Cell<Option<Instant>>>,
    /// Raised by the runtime's allocator when it refused an allocation (heap.rs).
    refusals: Refusals,
}

impl Worker {
    fn start(bundle: &'static [u8], limits: Limits) -> Result<Worker, String> {
        let modules: HashMap<String, &'static [u8]> = bundle::decode(bundle)
            .ok_or("the embedded TypeScript bundle is damaged")?
            .into_iter()
            .map(|(name, code)| (name.to_string(), code))
            .collect();
        let refusals = Refusals::default();
        let runtime = Runtime::new_with_alloc(MeteredAllocator::new(limits.memory_bytes, refusals.clone()))
            .map_err(|e| format!("cannot start QuickJS: {e}"))?;
        runtime.set_max_stack_size(512 << 10);
        let deadline: Rc<Cell<Option<Instant>>> = Rc::new(Cell::new(None));
        let watched = deadline.clone();
        runtime.set_interrupt_handler(Some(Box::new(move || {
            watched.get().is_some_and(|t| Instant::now() >= t)
        })));
        let names = modules.keys().cloned().collect();
        runtime.set_loader(bundle::ByName(names), BundleLoader { modules });
        // Every intrinsic but `Eval`: without it neither `eval` nor `new Function` can
        // compile code at run time (spec §4.3), whatever the static check missed.
        let context = Context::custom::<(
            intrinsic::Date,
            intrinsic::RegExpCompiler,
            intrinsic::RegExp,
            intrinsic::Json,
            intrinsic::Proxy,
            intrinsic::MapSet,
            intrinsic::TypedArrays,
            intrinsic::Promise,
            intrinsic::WeakRef,
            intrinsic::DOMException,
        )>(&runtime)
        .map_err(|e| format!("cannot start QuickJS: {e}"))?;
        let (invoke, stopped, context_prototype, atoms) = context.with(|ctx| -> Result<_, String> {
            install_host(&ctx, deadline.clone(), refusals.clone())
                .map_err(|e| format!("cannot install the host functions: {e}"))?;
            let namespace = import(&ctx, HOST_MODULE)?;
            let invoke: Function = namespace.get("invoke").map_err(|e| format!("`{HOST_MODULE}`: {e}"))?;
            let stopped: Object = namespace.get("stopped").map_err(|e| format!("`{HOST_MODULE}`: {e}"))?;
            let context: Object = namespace.get("context").map_err(|e| format!("`{HOST_MODULE}`: {e}"))?;
            // What every call shares is frozen before any node module loads.
            let lockdown: Function = namespace.get("lockdown").map_err(|e| format!("`{HOST_MODULE}`: {e}"))?;
            lockdown
                .call::<_, ()>(())
                .catch(&ctx)
                .map_err(|e| format!("cannot lock the engine's shared objects down: {e}"))?;
            Ok((
                Persistent::save(&ctx, invoke),
                Persistent::save(&ctx, stopped),
                Persistent::save(&ctx, context),
                Atoms::new(&ctx),
            ))
        })?;
        Ok(Worker {
            context,
            runtime,
            deadline,
            refusals,
            env: None,
            atoms,
            invoke,
            stopped,
            context_prototype,
            runs: ByName::default(),
        })
    }

    fn call<I: Serialize, O: DeserializeOwned>(
        &mut self,
        module: &'static str,
        call: &RunContext<I>,
        deadline: Duration,
    ) -> Result<Settled<O>, Trouble> {
        let (inputs, env) = (&call.inputs, &call.env);
        let started = Instant::now();
        self.deadline.set(Some(started + deadline));
        self.refusals.take();
        let runs = &mut self.runs;
        let invoke = &self.invoke;
        let stopped = &self.stopped;
        let context_prototype = &self.context_prototype;
        let made_env = &mut self.env;
        let atoms = &self.atoms;
        let result = self.context.with(|ctx| -> Result<Settled<O>, Trouble> {
            let run = match runs.get(&raw::name_key(module)) {
                Some(run) => run.clone().restore(&ctx)?,
                None => {
                    let namespace = import(&ctx, module).map_err(Trouble::Engine)?;
                    let definition: Object = namespace
                        .get("default")
                        .map_err(|e| Trouble::Engine(format!("`{module}` has no node definition: {e}")))?;
                    let run: Function = definition
                        .get("run")
                        .map_err(|e| Trouble::Engine(format!("`{module}`: `run` is not a function: {e}")))?;
                    runs.insert(raw::name_key(module), Persistent::save(&ctx, run.clone()));
                    run
                }
            };
            let invoke = invoke.clone().restore(&ctx)?;
            let inputs = write(&ctx, atoms, inputs)?;
            // `undefined` when the node's code cannot read it (the compiler knows).
            let request = match call.request.as_deref() {
                Some(meta) => write(&ctx, atoms, &RequestJs(meta))?,
                None => Value::new_undefined(ctx.clone()),
            };
            let env = match made_env {
                Some((made_from, frozen)) if Arc::ptr_eq(made_from, env) => frozen.clone().restore(&ctx)?,
                _ => {
                    let object = write(&ctx, atoms, &env_value(env))?;
                    // Frozen: every call shares it, and none may change what the next sees.
                    let freeze: Function = ctx.globals().get::<_, Object>("Object").and_then(|o| o.get("freeze"))?;
                    freeze.call::<_, ()>((object.clone(),))?;
                    *made_env = Some((env.clone(), Persistent::save(&ctx, object.clone())));
                    object
                }
            };
            let prototype = context_prototype.clone().restore(&ctx)?;
            let name = |name| atoms.name(&ctx, name);
            let node_ctx = raw::frozen(
                &ctx,
                &prototype,
                [
                    (name("inputs")?, inputs),
                    (name("request")?, request),
                    (name("env")?, env),
                ],
            )?;
            let called: Value = invoke
                .call((run, node_ctx, call.keeps_logs()))
                .catch(&ctx)
                .map_err(trouble)?;
            // A synchronous `run` has settled already; an async one is a promise of it.
            let settled: Value = match called.as_promise().cloned() {
                None => called,
                Some(promise) => match promise.finish::<Value>() {
                    Ok(settled) => settled,
                    // The job queue ran dry with the promise pending: a limit stopped the
                    // code (QuickJS drops what cannot be caught), or it waits for nothing.
                    Err(rquickjs::Error::WouldBlock) if Instant::now() >= started + deadline => {
                        return Err(Trouble::Timeout);
                    }
                    Err(rquickjs::Error::WouldBlock) => return Err(Trouble::NeverSettled),
                    Err(e) => return Err(trouble(CaughtError::from_error(&ctx, e))),
                },
            };
            let stopped = stopped.clone().restore(&ctx)?;
            let outputs = read_settled(settled, &stopped, atoms);
            // Jobs the node queued and did not wait for run now, as part of this call
            // (their logs are its logs), not at the start of the next one, which may be
            // another user's. A chain that never ends is stopped by the deadline.
            while ctx.execute_pending_job() {
                if Instant::now() >= started + deadline {
                    return Err(Trouble::Timeout);
                }
            }
            outputs
        });
        self.deadline.set(None);
        // A refused allocation is the memory limit, whatever the code made of the error
        // (caught it, threw `null` where the engine could not make the error, or waited
        // on a job that failed): the heap is one the engine gave up on.
        if self.refusals.take() {
            return Err(Trouble::Memory);
        }
        result
    }
}

/// What `invoke` settled to: a `Stopped` (known by its prototype, `stopped`) for a
/// failure or an exception, anything else the outputs.
fn read_settled<'js, O: DeserializeOwned>(
    settled: Value<'js>,
    stopped: &Object<'js>,
    atoms: &Atoms,
) -> Result<Settled<O>, Trouble> {
    let Some(stop) = settled
        .as_object()
        .filter(|o| o.get_prototype().as_ref() == Some(stopped))
    else {
        // Straight into the typed outputs, checked against the pins on the way; read
        // again, tracking the path, only to say where they do not fit.
        if let Ok(outputs) = O::deserialize(Reader::new(settled.clone(), atoms)) {
            return Ok(Settled::Outputs(outputs));
        }
        return Ok(
            match serde_path_to_error::deserialize::<_, O>(Reader::new(settled, atoms)) {
                Ok(outputs) => Settled::Outputs(outputs),
                Err(e) => Settled::Invalid {
                    path: e.path().to_string(),
                    message: e.into_inner().to_string(),
                },
            },
        );
    };
    let text = |key: &str| stop.get::<_, Option<String>>(key).ok().flatten();
    let message = text("message").unwrap_or_default();
    if stop.get::<_, bool>("failure").unwrap_or(false) {
        Ok(Settled::Failure {
            message,
            code: text("code"),
        })
    } else if is_interrupt(&message) {
        Err(Trouble::Timeout)
    } else {
        Ok(Settled::Threw(message))
    }
}

fn is_interrupt(message: &str) -> bool {
    message.contains("interrupted")
}

/// An engine error (not a node's own rejection): a limit, or a broken bundle.
fn trouble(error: CaughtError) -> Trouble {
    let message = error.to_string();
    if is_interrupt(&message) {
        Trouble::Timeout
    } else if matches!(error, CaughtError::Error(rquickjs::Error::Allocation)) {
        Trouble::Memory
    } else {
        Trouble::Engine(message)
    }
}

/// Imports a module of the bundle and returns its namespace.
fn import<'js>(ctx: &Ctx<'js>, name: &str) -> Result<Object<'js>, String> {
    Module::import(ctx, name)
        .catch(ctx)
        .and_then(|promise| promise.finish::<Object>().catch(ctx))
        .map_err(|e| format!("cannot load `{name}`: {e}"))
}

/// `globalThis.__svc_host`, which `svc:host` takes on load: the current call's secrets
/// and log, and what the web globals (web.js) need from Rust.
fn install_host(ctx: &Ctx, deadline: Rc<Cell<Option<Instant>>>, heap: Refusals) -> rquickjs::Result<()> {
    let host = Object::new(ctx.clone())?;
    host.set(
        "url",
        Function::new(ctx.clone(), |input: String, base: Option<String>| {
            web::parse_url(&input, base.as_deref())
        })?,
    )?;
    host.set(
        "urlSet",
        Function::new(ctx.clone(), |href: String, part: String, value: String| {
            web::set_url_part(&href, &part, &value)
        })?,
    )?;
    host.set(
        "randomBytes",
        Function::new(ctx.clone(), |n: usize| web::random_bytes(n))?,
    )?;
    host.set(
        "fetch",
        Function::new(ctx.clone(), move |request: String| -> String {
            let Some(host) = CALL.with(|call| call.borrow().as_ref().map(|c| c.host.clone())) else {
                return web::fetch_error("fetch is only available while a node runs");
            };
            let remaining = deadline.get().map(|t| t.saturating_duration_since(Instant::now()));
            let answer = web::fetch(host.as_ref(), &request, remaining);
            // The answer (its body within) is about to become the node's: it counts
            // against the node's memory limit before it is expanded into the heap, not
            // after, where a large body would be held outside any limit.
            if answer.len() > heap.headroom() {
                heap.refuse();
                return web::fetch_error("the response is larger than the node's memory limit leaves room for");
            }
            answer
        })?,
    )?;
    host.set(
        "secret",
        Function::new(ctx.clone(), |name: String| -> Option<String> {
            CALL.with(|call| {
                let call = call.borrow();
                let secret = call.as_ref()?.host.secret(&name)?;
                Some(secret.expose().to_string())
            })
        })?,
    )?;
    host.set(
        "log",
        Function::new(ctx.clone(), |line: String| {
            CALL.with(|call| {
                if let Some(call) = call.borrow_mut().as_mut() {
                    call.logs.push(line);
                }
            })
        })?,
    )?;
    ctx.globals().set("__svc_host", host)
}

/// `value` as a JavaScript value of the node's context.
fn write<'js, T: Serialize + ?Sized>(ctx: &Ctx<'js>, atoms: &Atoms, value: &T) -> Result<Value<'js>, Trouble> {
    value
        .serialize(Writer::new(ctx.clone(), atoms))
        .map_err(|e: WriteError| {
            if e.out_of_memory {
                Trouble::Memory
            } else {
                Trouble::Engine(format!("a value cannot be given to the node: {e}"))
            }
        })
}

/// `ctx.request` as the node sees it: the fields the runtime has, written on the request
/// path with no copy of them.
struct RequestJs<'a>(&'a svc_sdk::RequestMeta);

impl Serialize for RequestJs<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let meta = self.0;
        let mut object = serializer.serialize_map(None)?;
        if let Some(method) = &meta.method {
            object.serialize_entry("method", method)?;
        }
        if let Some(url) = &meta.url {
            object.serialize_entry("url", url)?;
        }
        if let Some(headers) = &meta.headers {
            object.serialize_entry("headers", headers)?;
        }
        object.end()
    }
}

/// `ctx.env`: `isDev`, `version`, `gitSha`, and in development the environment.
fn env_value(env: &svc_sdk::Env) -> serde_json::Value {
    let mut object: serde_json::Map<String, serde_json::Value> =
        env.vars().into_iter().map(|(k, v)| (k, v.into())).collect();
    object.insert("isDev".into(), env.is_dev.into());
    object.insert("version".into(), env.version.clone().into());
    object.insert("gitSha".into(), env.git_sha.clone().into());
    serde_json::Value::Object(object)
}

struct BundleLoader {
    modules: HashMap<String, &'static [u8]>,
}

impl Loader for BundleLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attributes: Option<rquickjs::loader::ImportAttributes<'js>>,
    ) -> rquickjs::Result<Module<'js, rquickjs::module::Declared>> {
        let code = self
            .modules
            .get(name)
            .ok_or_else(|| rquickjs::Error::new_loading(name))?;
        // SAFETY: the bundle was written by `compile` with this very engine (svc and the
        // server build the same pinned rquickjs), and is embedded in the binary as is.
        unsafe { Module::load(ctx.clone(), code) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_come_from_the_environment_and_a_value_that_is_not_one_is_named() {
        let from = |pairs: &'static [(&'static str, &'static str)]| {
            Limits::from_variables(|name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()))
        };
        assert_eq!(from(&[]), Ok(DEFAULT_LIMITS));
        assert_eq!(
            from(&[
                ("SVC_TS_MEMORY_MB", "16"),
                ("SVC_TS_DEADLINE_MS", " 250 "),
                ("SVC_TS_CONCURRENCY", "8")
            ]),
            Ok(Limits {
                memory_bytes: 16 << 20,
                deadline: Duration::from_millis(250),
                concurrency: 8,
            })
        );
        for (name, value) in [
            ("SVC_TS_MEMORY_MB", "64MB"),
            ("SVC_TS_MEMORY_MB", "0"),
            ("SVC_TS_DEADLINE_MS", "-1"),
            ("SVC_TS_CONCURRENCY", "0"),
        ] {
            let error = Limits::from_variables(|n| (n == name).then(|| value.to_string())).unwrap_err();
            assert!(
                error.starts_with(&format!("{name} is `{value}`: it must be a whole number")),
                "{error}"
            );
        }
    }
}
