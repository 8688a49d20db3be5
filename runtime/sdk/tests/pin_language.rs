//! The Rust SDK's pin builders are the pin language's Rust spelling, word for word
//! (`svc_syntax::pin_language::RUST`): every builder and modifier the SDK offers is a word
//! the macro reads, with the arguments it reads, and every word the macro reads exists.
//! The macro reads node definitions without running them, so a builder it did not know
//! would compile and then be refused, and a word it knew without a builder would be
//! refused by rustc.

use std::collections::BTreeMap;
use svc_syntax::pin_language::{BuilderArgument, ModifierArgument, RUST};
use syn::{FnArg, ImplItem, Item, Visibility};

/// The public functions of `pin.rs` by where they live (`PinBuilder`, `t`, `seq`), each
/// with how many arguments it takes besides `self`.
fn sdk_functions() -> BTreeMap<&'static str, BTreeMap<String, usize>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/pin.rs");
    let file = syn::parse_file(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut found: BTreeMap<&'static str, BTreeMap<String, usize>> = BTreeMap::new();
    let arguments = |sig: &syn::Signature| sig.inputs.iter().filter(|a| matches!(a, FnArg::Typed(_))).count();
    let name = |ident: &syn::Ident| ident.to_string().trim_start_matches("r#").to_string();
    for item in &file.items {
        match item {
            Item::Impl(block) if block.trait_.is_none() && is_pin_builder(&block.self_ty) => {
                for item in &block.items {
                    if let ImplItem::Fn(f) = item
                        && matches!(f.vis, Visibility::Public(_))
                    {
                        found
                            .entry("PinBuilder")
                            .or_default()
                            .insert(name(&f.sig.ident), arguments(&f.sig));
                    }
                }
            }
            Item::Mod(module) if module.ident == "t" || module.ident == "seq" => {
                let place = if module.ident == "t" { "t" } else { "seq" };
                for item in &module.content.as_ref().unwrap().1 {
                    if let Item::Fn(f) = item
                        && matches!(f.vis, Visibility::Public(_))
                    {
                        found
                            .entry(place)
                            .or_default()
                            .insert(name(&f.sig.ident), arguments(&f.sig));
                    }
                }
            }
            _ => {}
        }
    }
    found
}

fn is_pin_builder(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.is_ident("PinBuilder"))
}

#[test]
fn the_rust_sdk_spells_the_pin_language() {
    let sdk = sdk_functions();

    let mut expected_t = BTreeMap::new();
    for b in RUST.type_builders {
        let arguments = match b.takes {
            BuilderArgument::None => 0,
            BuilderArgument::Name | BuilderArgument::Pin => 1,
            BuilderArgument::OptionalName => panic!("Rust has no optional arguments: `{}`", b.word),
        };
        expected_t.insert(b.word.to_string(), arguments);
    }
    assert_eq!(
        sdk["t"], expected_t,
        "svc_sdk::t against pin_language::RUST.type_builders"
    );

    let expected_seq: BTreeMap<String, usize> = RUST.sequence_builders.iter().map(|w| (w.to_string(), 0)).collect();
    assert_eq!(
        sdk["seq"], expected_seq,
        "svc_sdk::seq against pin_language::RUST.sequence_builders"
    );

    let mut expected_modifiers = BTreeMap::new();
    for m in RUST.modifiers {
        let arguments = match m.takes {
            ModifierArgument::None => 0,
            ModifierArgument::Text
            | ModifierArgument::Literal
            | ModifierArgument::Flag
            | ModifierArgument::Number
            | ModifierArgument::Count => 1,
            ModifierArgument::OptionalFlag => panic!("Rust has no optional arguments: `{}`", m.word),
        };
        expected_modifiers.insert(m.word.to_string(), arguments);
    }
    let mut modifiers = sdk["PinBuilder"].clone();
    // Not modifiers: the finished pin, and its type string.
    for not_a_modifier in ["build", "type_string"] {
        assert!(
            modifiers.remove(not_a_modifier).is_some(),
            "PinBuilder::{not_a_modifier} moved"
        );
    }
    assert_eq!(
        modifiers, expected_modifiers,
        "PinBuilder's methods against pin_language::RUST.modifiers"
    );
}
