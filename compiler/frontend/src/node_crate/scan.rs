//! One file of node code scanned for what the runtime contract forbids (spec §4.3: paths
//! after renames, macros, `unsafe`, `extern`) and for the secrets it reads.

use super::manifest::FORBIDDEN_CRATES;
use super::model::*;
use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::node_def::{self};
use crate::source::{FileId, Span};
use proc_macro2::{TokenStream, TokenTree};
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::visit::Visit;

/// Module paths node code may not use, and why.
pub(super) const FORBIDDEN_PATHS: &[(&[&str], &str)] = &[
    (&["std", "env"], "the process environment"),
    (&["std", "fs"], "the filesystem"),
    (&["std", "net"], "sockets"),
    (&["std", "process"], "processes"),
    (&["std", "os"], "OS-specific handles"),
    (&["std", "thread"], "threads"),
    (&["std", "path"], "filesystem paths"),
    (&["tokio", "fs"], "the filesystem"),
    (&["tokio", "net"], "sockets"),
    (&["tokio", "process"], "processes"),
    (&["tokio", "signal"], "process signals"),
    (&["async_std"], "the filesystem and sockets"),
];

/// Macros node code may not use: they read files or the environment at compile time.
pub(super) const FORBIDDEN_MACROS: &[(&str, &str)] = &[
    (
        "env",
        "reads the build environment into the binary; read configuration with `ctx.secret` or `ctx.env`",
    ),
    (
        "option_env",
        "reads the build environment into the binary; read configuration with `ctx.secret` or `ctx.env`",
    ),
    ("include", "includes a file from disk"),
    (
        "include_str",
        "includes a file from disk; put the data in the code or in a secret",
    ),
    (
        "include_bytes",
        "includes a file from disk; put the data in the code or in a secret",
    ),
];

pub(super) fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta.require_list().is_ok_and(|l| {
                l.tokens
                    .to_string()
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|w| w == "test")
            })
    })
}

/// Finds secret reads and forbidden APIs in one file.
pub fn scan_file(ast: &syn::File, file: FileId, secrets: &mut Vec<SecretUse>, diags: &mut Diagnostics) {
    let mut aliases = UseAliases::default();
    aliases.visit_file(ast);
    let mut v = Scanner {
        file,
        secrets,
        diags,
        in_test: 0,
        aliases: aliases.0,
    };
    v.visit_file(ast);
}

/// The names `use … as name` binds anywhere in a file, with the paths they stand for
/// (`use std as s` → `s`: `std`; `use std::{self as s2, env as e}` → `s2`: `std`, `e`:
/// `std::env`). Paths are expanded through them before forbidden paths are matched, so
/// that `s::env::var` is seen as `std::env::var`. Scopes are not tracked: an alias counts
/// in the whole file, which can only flag more, never less.
#[derive(Default)]
pub(super) struct UseAliases(HashMap<String, Vec<String>>);

impl<'ast> Visit<'ast> for UseAliases {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut paths = Vec::new();
        collect_use_paths(&u.tree, &mut Vec::new(), &mut paths);
        for path in paths {
            if let Some(alias) = path.alias {
                self.0.insert(alias, path.segments);
            }
        }
    }
}

pub(super) struct Scanner<'a> {
    file: FileId,
    secrets: &'a mut Vec<SecretUse>,
    diags: &'a mut Diagnostics,
    /// Depth of `#[cfg(test)]` items being visited (tests are not deployed).
    in_test: usize,
    /// `use … as` names of the file and the paths they stand for.
    aliases: HashMap<String, Vec<String>>,
}

impl Scanner<'_> {
    fn forbid(&mut self, span: proc_macro2::Span, what: String, why: &str) {
        if self.in_test > 0 {
            return;
        }
        self.diags.push(
            Diagnostic::new(Code::ForbiddenApi, Span::from_proc_macro(self.file, span), format!("node code may not use {what}"))
                .label(why.to_string())
                .help("code nodes run in a Worker-style runtime (spec §4.3): no process environment, filesystem, sockets, processes, threads or `unsafe`; use `ctx.secret` for credentials, `ctx.env` for metadata and `ctx.fetch` for HTTP"),
        );
    }

    /// `segments` with a leading `use … as` alias replaced by its path, repeatedly (an
    /// alias may name another alias), at most eight times so that cycles end.
    fn expand_aliases(&self, segments: &[String]) -> Vec<String> {
        let mut expanded = segments.to_vec();
        for _ in 0..8 {
            let Some(path) = expanded
                .first()
                .and_then(|first| self.aliases.get(first.trim_start_matches("r#")))
            else {
                break;
            };
            expanded.splice(0..1, path.iter().cloned());
        }
        expanded
    }

    fn check_segments(&mut self, segments: &[String], span: proc_macro2::Span) {
        let segments = self.expand_aliases(segments);
        let segs: Vec<&str> = segments.iter().map(|s| s.trim_start_matches("r#")).collect();
        let segs: &[&str] = match segs.first() {
            Some(&"") => &segs[1..],
            _ => &segs,
        };
        let normalized: Vec<&str> = match segs.first() {
            Some(&"core") | Some(&"alloc") => std::iter::once("std").chain(segs[1..].iter().copied()).collect(),
            _ => segs.to_vec(),
        };
        for (prefix, why) in FORBIDDEN_PATHS {
            if normalized.len() >= prefix.len() && normalized[..prefix.len()] == **prefix {
                self.forbid(span, format!("`{}`", prefix.join("::")), why);
                return;
            }
        }
        if let Some(first) = normalized.first()
            && FORBIDDEN_CRATES.iter().any(|c| c.replace('-', "_") == *first)
            && normalized.len() > 1
        {
            self.forbid(
                span,
                format!("the `{first}` crate"),
                "direct network, file or database access",
            );
        }
    }

    /// Looks for forbidden paths inside macro arguments, which syn does not parse.
    fn scan_tokens(&mut self, tokens: &TokenStream) {
        let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => self.scan_tokens(&g.stream()),
                TokenTree::Ident(id) => {
                    // Collect `a :: b :: c`.
                    let mut segs = vec![id.to_string()];
                    let mut j = i + 1;
                    while j + 2 < trees.len() + 1 {
                        let (Some(TokenTree::Punct(p1)), Some(TokenTree::Punct(p2)), Some(TokenTree::Ident(next))) =
                            (trees.get(j), trees.get(j + 1), trees.get(j + 2))
                        else {
                            break;
                        };
                        if p1.as_char() != ':' || p2.as_char() != ':' {
                            break;
                        }
                        segs.push(next.to_string());
                        j += 3;
                    }
                    if segs.len() > 1 {
                        self.check_segments(&segs, id.span());
                        i = j;
                        continue;
                    }
                    if let (Some(TokenTree::Punct(p)), true) =
                        (trees.get(i + 1), FORBIDDEN_MACROS.iter().any(|(m, _)| *m == segs[0]))
                        && p.as_char() == '!'
                    {
                        let why = FORBIDDEN_MACROS
                            .iter()
                            .find(|(m, _)| *m == segs[0])
                            .map(|(_, w)| *w)
                            .unwrap_or("");
                        self.forbid(id.span(), format!("`{}!`", segs[0]), why);
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }

    fn secret_call(&mut self, call: &syn::ExprMethodCall) {
        if call.method != "secret" || call.args.len() != 1 {
            return;
        }
        let arg = &call.args[0];
        let name = match arg {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s), ..
            }) => Some(s.value()),
            syn::Expr::Path(p)
                if p.path.segments.len() >= 2
                    && p.path
                        .segments
                        .iter()
                        .rev()
                        .nth(1)
                        .is_some_and(|s| s.ident == "secrets") =>
            {
                p.path.segments.last().map(|s| s.ident.to_string())
            }
            _ => None,
        };
        match name {
            Some(name) => self.secrets.push(SecretUse { name, span: Span::from_proc_macro(self.file, arg.span()) }),
            None if self.in_test == 0 => self.diags.push(
                Diagnostic::new(Code::NonLiteralSecretName, Span::from_proc_macro(self.file, arg.span()), "the secret name is not written out")
                    .label("computed secret name")
                    .help("write the name as a string literal, `ctx.secret(\"STRIPE_API_KEY\")`, or use `assets::secrets::STRIPE_API_KEY`, so that svc can check it is declared"),
            ),
            None => {}
        }
    }
}

impl<'ast> Visit<'ast> for Scanner<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            _ => &[],
        };
        let test = is_cfg_test(attrs);
        if test {
            self.in_test += 1;
        }
        // `mod x;` files are scanned when the walker reads them.
        syn::visit::visit_item(self, item);
        if test {
            self.in_test -= 1;
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if f.attrs.iter().any(|a| a.path().is_ident("test")) {
            self.in_test += 1;
            syn::visit::visit_item_fn(self, f);
            self.in_test -= 1;
            return;
        }
        syn::visit::visit_item_fn(self, f);
    }

    /// Every function's signature: free, in an `impl`, in a trait.
    fn visit_signature(&mut self, sig: &'ast syn::Signature) {
        if let syn::Safety::Unsafe(u) = &sig.safety {
            self.forbid(u.span, "`unsafe`".into(), "unsafe function");
        }
        syn::visit::visit_signature(self, sig);
    }

    fn visit_expr_unsafe(&mut self, e: &'ast syn::ExprUnsafe) {
        self.forbid(e.unsafe_token.span, "`unsafe`".into(), "unsafe block");
        syn::visit::visit_expr_unsafe(self, e);
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if let Some(u) = &i.unsafety {
            self.forbid(u.span, "`unsafe`".into(), "unsafe impl");
        }
        syn::visit::visit_item_impl(self, i);
    }

    fn visit_item_trait(&mut self, t: &'ast syn::ItemTrait) {
        if let Some(u) = &t.unsafety {
            self.forbid(u.span, "`unsafe`".into(), "unsafe trait");
        }
        syn::visit::visit_item_trait(self, t);
    }

    fn visit_item_static(&mut self, s: &'ast syn::ItemStatic) {
        if let Some(attr) = s.attrs.iter().find(|a| a.path().is_ident("global_allocator"))
            && self.in_test == 0
        {
            self.diags.push(
                Diagnostic::new(
                    Code::ForbiddenApi,
                    Span::from_proc_macro(self.file, attr.span()),
                    "node code may not choose the global allocator",
                )
                .label("`#[global_allocator]`")
                .help("the generated server installs its own allocator (mimalloc, docs/runtime.md \"Memory allocator\"), and a binary has one: remove this static"),
            );
        }
        syn::visit::visit_item_static(self, s);
    }

    fn visit_item_foreign_mod(&mut self, f: &'ast syn::ItemForeignMod) {
        self.forbid(f.abi.extern_token.span, "`extern` blocks".into(), "foreign functions");
    }

    fn visit_item_extern_crate(&mut self, e: &'ast syn::ItemExternCrate) {
        self.forbid(
            e.extern_token.span,
            "`extern crate`".into(),
            "crate aliases hide what code uses; depend on crates in Cargo.toml",
        );
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut paths = Vec::new();
        collect_use_paths(&u.tree, &mut Vec::new(), &mut paths);
        for UsePath {
            segments, span, glob, ..
        } in paths
        {
            let segments = self.expand_aliases(&segments);
            let segments: Vec<String> = segments
                .into_iter()
                .filter(|s| !s.is_empty())
                .map(|s| s.trim_start_matches("r#").to_string())
                .collect();
            if glob && matches!(segments.as_slice(), [s] if s == "std" || s == "core" || s == "alloc" || s == "tokio") {
                self.forbid(
                    span,
                    format!("`use {}::*`", segments[0]),
                    "a glob import of the whole standard library hides what is used",
                );
                continue;
            }
            self.check_segments(&segments, span);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        let mut segments = segments;
        if p.leading_colon.is_some() {
            segments.insert(0, String::new());
        }
        self.check_segments(&segments, p.span());
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let Some(last) = m.path.segments.last() else { return };
        let name = last.ident.to_string();
        if let Some((_, why)) = FORBIDDEN_MACROS.iter().find(|(n, _)| *n == name) {
            self.forbid(last.ident.span(), format!("`{name}!`"), why);
        }
        // Code inside macros is visited like any other code when its arguments parse:
        // the node definition with the shared parser (its `run` is most node code), and
        // other macros (`format!`, `vec!`, …) as a list of expressions. Only bodies that
        // parse as neither are scanned token by token.
        if name == node_def::MACRO_NAME {
            if let Ok(def) = m.parse_body::<node_def::NodeDefSyntax>() {
                for pin in def.inputs.iter().chain(&def.outputs) {
                    self.visit_expr(&pin.expr);
                }
                if let Some(run) = &def.run {
                    self.visit_expr(run);
                }
                return;
            }
        } else if let Ok(args) =
            m.parse_body_with(syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
        {
            for a in &args {
                self.visit_expr(a);
            }
            return;
        }
        self.scan_tokens(&m.tokens);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        self.secret_call(call);
        syn::visit::visit_expr_method_call(self, call);
    }
}

/// One path a `use` item imports.
pub(super) struct UsePath {
    /// The full path: `use std::{env, fmt::Write}` gives `std::env` and `std::fmt::Write`;
    /// `use std::{self as s}` gives `std`.
    segments: Vec<String>,
    span: proc_macro2::Span,
    /// `use path::*`.
    glob: bool,
    /// The name a `use … as name` binds.
    alias: Option<String>,
}

/// Flattens a use tree into the paths it imports.
pub(super) fn collect_use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<UsePath>) {
    let path = |segments, span, glob, alias| UsePath {
        segments,
        span,
        glob,
        alias,
    };
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            collect_use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut full = prefix.clone();
            full.push(n.ident.to_string());
            out.push(path(full, n.ident.span(), false, None));
        }
        syn::UseTree::Rename(r) => {
            let mut full = prefix.clone();
            if r.ident != "self" {
                full.push(r.ident.to_string());
            }
            out.push(path(full, r.ident.span(), false, Some(r.rename.to_string())));
        }
        syn::UseTree::Glob(g) => out.push(path(prefix.clone(), g.star_token.span, true, None)),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                collect_use_paths(t, prefix, out);
            }
        }
    }
}
