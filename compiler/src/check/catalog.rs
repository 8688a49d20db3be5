//! The code nodes a project defines, by key, checked against the project's assets.

use std::collections::BTreeMap;
use svc_frontend::node_crate::{NodeCode, NodeCrate, NodeInfo};
use svc_frontend::{Code, Diagnostic, Diagnostics, Span};
use svc_frontend_ts::nodes::ScriptNodes;
use svc_types::type_ref::AssetRef;
use svc_types::{Assets, TypeRef};

/// Every code node of the project, Rust and TypeScript, by key.
#[derive(Default)]
pub struct Catalog<'a> {
    pub nodes: BTreeMap<&'a str, &'a NodeInfo>,
    /// A file of the node crate or a TypeScript module could not be read or parsed: the
    /// nodes are not all known.
    pub incomplete: bool,
    /// Files of the node crate's `src/` that no `mod` reaches.
    pub outside_crate: &'a [svc_frontend::node_crate::OutsideFile],
}

impl<'a> Catalog<'a> {
    pub fn build(
        krate: Option<&'a NodeCrate>,
        scripts: Option<&'a ScriptNodes>,
        assets: &Assets,
        diags: &mut Diagnostics,
    ) -> Catalog<'a> {
        let mut catalog = Catalog {
            incomplete: krate.is_some_and(|k| k.unreadable) || scripts.is_some_and(|s| s.unreadable),
            outside_crate: krate.map(|k| k.outside_crate.as_slice()).unwrap_or_default(),
            ..Catalog::default()
        };
        let rust = krate.into_iter().flat_map(|k| &k.nodes);
        let typescript = scripts.into_iter().flat_map(|s| &s.nodes);
        // Where a Rust node first names a structure or an enum.
        let mut uses_assets: Option<Span> = None;
        for node in rust.chain(typescript) {
            let key = node.manifest.node_key.as_str();
            let key_span = node.spans.node_key;
            if let Some(first) = catalog.nodes.get(key) {
                diags.push(
                    Diagnostic::new(
                        Code::DuplicateNodeKey,
                        key_span,
                        format!("node key `{key}` is defined twice"),
                    )
                    .label("defined again here")
                    .with_secondary(first.spans.node_key, "first defined here")
                    .help("node keys identify nodes in flows and must be unique; rename one of them"),
                );
                continue;
            }
            catalog.nodes.insert(key, node);
            let pins = node
                .manifest
                .inputs
                .iter()
                .zip(&node.spans.inputs)
                .chain(node.manifest.outputs.iter().zip(&node.spans.outputs));
            for ((id, pin), (_, expr_span)) in pins {
                let Some(ty) = pin.type_ref() else { continue };
                let span = *expr_span;
                if ty.referenced_asset().is_some()
                    && uses_assets.is_none()
                    && matches!(node.code, NodeCode::Rust { .. })
                {
                    uses_assets = Some(span);
                }
                check_asset_ref(ty, span, assets, diags);
                if let Some(pattern) = &pin.constraints.pattern {
                    super::constraints::check_pin_pattern(id, pin, pattern, span, diags);
                }
                if let (Some(default), TypeRef::Enum(name)) = (&pin.default, ty)
                    && let (Some(e), Some(v)) = (assets.enum_named(name), default.as_str())
                    && e.find_value(v).is_none()
                {
                    diags.push(
                        Diagnostic::new(
                            Code::LiteralMismatch,
                            span,
                            format!("the default `{v}` of pin `{id}` is not a value of enum `{name}`"),
                        )
                        .label("invalid default")
                        .help(format!(
                            "the values of `{name}` are: {}",
                            svc_types::assets::listed(e.values.iter().map(|v| v.value()))
                        )),
                    );
                }
            }
        }
        if let (Some(span), Some(None)) = (uses_assets, krate.map(|k| k.include_assets)) {
            diags.push(
                Diagnostic::new(Code::InvalidNodeDefinition, span, "a node uses structures or enums, but the node crate does not include the project's assets")
                    .label("needs `crate::assets`")
                    .help("add `svc_sdk::include_assets!();` to `src/lib.rs`: it generates the Rust types of the config's structures and enums"),
            );
        }
        catalog
    }

    pub fn get(&self, key: &str) -> Option<&'a NodeInfo> {
        self.nodes.get(key).copied()
    }
}

/// Reports a structure or enum that a type names but the config does not define.
pub fn check_asset_ref(ty: &TypeRef, span: Span, assets: &Assets, diags: &mut Diagnostics) {
    let (code, kind, name) = match ty.referenced_asset() {
        Some(AssetRef::Structure(n)) if assets.structure_named(n).is_none() => (Code::UnknownStructure, "structure", n),
        Some(AssetRef::Enum(n)) if assets.enum_named(n).is_none() => (Code::UnknownEnum, "enum", n),
        _ => return,
    };
    // A name of the other kind of asset is spelled for that kind; another is a typo.
    let structure_wanted = code == Code::UnknownStructure;
    let hint = if structure_wanted && assets.enum_named(name).is_some() {
        format!("`{name}` is an enum: use `enum-value:{name}`")
    } else if !structure_wanted && assets.structure_named(name).is_some() {
        format!("`{name}` is a structure: use `object:{name}`")
    } else if structure_wanted {
        svc_types::assets::suggest(kind, name, assets.structures.iter().map(|s| s.name.as_str()))
    } else {
        svc_types::assets::suggest(kind, name, assets.enums.iter().map(|e| e.name.as_str()))
    };
    diags.push(
        Diagnostic::new(code, span, format!("unknown {kind} `{name}`"))
            .label("not defined in the config")
            .help(hint),
    );
}
