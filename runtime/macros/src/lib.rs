//! Procedural macros of the svc SDK. Use them through `svc_sdk`, which re-exports them.
//!
//! Both macros delegate to `svc-syntax`, the same code the compiler (through `svc-frontend`,
//! which re-exports it) uses to read node definitions and config assets, so the macro and
//! `svc check` cannot disagree.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{quote, quote_spanned};
use svc_syntax::node_def::{NodeDefSyntax, RunSyntax, run_syntax};
use svc_syntax::rust_types::{RustPaths, node_impl, node_io_items};
use syn::spanned::Spanned;

/// Defines a code node (spec §2.2). See the `svc_sdk` crate docs for the syntax.
///
/// Generates, in the calling module: `pub struct Inputs` and `pub struct Outputs` (one
/// field per data pin), `pub const NODE_KEY`, `pub async fn run`, and `pub struct Node`
/// implementing `svc_sdk::CodeFunctionNode`. One node per module.
#[proc_macro]
pub fn define_code_function_node(input: TokenStream) -> TokenStream {
    let syntax = syn::parse_macro_input!(input as NodeDefSyntax);
    match expand_node(&syntax) {
        Ok(tokens) => tokens.into(),
        Err(errors) => errors.to_compile_error().into(),
    }
}

fn expand_node(syntax: &NodeDefSyntax) -> Result<TokenStream2, syn::Error> {
    let def = syntax.evaluate().map_err(|errors| {
        let mut iter = errors.iter().map(|e| e.to_syn());
        let mut first = iter.next().expect("evaluate reports at least one error");
        for e in iter {
            first.combine(e);
        }
        first
    })?;
    let manifest = &def.manifest;
    let paths = RustPaths::node_crate();
    let name = &manifest.name;
    let category = &manifest.category;
    let description = match &manifest.description {
        Some(d) => quote!(::core::option::Option::Some(::std::string::String::from(#d))),
        None => quote!(::core::option::Option::None),
    };

    let io = node_io_items(manifest, &paths);
    let input_pins = pin_list(&syntax.inputs);
    let output_pins = pin_list(&syntax.outputs);
    let run_fn = run_function(syntax)?;
    let node = node_impl(
        " The node, for `svc_sdk::build_manifest_from_node(&Node)` and the runtime.",
        quote! {
            #[allow(unused_imports)]
            use ::svc_sdk::{seq, t};
            ::svc_sdk::NodeManifest {
                node_key: ::std::string::String::from(NODE_KEY),
                name: ::std::string::String::from(#name),
                description: #description,
                category: ::std::string::String::from(#category),
                inputs: ::svc_sdk::PinMap(::std::vec![ #( #input_pins ),* ]),
                outputs: ::svc_sdk::PinMap(::std::vec![ #( #output_pins ),* ]),
            }
        },
        quote!(run(ctx)),
    );
    Ok(quote! {
        #io

        #run_fn

        #node
    })
}

/// One struct field per data pin (sequence pins carry no value), plus default functions.
/// The pins as the SDK's builders compute them at run time, from the expressions as written.
fn pin_list(pins: &[svc_syntax::node_def::PinSyntax]) -> Vec<TokenStream2> {
    pins.iter()
        .map(|p| {
            let id = &p.id.text;
            let expr = &p.expr;
            quote!((::std::string::String::from(#id), ::svc_sdk::PinBuilder::build(#expr)))
        })
        .collect()
}

fn run_function(syntax: &NodeDefSyntax) -> Result<TokenStream2, syn::Error> {
    let run = syntax.run.as_ref().expect("evaluate checked that run is present");
    let ctx_type = quote!(&::svc_sdk::RunContext<Inputs>);
    let (param, body) = match run_syntax(run).map_err(|e| e.to_syn())? {
        RunSyntax::Closure(c) => {
            let param = match c.inputs.first().expect("checked: one argument") {
                syn::Pat::Type(pt) => quote!(#pt),
                pat => quote!(#pat: #ctx_type),
            };
            let body = &c.body;
            let body = if c.asyncness.is_some() {
                quote!(#body)
            } else if matches!(**body, syn::Expr::Async(_)) {
                quote_spanned!(body.span()=> #body.await)
            } else {
                quote!(#body)
            };
            (param, body)
        }
        RunSyntax::Path(p) => (quote!(ctx: #ctx_type), quote_spanned!(p.span()=> #p(ctx).await)),
    };
    Ok(quote! {
        /// Runs the node. Generated from `run:`; node code may not use `unsafe`.
        #[forbid(unsafe_code)]
        pub async fn run(#param) -> ::svc_sdk::NodeResult<Outputs> {
            #body
        }
    })
}

/// Generates `pub mod assets` from the project's `svc.config.yaml`: a Rust struct per
/// structure, a Rust enum per enum, `assets::secrets::NAME` constants, and
/// `assets::definitions()`.
///
/// `svc_sdk::include_assets!();` reads `svc.config.yaml` beside the crate's `Cargo.toml`;
/// `svc_sdk::include_assets!("../svc.config.yaml");` reads another path (relative to the
/// crate's directory). The crate is rebuilt when the file changes.
#[proc_macro]
pub fn include_assets(input: TokenStream) -> TokenStream {
    let relative = if input.is_empty() {
        svc_syntax::config::CONFIG_FILE.to_string()
    } else {
        syn::parse_macro_input!(input as syn::LitStr).value()
    };
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let path = std::path::Path::new(&dir).join(&relative);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            let msg = format!("svc: cannot read `{}`: {e}", path.display());
            return quote!(::core::compile_error!(#msg);).into();
        }
    };
    let mut sources = svc_syntax::SourceMap::new();
    let file = sources.add(svc_syntax::SourceFile::new(
        relative.clone(),
        Some(path.clone()),
        text.clone(),
    ));
    let mut diags = svc_syntax::Diagnostics::new();
    let config = svc_syntax::config::load(file, &text, &mut diags);
    if diags.has_errors() {
        let rendered: String = diags
            .sorted(&sources)
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.render(&sources))
            .collect();
        let msg = format!("svc: `{relative}` has errors (run `svc check` for details):\n\n{rendered}");
        return quote!(::core::compile_error!(#msg);).into();
    }
    let Some(config) = config else {
        return quote!(::core::compile_error!("svc: the config could not be read");).into();
    };
    let items = svc_syntax::assets_codegen::generate(&config.assets, &quote!(::svc_sdk));
    let abs = path.canonicalize().unwrap_or(path).display().to_string();
    quote! {
        /// The project's named assets, generated from its config by `svc_sdk::include_assets!`.
        #[allow(clippy::all)]
        pub mod assets {
            // Rebuild this crate when the config changes.
            const _: &[u8] = ::core::include_bytes!(#abs);
            #items
        }
    }
    .into()
}
