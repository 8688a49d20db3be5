//! Compiling a project's modules to bytecode (run by svc when it emits the server, never
//! by the server): the source text is not in the binary, and the server's engine needs no
//! parser for it.

use crate::bundle;
use rquickjs::loader::{ImportAttributes, Loader};
use rquickjs::module::Declared;
use rquickjs::{CatchResultExt, Context, Ctx, Module, Runtime, WriteOptions};
use std::collections::HashMap;

/// The engine's own glue, compiled into every bundle as `svc:host`.
pub const HOST_MODULE: &str = "svc:host";
const HOST_SOURCE: &str = concat!(include_str!("prelude.js"), "\n", include_str!("web.js"));

/// The SDK's module name, as node code imports it.
pub const SDK_MODULE: &str = "@svc/sdk";

/// Compiles `modules` (`(name, JavaScript)`: TypeScript already stripped, imports
/// already rewritten to bundle names) with the SDK's JavaScript into a bundle.
pub fn compile(modules: &[(String, String)], sdk_source: &str) -> Result<Vec<u8>, String> {
    let runtime = Runtime::new().map_err(|e| format!("cannot start QuickJS: {e}"))?;
    let context = Context::full(&runtime).map_err(|e| format!("cannot start QuickJS: {e}"))?;
    let all: Vec<(&str, &str)> = [(HOST_MODULE, HOST_SOURCE), (SDK_MODULE, sdk_source)]
        .into_iter()
        .chain(modules.iter().map(|(n, s)| (n.as_str(), s.as_str())))
        .collect();
    // QuickJS links a module's imports as it compiles it: they come from the same set.
    let sources: HashMap<String, String> = all.iter().map(|(n, s)| (n.to_string(), s.to_string())).collect();
    runtime.set_loader(
        bundle::ByName(sources.keys().cloned().collect()),
        SourceLoader { sources },
    );
    let mut compiled = Vec::new();
    context.with(|ctx| {
        for (name, source) in all {
            let code = Module::declare(ctx.clone(), name, source)
                .catch(&ctx)
                .map_err(|e| format!("`{name}` does not compile: {e}"))?
                .write(WriteOptions {
                    // Messages keep their line numbers; the source itself stays out.
                    strip_source: true,
                    ..WriteOptions::default()
                })
                .map_err(|e| format!("`{name}` cannot be written as bytecode: {e}"))?;
            compiled.push((name.to_string(), code));
        }
        Ok::<(), String>(())
    })?;
    Ok(bundle::encode(&compiled))
}

struct SourceLoader {
    sources: HashMap<String, String>,
}

impl Loader for SourceLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<Module<'js, Declared>> {
        let source = self
            .sources
            .get(name)
            .ok_or_else(|| rquickjs::Error::new_loading(name))?;
        Module::declare(ctx.clone(), name, source.as_str())
    }
}
