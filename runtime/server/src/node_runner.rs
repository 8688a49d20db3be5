//! Running one code node alone, outside any route (`svc run`).
//!
//! `svc run` generates a tiny binary whose `main` lists every node of the project's node
//! crate with [`entry`] and calls [`main`]. The binary reads a node key and a JSON object
//! of inputs, checks the inputs against the node's pins (its typed `Inputs`: unknown,
//! missing and mistyped pins are refused, naming the pin), runs the node the way `svc dev`
//! does (secrets from environment variables, `ctx.env` mirroring the process
//! environment, real `fetch`), and prints:
//!
//! - stdout: the outputs as JSON (or, on `ctx.fail`, `{"failure": {"message", "code"}}`);
//! - stderr: the node's `ctx.log` lines, secrets redacted.
//!
//! Exit status: 0 when the node returned outputs, 1 on `ctx.fail` or a panic, 2 when the
//! inputs do not fit its pins or the command line is wrong.

use crate::fetch::FetchLimits;
use crate::runtime::RuntimeHost;
use crate::secrets::{Requirement, SecretSource, Secrets};
use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use svc_sdk::{CodeFunctionNode, Env, Host, RunContext};

/// What running a node produced.
pub enum Outcome {
    Outputs(serde_json::Value),
    Failed { message: String, code: Option<String> },
}

/// A node's run, type-erased: inputs as JSON in, outputs as JSON out, with its logs.
pub type RunFn = fn(
    serde_json::Value,
    Arc<dyn Host>,
    Arc<Env>,
) -> Result<Pin<Box<dyn Future<Output = (Outcome, Vec<String>)> + Send>>, String>;

/// One runnable node.
pub struct NodeEntry {
    pub key: &'static str,
    pub run: RunFn,
}

/// The entry of node `N`.
pub fn entry<N: CodeFunctionNode>() -> NodeEntry {
    NodeEntry {
        key: N::NODE_KEY,
        run: run_json::<N>,
    }
}

/// A node's run, started: its outcome and the log lines it wrote.
type Running = Pin<Box<dyn Future<Output = (Outcome, Vec<String>)> + Send>>;

fn run_json<N: CodeFunctionNode>(
    inputs: serde_json::Value,
    host: Arc<dyn Host>,
    env: Arc<Env>,
) -> Result<Running, String> {
    let inputs: N::Inputs = serde_path_to_error::deserialize(inputs).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path == "." || path.is_empty() {
            inner
        } else {
            format!("input `{path}`: {inner}")
        }
    })?;
    Ok(Box::pin(async move {
        let ctx = RunContext::new(N::NODE_KEY, inputs, None, env, host);
        let outcome = match N::run(&ctx).await {
            Ok(outputs) => match serde_json::to_value(&outputs) {
                Ok(v) => Outcome::Outputs(v),
                Err(e) => Outcome::Failed {
                    message: format!("the outputs could not be serialized: {e}"),
                    code: None,
                },
            },
            Err(failure) => Outcome::Failed {
                message: failure.message,
                code: failure.code,
            },
        };
        (outcome, ctx.logs())
    }))
}

/// The runner binary's `main`: `<runner> NODE_KEY INPUTS_JSON`.
pub fn main(nodes: &[NodeEntry], secrets: &[Requirement], version: &str) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [key, input] = args.as_slice() else {
        eprintln!("usage: <runner> NODE_KEY INPUTS_JSON");
        return ExitCode::from(2);
    };
    let Some(node) = nodes.iter().find(|n| n.key == key) else {
        let keys: Vec<&str> = nodes.iter().map(|n| n.key).collect();
        eprintln!("error: no node has the key `{key}`; the nodes are: {}", keys.join(", "));
        return ExitCode::from(2);
    };
    let inputs: serde_json::Value = match serde_json::from_str(input) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        Ok(_) => {
            eprintln!("error: the inputs are a JSON object of pin values, such as '{{\"name\": \"Ada\"}}'");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("error: the inputs are not JSON: {e}");
            return ExitCode::from(2);
        }
    };
    // Development semantics: every declared secret that has an environment variable.
    let optional: Vec<Requirement> = secrets
        .iter()
        .map(|r| Requirement {
            name: r.name,
            required: false,
        })
        .collect();
    let secrets = match Secrets::load(&optional, SecretSource::Environment) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let redactor = secrets.redactor();
    let host: Arc<dyn Host> = Arc::new(RuntimeHost::new(secrets, FetchLimits::default()));
    let env = Arc::new(Env::dev(version, "dev", std::env::vars()));
    let future = match (node.run)(inputs, host, env) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: the inputs do not fit the pins of `{key}`: {e}");
            return ExitCode::from(2);
        }
    };
    // Multi-threaded (one worker), like the server: a TypeScript node's `fetch` waits on
    // its thread with `block_in_place`, which a current-thread runtime does not allow.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move { tokio::spawn(future).await });
    let (outcome, logs) = match result {
        Ok(done) => done,
        Err(error) => {
            // A TypeScript node's exception, deadline or memory limit ends its call the
            // way a panic ends a Rust node's: say which, with the engine's message.
            match error
                .try_into_panic()
                .map(|p| p.downcast::<svc_sdk::__private::NodeAbort>())
            {
                Ok(Ok(abort)) => {
                    let detail = abort.detail.as_deref().map(|d| format!(": {}", redactor.redact(d)));
                    eprintln!(
                        "error: node `{key}` was stopped ({}): {}{}",
                        abort.code,
                        redactor.redact(&abort.message),
                        detail.unwrap_or_default()
                    );
                }
                _ => eprintln!("error: node `{key}` panicked"),
            }
            return ExitCode::FAILURE;
        }
    };
    for line in logs {
        eprintln!("[{key}] {}", redactor.redact(&line));
    }
    match outcome {
        Outcome::Outputs(v) => {
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Outcome::Failed { message, code } => {
            let failure = serde_json::json!({ "failure": { "message": redactor.redact(&message), "code": code } });
            println!("{}", serde_json::to_string_pretty(&failure).unwrap_or_default());
            eprintln!(
                "error: node `{key}` failed{}: {}",
                code.as_deref().map(|c| format!(" ({c})")).unwrap_or_default(),
                redactor.redact(&message)
            );
            if code.as_deref() == Some("SECRET_MISSING") {
                // A node run alone reads secrets as `svc dev` does: from the environment.
                eprintln!(
                    "  = help: a node run alone reads each secret from the environment variable of the same name: export it first (`export NAME=…`)"
                );
            }
            ExitCode::FAILURE
        }
    }
}
