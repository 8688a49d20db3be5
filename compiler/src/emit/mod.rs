//! Emitting: the lowered project becomes a Rust crate.
//!
//! ```text
//! Cargo.toml            askama template
//! src/main.rs           askama template: the binary's App description
//! src/assets.rs         the project's structures and enums as Rust types
//! src/nodes.rs          the code nodes the routes call, and static checks of their signatures
//! src/routes/mod.rs     the router: every path, its methods, 405 and preflight answers
//! src/routes/<flow>.rs  one module per flow (from quote, formatted with prettyplease)
//! ```
//!
//! [`emit`] makes the files in memory; [`write`] (`write_crate`) puts them on disk, only
//! those that changed, and says which are stale (`svc emit --check`).
//!
//! Output is deterministic: everything is sorted, names derive from node ids and file
//! names, and nothing depends on time or the machine, except the paths to the svc
//! runtime and to the node crate, which are relative whenever the output lives near them.

pub mod route;
pub mod validate;
pub mod values;
mod write;

pub use write::{Stale, WriteReport, seed_lockfile, stale, write, write_crate};

use crate::lower::{ProjectIr, RouteIr};
use askama::Template;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use svc_frontend::flow::Method;
use svc_frontend::node_crate::NodeCode;
use svc_frontend::rust_types::{ident, pin_rust_type};

/// The version of svc, written into every generated file.
pub const SVC_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where a generated crate stands: the paths its `Cargo.toml` gives to what it depends
/// on, and how it sits in a cargo workspace. Worked out from the file system
/// ([`Layout::new`]) before emitting, so that [`emit`] reads nothing: its output is a
/// function of the IR and the layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// From the crate to the project's `.svc/source` link (see [`crate::sources`]), so
    /// that nothing generated names where svc itself is.
    svc_source: PathBuf,
    /// From the crate to the node crate, when the project has one.
    node_crate: Option<String>,
    pub placement: Placement,
    pub runtime: RuntimeLinking,
    /// A development server (`svc dev`): its own package and binary names
    /// ([`dev_bin`]), so that it never shares a crate or a binary with what `svc build`
    /// and `svc test` build beside it.
    pub dev: bool,
}

/// The binary of a project's development server: `<project>-dev`.
pub fn dev_bin(project: &str) -> String {
    format!("{project}-dev")
}

/// How a server links svc's crates (the runtime, the SDK, the TypeScript engine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RuntimeLinking {
    /// Into the one binary, with svc's allocator: what `svc build` ships and `svc test`
    /// tests.
    #[default]
    Static,
    /// From the `svc-dylib` shared library (`runtime/dylib`), with the system allocator:
    /// what `svc dev` serves, so that a change relinks a small binary. The generated code
    /// is otherwise the same.
    Shared,
}

impl Layout {
    /// The layout of a crate written to `out_dir` for the project at `project_root`
    /// whose node crate (if any) is at `node_crate_dir`.
    pub fn new(project_root: &Path, node_crate_dir: Option<&Path>, out_dir: &Path, placement: Placement) -> Layout {
        let out = absolute(out_dir);
        Layout {
            svc_source: PathBuf::from(relative_path(&out, &absolute(project_root).join(crate::sources::LINK))),
            node_crate: node_crate_dir.map(|dir| relative_path(&out, &absolute(dir))),
            placement,
            runtime: RuntimeLinking::Static,
            dev: false,
        }
    }

    /// The same layout, for a development server linking svc's crates as `runtime` says.
    pub fn development(self, runtime: RuntimeLinking) -> Layout {
        Layout {
            runtime,
            dev: true,
            ..self
        }
    }

    /// The path of the node crate, when the project has one.
    pub(crate) fn node_crate(&self) -> Option<&str> {
        self.node_crate.as_deref()
    }

    /// The path of one of svc's crates (`runtime/sdk`).
    pub(crate) fn svc_crate(&self, krate: &str) -> String {
        self.svc_source.join(krate).to_string_lossy().into_owned()
    }
}

/// One generated file: its path in the crate and its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    pub path: PathBuf,
    pub contents: Contents,
}

/// What a generated file holds: text, except the TypeScript nodes' bytecode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contents {
    Text(String),
    Bytes(Vec<u8>),
}

impl File {
    pub fn text(path: impl Into<PathBuf>, text: String) -> File {
        File {
            path: path.into(),
            contents: Contents::Text(text),
        }
    }

    pub fn bytes(path: impl Into<PathBuf>, bytes: Vec<u8>) -> File {
        File {
            path: path.into(),
            contents: Contents::Bytes(bytes),
        }
    }

    /// The text of a text file.
    pub fn as_text(&self) -> Option<&str> {
        match &self.contents {
            Contents::Text(t) => Some(t),
            Contents::Bytes(_) => None,
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        match &self.contents {
            Contents::Text(t) => t.as_bytes(),
            Contents::Bytes(b) => b,
        }
    }
}

#[derive(Template)]
#[template(path = "Cargo.toml.askama", escape = "none")]
pub(crate) struct CargoToml<'a> {
    pub svc_version: &'a str,
    pub project: &'a str,
    /// The binary's name.
    pub bin: &'a str,
    pub package: String,
    pub version: &'a str,
    pub runtime_path: String,
    pub sdk_path: String,
    /// svc-script's path, when the crate runs TypeScript nodes.
    pub script_path: Option<String>,
    /// svc-dylib's path, when the server links svc's crates from it.
    pub dylib_path: Option<String>,
    pub node_crate: Option<NodeDep>,
    /// Its own workspace with its own profiles (`svc emit --out`), rather than a member of
    /// the project's workspace in `.svc/`.
    pub standalone: bool,
}

impl<'a> CargoToml<'a> {
    /// The manifest of a crate of `ir`'s project laid out as `layout` says: package
    /// `package` building binary `bin`, with svc-script when it runs TypeScript nodes.
    pub(crate) fn new(ir: &'a ProjectIr, layout: &Layout, package: String, bin: &'a str, scripts: bool) -> Self {
        CargoToml {
            svc_version: SVC_VERSION,
            project: &ir.name,
            bin,
            package,
            version: &ir.version,
            runtime_path: layout.svc_crate("runtime/server"),
            sdk_path: layout.svc_crate("runtime/sdk"),
            script_path: scripts.then(|| layout.svc_crate("runtime/script")),
            dylib_path: (layout.runtime == RuntimeLinking::Shared).then(|| layout.svc_crate("runtime/dylib")),
            node_crate: ir
                .node_crate
                .as_ref()
                .zip(layout.node_crate())
                .map(|(k, path)| NodeDep {
                    package: k.package.clone(),
                    path: path.to_string(),
                }),
            standalone: layout.placement == Placement::Standalone,
        }
    }
}

/// Where a generated crate is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// In the project's `.svc/` (`.svc/server`, `.svc/runner`): a member of the workspace
    /// there (see [`write_project_workspace`]).
    ProjectWorkspace,
    /// Anywhere else (`svc emit --out`): its own workspace.
    Standalone,
}

pub(crate) struct NodeDep {
    pub package: String,
    pub path: String,
}

#[derive(Template)]
#[template(path = "main.rs.askama", escape = "none")]
struct MainRs {
    project_literal: String,
    workspace_literal: String,
    api_literal: String,
    /// Whether the crate has `src/scripts.rs` (TypeScript nodes).
    scripts: bool,
    /// Whether the crate has `src/validate.rs` (structures with field constraints).
    validate: bool,
    /// Whether svc's crates come from svc-dylib ([`RuntimeLinking::Shared`]).
    shared_runtime: bool,
}

/// `to` relative to `from` when they share more than the filesystem root; `to` otherwise.
pub fn relative_path(from: &Path, to: &Path) -> String {
    let from: Vec<Component> = from.components().collect();
    let to_components: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to_components).take_while(|(a, b)| a == b).count();
    if common <= 1 {
        return to.display().to_string();
    }
    let mut parts: Vec<String> = std::iter::repeat_n("..".to_string(), from.len() - common).collect();
    parts.extend(
        to_components[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().to_string()),
    );
    if parts.is_empty() { ".".into() } else { parts.join("/") }
}

pub(crate) fn absolute(p: &Path) -> PathBuf {
    let p = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    p.canonicalize().unwrap_or(p)
}

/// Formats tokens as a Rust file, turning `svc_comment!("…");` markers into `// …` lines.
/// prettyplease writes a marker whose text is long over three lines (`svc_comment!(`,
/// the string, `);`): both forms are turned.
pub fn format_file(tokens: TokenStream) -> Result<String, crate::Error> {
    let file: syn::File = syn::parse2(tokens).map_err(|e| crate::Error::Bug {
        what: "Rust",
        detail: e.to_string(),
    })?;
    let text = prettyplease::unparse(&file);
    let mut out = String::with_capacity(text.len());
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let one_line = trimmed
            .strip_prefix("svc_comment!(\"")
            .and_then(|r| r.strip_suffix("\");"))
            .map(str::to_string);
        let wrapped = || -> Option<String> {
            if trimmed != "svc_comment!(" {
                return None;
            }
            let mut ahead = lines.clone();
            let text = ahead.next()?.trim().strip_prefix('"')?.strip_suffix('"')?.to_string();
            (ahead.next()?.trim() == ");").then_some(text)
        };
        let comment = match one_line {
            Some(text) => Some(text),
            None => wrapped().inspect(|_| {
                lines.next();
                lines.next();
            }),
        };
        match comment {
            Some(text) => {
                out.push_str(indent);
                out.push_str("// ");
                out.push_str(&text.replace("\\\"", "\"").replace("\\\\", "\\"));
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    Ok(out)
}

/// A template's failure to render, or to read as Rust: a bug in svc.
pub(crate) fn template<E: std::fmt::Display>(what: &'static str) -> impl FnOnce(E) -> crate::Error {
    move |e| crate::Error::Bug {
        what,
        detail: e.to_string(),
    }
}

/// The generated package's name: `<project>-server`, or `<project>-server-2` when the
/// node crate already has that name (as cargo compares names, `-` and `_` alike), so that
/// the two packages of one build never share a name.
fn server_package(ir: &ProjectIr) -> String {
    let package = format!("{}-server", ir.name);
    match &ir.node_crate {
        Some(k) if k.package.replace('_', "-") == package.replace('_', "-") => format!("{package}-2"),
        _ => package,
    }
}

/// Every file of the generated crate, for a crate laid out as `layout` says.
pub fn emit(ir: &ProjectIr, layout: &Layout) -> Result<Vec<File>, crate::Error> {
    let mut files = Vec::new();

    let (package, bin) = match layout.dev {
        true => (format!("{}-dev", server_package(ir)), dev_bin(&ir.name)),
        false => (server_package(ir), ir.name.clone()),
    };
    let cargo = CargoToml::new(ir, layout, package, &bin, ir.scripts.is_some());
    files.push(File::text(
        "Cargo.toml",
        cargo.render().map_err(template("Cargo.toml"))?,
    ));

    let main = MainRs {
        project_literal: format!("{:?}", ir.name),
        workspace_literal: format!("{:?}", ir.workspace_id),
        api_literal: format!("{:?}", ir.api_id),
        scripts: ir.scripts.is_some(),
        validate: !ir.validated.is_empty(),
        shared_runtime: layout.runtime == RuntimeLinking::Shared,
    };
    let main_text = main.render().map_err(template("main.rs"))?;
    let main_tokens: TokenStream = main_text.parse().map_err(template("main.rs"))?;
    let header = format!(
        " @generated by svc {SVC_VERSION} from the project `{}`. Do not edit:\n change the flows, config or nodes and run `svc emit` (or `svc build`) again.",
        ir.name
    );
    files.push(File::text(
        "src/main.rs",
        format_file(quote!(#![doc = #header] #main_tokens))?,
    ));

    files.push(File::text("src/assets.rs", format_file(assets(ir))?));
    if let Some(validate) = validate::module(&ir.assets, &ir.validated) {
        files.push(File::text("src/validate.rs", format_file(validate)?));
    }
    files.push(File::text("src/nodes.rs", format_file(nodes(ir))?));
    files.push(File::text("src/routes/mod.rs", format_file(routes_mod(ir))?));
    for route in &ir.routes {
        let code_keys: BTreeMap<usize, String> = route_code_keys(route);
        let ids = route_ids(route);
        let emitter = route::RouteEmitter::new(route, &ir.assets, &ir.validated, &ids, code_keys);
        files.push(File::text(
            format!("src/routes/{}.rs", route.module),
            format_file(emitter.module())?,
        ));
    }
    if let Some(scripts) = &ir.scripts {
        files.extend(script_files(scripts)?);
    }
    files.push(File::text(".gitignore", "/target\n".into()));
    Ok(files)
}

/// The code node keys of a route, by node index.
fn route_code_keys(route: &RouteIr) -> BTreeMap<usize, String> {
    let mut out = BTreeMap::new();
    let mut visit = |n: &crate::lower::NodeIr| {
        if let crate::lower::NodeIr::Code { index, key, .. } = n {
            out.insert(*index, key.clone());
        }
    };
    route.for_each_node(&mut visit);
    out
}

/// Node index → id, for every node of a route that holds a value.
fn route_ids(route: &RouteIr) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut visit = |n: &crate::lower::NodeIr| {
        if let Some(index) = n.value_index() {
            out.push((index, n.id().to_string()));
        }
    };
    route.for_each_node(&mut visit);
    out.sort();
    out.dedup();
    out
}

pub(crate) fn assets(ir: &ProjectIr) -> TokenStream {
    let header = " @generated by svc: the project's structures and enums as Rust types. Do not edit.";
    match (&ir.node_crate, ir.assets_from_nodes) {
        (Some(k), true) => {
            let krate = format_ident!("{}", k.crate_name);
            quote! {
                #![doc = #header]
                // The node crate's `include_assets!` generated them from the same config:
                // routes and nodes share one set of types.
                pub use ::#krate::assets::*;
            }
        }
        _ => {
            let items = svc_frontend::assets_codegen::generate(&ir.assets, &quote!(::svc_sdk));
            quote! {
                #![doc = #header]
                #![allow(dead_code, clippy::all)]
                #items
            }
        }
    }
}

/// The nodes the routes call, under their keys: a Rust node re-exported from the node
/// crate with static assertions that its `Inputs` and `Outputs` have the types `svc` read
/// from the source; a TypeScript node as typed `Inputs` and `Outputs` around a call into
/// the embedded engine.
fn nodes(ir: &ProjectIr) -> TokenStream {
    let header = " @generated by svc: the code nodes the routes call. Do not edit.\n\n Each Rust node is checked here against what `svc` read from its source: if a node changed\n without `svc emit` running again, the build stops at this file.";
    let items = ir.nodes.iter().map(|n| match &n.code {
        NodeCode::Rust { module_path } => rust_node(ir, n, module_path),
        NodeCode::TypeScript { module } => script_node(n, module, ir.native.get(&n.key)),
    });
    quote! {
        #![doc = #header]
        #(#items)*
    }
}

fn rust_node(ir: &ProjectIr, n: &crate::lower::UsedNode, module_path: &[String]) -> TokenStream {
    let krate = ir
        .node_crate
        .as_ref()
        .expect("a checked project's Rust nodes come from its node crate");
    let krate = format_ident!("{}", krate.crate_name);
    let paths = values::paths();
    let alias = route::node_alias(&n.key);
    let module: Vec<_> = module_path.iter().map(|m| ident(m)).collect();
    let key = &n.key;
    let checks = |pins: &svc_types::PinMap| -> Vec<TokenStream> {
        pins.iter()
            .filter_map(|(id, pin)| {
                let ty = pin_rust_type(pin, &paths)?;
                let f = ident(&svc_types::names::pin_field(id));
                Some(quote!(let _: &#ty = &x.#f;))
            })
            .collect()
    };
    let inputs = checks(&n.manifest.inputs);
    let outputs = checks(&n.manifest.outputs);
    let doc = format!(" `{key}`");
    quote! {
        #[doc = #doc]
        pub use ::#krate::#(#module)::* as #alias;

        #[allow(dead_code, unused_variables)]
        const _: () = {
            fn inputs(x: &#alias::Inputs) { #(#inputs)* }
            fn outputs(x: &#alias::Outputs) { #(#outputs)* }
            fn node() where #alias::Node: ::svc_sdk::CodeFunctionNode<Inputs = #alias::Inputs, Outputs = #alias::Outputs> {}
            assert!(::svc_runtime::__private::str_eq(#alias::NODE_KEY, #key), concat!("the node key of `", #key, "` changed: run `svc emit` again"));
        };
    }
}

/// A TypeScript node: the Rust types of its pins (as the node macro writes them for a
/// Rust node), and a `Node` whose `run` calls the module's default export in the engine,
/// which checks the outputs against these types on the way back.
///
/// When its `run` was compiled to Rust (`native`), `run` calls that instead and keeps the
/// engine for what the compiled code leaves to it (`Exit::Deopt`); when it was not, the
/// reason is in the module's doc.
pub(crate) fn script_node(
    n: &crate::lower::UsedNode,
    module: &str,
    native: Option<&Result<TokenStream, svc_frontend_ts::native::NotNative>>,
) -> TokenStream {
    let alias = route::node_alias(&n.key);
    let io = svc_frontend::rust_types::node_io_items(&n.manifest, &values::paths());
    let manifest = serde_json::to_string(&n.manifest).expect("a manifest is JSON");
    let (doc, compiled, run) = match native {
        Some(Ok(compiled)) => (
            format!(
                " `{}`, written in TypeScript: `{module}`, compiled to Rust (`native`).",
                n.key
            ),
            Some(compiled),
            quote!(crate::scripts::ENGINE.run_compiled(NODE_KEY, MODULE, ctx, native::run)),
        ),
        other => {
            let why = match other {
                Some(Err(not)) => format!(
                    "\n\n Runs in the engine: {} (line {}, column {}).",
                    not.reason, not.span.line, not.span.column
                ),
                _ => String::new(),
            };
            (
                format!(" `{}`, written in TypeScript: `{module}`.{why}", n.key),
                None,
                quote!(crate::scripts::ENGINE.run(NODE_KEY, MODULE, ctx)),
            )
        }
    };
    let node = svc_frontend::rust_types::node_impl(
        " The node: its `run` is the module's, in the engine of `crate::scripts`.",
        quote!(::svc_sdk::__private::serde_json::from_str(#manifest).expect("svc wrote the manifest as JSON")),
        run,
    );
    quote! {
        #[doc = #doc]
        #[allow(dead_code, clippy::all)]
        pub mod #alias {
            #io

            /// The module of the bundle whose default export is this node.
            pub const MODULE: &str = #module;

            #compiled

            #node
        }
    }
}

/// Where the TypeScript nodes' bundle and its modules' JavaScript are written, in the
/// generated crate.
pub const SCRIPTS_DIR: &str = "scripts";
/// The bytecode bundle, in [`SCRIPTS_DIR`].
pub const BUNDLE_FILE: &str = "bundle.qjsbc";

/// A module's JavaScript file, for review: `src/nodes/greet.ts` → `src/nodes/greet.js`.
fn javascript_path(module: &str) -> String {
    match module.rsplit_once('.') {
        Some((stem, "mts")) => format!("{stem}.mjs"),
        Some((stem, _)) => format!("{stem}.js"),
        None => format!("{module}.js"),
    }
}

/// `src/scripts.rs`, the bundle and each module's JavaScript.
pub(crate) fn script_files(scripts: &crate::check::scripts::CompiledScripts) -> Result<Vec<File>, crate::Error> {
    let mut files = vec![File::text("src/scripts.rs", format_file(scripts_rs(scripts))?)];
    for (module, javascript) in &scripts.modules {
        files.push(File::text(
            format!("{SCRIPTS_DIR}/{}", javascript_path(module)),
            javascript.clone(),
        ));
    }
    files.push(File::bytes(
        format!("{SCRIPTS_DIR}/{BUNDLE_FILE}"),
        scripts.bundle.clone(),
    ));
    Ok(files)
}

/// `src/scripts.rs`: the engine over the embedded bundle.
fn scripts_rs(scripts: &crate::check::scripts::CompiledScripts) -> TokenStream {
    let header = format!(
        " @generated by svc: the project's TypeScript nodes, compiled to QuickJS bytecode. Do not edit.\n\n `{SCRIPTS_DIR}/{BUNDLE_FILE}` holds the bytecode of every module and of `@svc/sdk`; the\n JavaScript each module was compiled from is beside it, for review."
    );
    let bundle = format!("../{SCRIPTS_DIR}/{BUNDLE_FILE}");
    let modules = scripts.modules.len();
    let doc = format!(" The engine the TypeScript nodes run on ({modules} modules, one runtime per thread).");
    quote! {
        #![doc = #header]

        #[doc = #doc]
        pub static ENGINE: ::svc_script::Engine = ::svc_script::Engine::new(include_bytes!(#bundle));
    }
}

fn allow_header(methods: &[Method], preflight: bool) -> String {
    let mut names: Vec<&str> = Vec::new();
    for m in methods {
        names.push(m.as_str());
        if *m == Method::Get {
            names.push("HEAD");
        }
    }
    if preflight {
        names.push("OPTIONS");
    }
    names.join(", ")
}

fn routes_mod(ir: &ProjectIr) -> TokenStream {
    let header = " @generated by svc: every route of the project, and the router. Do not edit.";
    let modules = ir.routes.iter().map(|r| format_ident!("{}", r.module));
    let infos = ir.routes.iter().map(|r| {
        let methods = r.methods.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", ");
        let path = &r.axum_path;
        let chain = &r.chain;
        let file = &r.file;
        quote!(RouteInfo { methods: #methods, path: #path, chain: #chain, file: #file })
    });
    let secrets = ir
        .secrets
        .iter()
        .map(|(name, required)| quote!(Requirement { name: #name, required: #required }));
    // One entry per path: all the methods of all the flows served there.
    let mut by_path: BTreeMap<&str, Vec<&RouteIr>> = BTreeMap::new();
    for r in &ir.routes {
        by_path.entry(&r.axum_path).or_default().push(r);
    }
    let states = ir.routes.iter().map(|r| {
        let m = format_ident!("{}", r.module);
        let s = format_ident!("state_{}", r.module);
        quote!(let #s: &'static #m::State = Box::leak(Box::new(#m::State::new(config)));)
    });
    let registrations = by_path.values().map(|routes| {
        let first = format_ident!("{}", routes[0].module);
        let mut methods: Vec<Method> = Vec::new();
        let handlers = routes.iter().flat_map(|r| {
            let m = format_ident!("{}", r.module);
            let s = format_ident!("state_{}", r.module);
            methods.extend(r.methods.iter().copied());
            r.methods.iter().map(move |method| {
                let f = format_ident!("{}", method.as_str().to_ascii_lowercase());
                quote!(.#f(RouteHandler(move |call: Call| #m::handle(#s, call))))
            })
        }).collect::<Vec<_>>();
        methods.sort();
        let preflights: Vec<(&RouteIr, &Method)> = routes.iter().filter(|r| r.preflight.is_some()).flat_map(|r| r.methods.iter().map(move |m| (*r, m))).collect();
        let allow = allow_header(&methods, !preflights.is_empty());
        let options = if preflights.is_empty() {
            quote!()
        } else {
            let arms = preflights.iter().map(|(r, method)| {
                let m = format_ident!("{}", r.module);
                let s = format_ident!("state_{}", r.module);
                let name = method.as_str();
                quote!(::core::option::Option::Some(#name) => #m::preflight(#s, &call),)
            });
            quote! {
                .options({
                    move |call: Call| async move {
                        // A preflight is answered by the flow that serves the requested method.
                        let requested = call.request.headers().get("access-control-request-method").and_then(|v| v.to_str().ok());
                        match requested {
                            #(#arms)*
                            _ => ::svc_runtime::server::method_not_allowed(&call.request, #allow),
                        }
                    }
                })
            }
        };
        quote! {
            .route(#first::PATH, ::svc_runtime::__private::axum::routing::MethodRouter::new()
                #(#handlers)*
                #options
                .fallback(|request: ::svc_runtime::__private::axum::extract::Request| async move {
                    ::svc_runtime::server::method_not_allowed(&request, #allow)
                }))
        }
    });
    quote! {
        #![doc = #header]

        use ::std::sync::Arc;
        use ::svc_runtime::app::{RouteConfig, RouteInfo};
        use ::svc_runtime::call::{Call, RouteHandler};
        use ::svc_runtime::secrets::Requirement;
        use ::svc_runtime::Runtime;

        #(pub mod #modules;)*

        /// Every route: for `<binary> routes`.
        pub static ROUTES: &[RouteInfo] = &[#(#infos),*];

        /// The secrets the project declares.
        pub static SECRETS: &[Requirement] = &[#(#secrets),*];

        /// The router of every route, with per-node state built once from `config`.
        ///
        /// Each route's state lives as long as the process (the router is built once, at
        /// start-up): a request borrows it instead of counting references to it.
        pub fn router(config: &RouteConfig) -> ::svc_runtime::__private::axum::Router<Arc<Runtime>> {
            #(#states)*
            ::svc_runtime::__private::axum::Router::new()
                #(#registrations)*
        }
    }
}

#[cfg(test)]
mod format_tests {
    use super::*;

    #[test]
    fn comment_markers_become_comments_however_prettyplease_wraps_them() {
        let long = "x".repeat(120);
        let text = format_file(quote! {
            fn f() {
                svc_comment!("short");
                svc_comment!(#long);
                let a = 1;
            }
        })
        .unwrap();
        assert!(text.contains("    // short\n"), "{text}");
        assert!(text.contains(&format!("    // {long}\n    let a = 1;")), "{text}");
        assert!(!text.contains("svc_comment"), "{text}");
    }
}
