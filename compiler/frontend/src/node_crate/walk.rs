//! The module tree of a node crate, walked from `src/lib.rs` as rustc walks it, and the
//! node definitions found in it.

use super::model::*;
use super::scan::{is_cfg_test, scan_file};
use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::node_def::{self, DefErrorKind};
use crate::source::{FileId, SourceFile, SourceMap, Span, display_path};
use crate::vfs::{ReadError, Vfs};
use std::path::{Path, PathBuf};
use syn::spanned::Spanned;
use syn::visit::Visit;

pub(super) struct Walker<'a> {
    pub(super) vfs: &'a dyn Vfs,
    pub(super) root: &'a Path,
    pub(super) sources: &'a mut SourceMap,
    pub(super) diags: &'a mut Diagnostics,
    pub(super) krate: &'a mut NodeCrate,
}

impl Walker<'_> {
    /// Reads one file of the module tree. `public` says whether every module on the way
    /// here is `pub` (a node must be reachable from the generated server crate).
    pub(super) fn file(&mut self, path: &Path, text: String, module_path: Vec<String>, public: bool) {
        let file = self.sources.add(SourceFile::new(
            display_path(self.root, path),
            Some(path.to_path_buf()),
            text.clone(),
        ));
        self.krate.files.push(file);
        let ast = match syn::parse_file(&text) {
            Ok(ast) => ast,
            Err(e) => {
                let span = Span::from_proc_macro(file, e.span());
                self.diags.push(
                    Diagnostic::new(Code::RustSyntax, span, format!("cannot parse Rust: {e}"))
                        .label("here")
                        .help("fix the syntax error; `cargo check` in the node crate shows rustc's view"),
                );
                self.krate.unreadable = true;
                return;
            }
        };
        if module_path.is_empty() {
            self.krate.include_assets = ast.items.iter().find_map(|i| match i {
                syn::Item::Macro(m) => {
                    let name = &m.mac.path.segments.last()?.ident;
                    // The macro's name through its `!`: `include_assets!`.
                    (name == "include_assets").then(|| {
                        let span = Span::from_proc_macro(file, name.span());
                        Span::new(file, span.line, span.column, span.len + 1)
                    })
                }
                _ => None,
            });
        }
        scan_file(&ast, file, &mut self.krate.secrets, self.diags);
        // Module search directory for `mod x;` items in this file.
        let dir = module_dir(path, module_path.is_empty());
        self.items(&ast.items, file, &dir, module_path, public);
    }

    fn items(&mut self, items: &[syn::Item], file: FileId, dir: &Path, module_path: Vec<String>, public: bool) {
        let defs: Vec<&syn::ItemMacro> = items
            .iter()
            .filter_map(|i| match i {
                syn::Item::Macro(m)
                    if m.mac
                        .path
                        .segments
                        .last()
                        .is_some_and(|s| s.ident == node_def::MACRO_NAME) =>
                {
                    Some(m)
                }
                _ => None,
            })
            .collect();
        for (i, m) in defs.iter().enumerate() {
            if i > 0 {
                self.diags.push(
                    Diagnostic::new(
                        Code::InvalidNodeDefinition,
                        Span::from_proc_macro(file, m.mac.path.span()),
                        "a module defines more than one node",
                    )
                    .label("second node in this module")
                    .help("put each node in its own module (a node module exports exactly one definition, spec §2.2)"),
                );
                continue;
            }
            self.definition(m, file, &module_path, public, items_read_request(items));
        }
        for item in items {
            let syn::Item::Mod(m) = item else { continue };
            if is_cfg_test(&m.attrs) {
                continue;
            }
            let name = m.ident.to_string().trim_start_matches("r#").to_string();
            let is_pub = matches!(m.vis, syn::Visibility::Public(_));
            let mut child_path = module_path.clone();
            child_path.push(name.clone());
            match &m.content {
                Some((_, inner)) => {
                    let child_dir = dir.join(&name);
                    self.items(inner, file, &child_dir, child_path, public && is_pub);
                }
                None => {
                    let path = path_attr(&m.attrs);
                    if path.is_none() && !name.is_ascii() {
                        // rustc parses the name but will not look for its file (E0754),
                        // so a project that checked would not build.
                        self.diags.push(
                            Diagnostic::new(
                                Code::RustSyntax,
                                Span::from_proc_macro(file, m.ident.span()),
                                format!("rustc does not load a file for the non-ASCII module name `{name}`"),
                            )
                            .label("module declared here")
                            .help(format!(
                                "give the module an ASCII name, or name its file with `#[path = \"{name}.rs\"]`"
                            )),
                        );
                        continue;
                    }
                    let candidates = match path {
                        Some(p) => vec![dir.join(p)],
                        None => vec![dir.join(format!("{name}.rs")), dir.join(&name).join("mod.rs")],
                    };
                    let found = candidates.iter().find_map(|c| match self.vfs.read(c) {
                        Err(ReadError::Missing) => None,
                        read => Some((c.clone(), read)),
                    });
                    match found {
                        Some((path, Ok(text))) => self.file(&path, text, child_path, public && is_pub),
                        Some((path, Err(ReadError::Unreadable(bad)))) => {
                            bad.report(&display_path(self.root, &path), path, self.sources, self.diags);
                            self.krate.unreadable = true;
                        }
                        Some((_, Err(ReadError::Missing))) | None => self.diags.push(
                            Diagnostic::new(
                                Code::Io,
                                Span::from_proc_macro(file, m.ident.span()),
                                format!("cannot find the file of module `{name}`"),
                            )
                            .label("declared here")
                            .help(format!("create `{}`", display_path(self.root, &candidates[0]))),
                        ),
                    }
                }
            }
        }
    }

    fn definition(
        &mut self,
        m: &syn::ItemMacro,
        file: FileId,
        module_path: &[String],
        public: bool,
        uses_request: bool,
    ) {
        match node_def::parse_definition(&m.mac) {
            Ok(def) => {
                if !public {
                    self.diags.push(
                        Diagnostic::new(Code::NodeNotPublic, Span::from_proc_macro(file, m.mac.path.span()), format!("node `{}` is in a private module", def.manifest.node_key))
                            .label("not reachable from outside the crate")
                            .help(format!("the generated server calls nodes from another crate: declare each module on the way as `pub mod` (here `{}`)", module_path.join("::"))),
                    );
                }
                self.krate.nodes.push(NodeInfo {
                    spans: NodeSourceSpans::new(file, &def),
                    uses_request: uses_request || may_read_request(&m.mac),
                    manifest: def.manifest,
                    file,
                    code: NodeCode::Rust {
                        module_path: module_path.to_vec(),
                    },
                });
            }
            Err(errors) => {
                // Reported here, once: the flows that call this node get no second
                // "unknown node key" error for it.
                self.krate.unreadable = true;
                for e in errors {
                    let code = match e.kind {
                        DefErrorKind::InvalidNodeKey => Code::InvalidNodeKey,
                        DefErrorKind::Invalid => Code::InvalidNodeDefinition,
                    };
                    self.diags.push(
                        Diagnostic::new(code, Span::from_proc_macro(file, e.span), e.message)
                            .label("in this node definition")
                            .help(e.hint),
                    );
                }
            }
        }
    }
}

/// Whether the run closure of a node definition may read `ctx.request`: a `.request`
/// field access in it, or the context handed to another function (which might read it).
pub(super) fn may_read_request(mac: &syn::Macro) -> bool {
    let Ok(def) = mac.parse_body::<node_def::NodeDefSyntax>() else {
        return true;
    };
    let Some(run) = &def.run else { return false };
    let ctx_name = match run {
        syn::Expr::Closure(c) => match c.inputs.first() {
            Some(syn::Pat::Ident(p)) => Some(p.ident.to_string()),
            Some(syn::Pat::Type(t)) => match &*t.pat {
                syn::Pat::Ident(p) => Some(p.ident.to_string()),
                _ => None,
            },
            _ => None,
        },
        // `run: some_fn`: the function's body is checked with the module's other items.
        _ => return false,
    };
    let mut v = RequestReads {
        found: false,
        ctx: ctx_name,
    };
    v.visit_expr(run);
    v.found
}

/// Whether items other than node definitions read a `.request` field (helper functions
/// that take the run context).
pub(super) fn items_read_request(items: &[syn::Item]) -> bool {
    let mut v = RequestReads {
        found: false,
        ctx: None,
    };
    for item in items {
        if !matches!(item, syn::Item::Macro(_)) {
            v.visit_item(item);
        }
    }
    v.found
}

pub(super) struct RequestReads {
    found: bool,
    /// The run closure's context parameter: passing it to a call counts as a read.
    ctx: Option<String>,
}

impl RequestReads {
    fn is_ctx(&self, e: &syn::Expr) -> bool {
        let e = match e {
            syn::Expr::Reference(r) => &*r.expr,
            other => other,
        };
        matches!((e, &self.ctx), (syn::Expr::Path(p), Some(name)) if p.path.is_ident(name.as_str()))
    }
}

impl<'ast> Visit<'ast> for RequestReads {
    fn visit_expr_field(&mut self, f: &'ast syn::ExprField) {
        if matches!(&f.member, syn::Member::Named(n) if n == "request") {
            self.found = true;
        }
        syn::visit::visit_expr_field(self, f);
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if c.args.iter().any(|a| self.is_ctx(a)) {
            self.found = true;
        }
        syn::visit::visit_expr_call(self, c);
    }

    fn visit_expr_method_call(&mut self, c: &'ast syn::ExprMethodCall) {
        if c.args.iter().any(|a| self.is_ctx(a)) {
            self.found = true;
        }
        syn::visit::visit_expr_method_call(self, c);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if let Ok(args) = m.parse_body_with(syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
        {
            for a in &args {
                self.visit_expr(a);
            }
        } else if m.tokens.to_string().contains("request") {
            self.found = true;
        }
    }
}

/// Where `mod x;` in `path` looks for `x.rs`: beside a crate root or `mod.rs`, else in
/// a directory named after the file.
pub(super) fn module_dir(path: &Path, is_root: bool) -> PathBuf {
    let parent = path.parent().unwrap_or(Path::new("."));
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if is_root || stem == "mod" {
        parent.to_path_buf()
    } else {
        parent.join(stem)
    }
}

pub(super) fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs
        .iter()
        .find(|a| a.path().is_ident("path"))
        .and_then(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(l) => match &l.lit {
                    syn::Lit::Str(s) => Some(s.value()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
}
