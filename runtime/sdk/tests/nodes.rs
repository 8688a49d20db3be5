//! A real node crate in miniature: assets from a config file, a node with every kind of
//! pin, run through the SDK's test host.

use svc_sdk::prelude::*;
use svc_sdk::testing::TestHost;

svc_sdk::include_assets!("tests/fixtures/svc.config.yaml");

pub mod price_order {
    use svc_sdk::prelude::*;

    define_code_function_node! {
        node_key: "acme.price-order",
        name: "Price order",
        description: "Totals an order and applies a discount",
        category: "pricing",
        inputs: {
            exec: seq::input(),
            order: t::structure("Order"),
            discount: t::number().optional().description("between 0 and 1"),
            currency: t::enum_value("Currency").default("EUR"),
            tags: t::array(t::string()).default(vec!["a", "b"]),
            extra: t::any().optional(),
            meta: t::object().optional().port_only(),
            strict: t::boolean().default(false).pin_only().allow_inline_value(),
        },
        outputs: {
            next: seq::output(),
            total: t::number(),
            lines: t::array(t::structure("Line")),
            state: t::enum_value("State"),
            currency: t::enum_value("Currency"),
        },
        run: |ctx| async move {
            let order = &ctx.inputs.order;
            if order.lines.is_empty() {
                return Err(ctx.fail("the order has no lines", "EMPTY_ORDER"));
            }
            let token = ctx.secret("PRICING_TOKEN")?;
            ctx.log(format_args!("pricing {} lines with {token}", order.lines.len()));
            let total: f64 = order.lines.iter().map(|l| l.unit_price * l.quantity).sum();
            Ok(Outputs {
                total: total * (1.0 - ctx.inputs.discount.unwrap_or(0.0)),
                lines: order.lines.clone(),
                state: crate::assets::State::InProgress,
                currency: ctx.inputs.currency,
            })
        },
    }
}

pub mod greet {
    use svc_sdk::prelude::*;

    async fn greet(ctx: &RunContext<Inputs>) -> NodeResult<Outputs> {
        if ctx.inputs.name.is_empty() {
            return Err(ctx.fail("no name", None));
        }
        Ok(Outputs {
            greeting: format!("hello {}", ctx.inputs.name),
        })
    }

    define_code_function_node! {
        node_key: "acme.greet",
        name: "Greet",
        inputs: { name: t::string() },
        outputs: { greeting: t::string() },
        run: greet,
    }
}

pub mod sync_closure {
    use svc_sdk::prelude::*;

    define_code_function_node! {
        node_key: "acme.double",
        name: "Double",
        inputs: { x: t::number() },
        outputs: { y: t::number() },
        run: |ctx| Ok(Outputs { y: ctx.inputs.x * 2.0 }),
    }
}

fn order(lines: Vec<assets::Line>) -> assets::Order {
    assets::Order {
        id: "o-1".into(),
        currency: assets::Currency::Usd,
        lines,
        note: None,
        r#type: None,
    }
}

fn line(unit_price: f64, quantity: f64) -> assets::Line {
    assets::Line {
        sku: "sku".into(),
        unit_price,
        quantity,
    }
}

/// The inputs of `price_order` for `order`, nothing else set.
fn pricing(order: assets::Order) -> price_order::Inputs {
    price_order::Inputs {
        order,
        discount: None,
        currency: assets::Currency::Eur,
        tags: vec![],
        extra: None,
        meta: None,
        strict: false,
    }
}

#[test]
fn runs_a_node_with_typed_inputs_and_outputs() {
    let inputs: price_order::Inputs = serde_json::from_value(serde_json::json!({
        "order": { "id": "o-1", "currency": "USD", "lines": [{ "sku": "a", "unitPrice": 2.5, "quantity": 4 }] },
        "discount": 0.5
    }))
    .unwrap();
    // Defaults apply to pins left out.
    assert_eq!(inputs.currency, assets::Currency::Eur);
    assert_eq!(inputs.tags, vec!["a".to_string(), "b".to_string()]);
    assert!(!inputs.strict);
    let run = TestHost::new()
        .secret("PRICING_TOKEN", "tok-123")
        .run::<price_order::Node>(inputs);
    let out = run.result.unwrap();
    assert_eq!(out.total, 5.0);
    assert_eq!(out.state, assets::State::InProgress);
    assert_eq!(out.currency, assets::Currency::Eur);
    // Logged secrets are redacted.
    assert_eq!(run.logs, vec!["pricing 1 lines with [redacted]".to_string()]);
    // Outputs serialize with exactly the declared data outputs, in the spec's JSON shape.
    let json = serde_json::to_value(&out).unwrap();
    let keys: Vec<_> = json.as_object().unwrap().keys().cloned().collect();
    // In the order the outputs are declared, as a JavaScript object keeps its keys.
    assert_eq!(keys, vec!["total", "lines", "state", "currency"]);
    assert_eq!(json["lines"][0]["unitPrice"], 2.5);
    assert_eq!(json["state"], "in-progress");
}

#[test]
fn fail_is_structured_and_returns_no_output() {
    let run = TestHost::new()
        .secret("PRICING_TOKEN", "t")
        .run::<price_order::Node>(pricing(order(vec![])));
    let failure = run.result.unwrap_err();
    assert_eq!(failure.message, "the order has no lines");
    assert_eq!(failure.code.as_deref(), Some("EMPTY_ORDER"));
    let failure = TestHost::new()
        .run::<greet::Node>(greet::Inputs { name: String::new() })
        .result
        .unwrap_err();
    assert_eq!(failure.code, None);
}

#[test]
fn a_missing_secret_is_a_failure_not_a_panic() {
    let run = TestHost::new().run::<price_order::Node>(pricing(order(vec![line(1.0, 1.0)])));
    assert_eq!(run.result.unwrap_err().code.as_deref(), Some("SECRET_MISSING"));
}

#[test]
fn run_may_be_an_async_fn_or_a_sync_closure() {
    let out = TestHost::new()
        .run::<greet::Node>(greet::Inputs { name: "Ada".into() })
        .result
        .unwrap();
    assert_eq!(out.greeting, "hello Ada");
    let out = TestHost::new()
        .run::<sync_closure::Node>(sync_closure::Inputs { x: 21.0 })
        .result
        .unwrap();
    assert_eq!(out.y, 42.0);
}

#[test]
fn inputs_reject_unknown_and_mistyped_fields() {
    let e = serde_json::from_value::<greet::Inputs>(serde_json::json!({"name": "a", "nmae": "b"})).unwrap_err();
    assert!(e.to_string().contains("unknown field `nmae`"), "{e}");
    assert!(serde_json::from_value::<greet::Inputs>(serde_json::json!({"name": 3})).is_err());
    assert!(serde_json::from_value::<greet::Inputs>(serde_json::json!({})).is_err());
}

#[test]
fn assets_become_rust_types_with_the_spec_json_shape() {
    assert_eq!(assets::Currency::ALL, &[assets::Currency::Eur, assets::Currency::Usd]);
    assert_eq!(assets::Currency::Usd.value(), "USD");
    assert_eq!(assets::Currency::Usd.key(), "usd");
    assert_eq!(assets::Currency::Usd.label(), "US dollar");
    assert_eq!(assets::Currency::from_value("EUR"), Some(assets::Currency::Eur));
    assert_eq!(assets::secrets::PRICING_TOKEN, "PRICING_TOKEN");
    let defs = assets::definitions();
    assert_eq!(defs.structures.len(), 2);
    assert!(defs.validate().is_empty());
    // Unknown fields are rejected; optional fields may be left out.
    assert!(
        serde_json::from_value::<assets::Line>(serde_json::json!({"sku": "a", "unitPrice": 1, "quantity": 1, "x": 1}))
            .is_err()
    );
    let o: assets::Order =
        serde_json::from_value(serde_json::json!({"id": "1", "currency": "EUR", "lines": [], "type": "rush"})).unwrap();
    assert_eq!(o.r#type.as_deref(), Some("rush"));
    assert_eq!(
        serde_json::to_value(&o).unwrap(),
        serde_json::json!({"id": "1", "currency": "EUR", "lines": [], "type": "rush"})
    );
}

#[test]
fn manifest_is_the_definition_without_run() {
    let m = build_manifest_from_node(&price_order::Node);
    let json = serde_json::to_value(&m).unwrap();
    assert_eq!(json["nodeKey"], "acme.price-order");
    assert_eq!(json["name"], "Price order");
    assert_eq!(json["category"], "pricing");
    assert_eq!(json["inputs"]["order"], serde_json::json!({"type": "object:Order"}));
    assert_eq!(
        json["inputs"]["exec"],
        serde_json::json!({"type": "sequence", "portOnly": true})
    );
    assert_eq!(
        json["inputs"]["discount"],
        serde_json::json!({"type": "number", "optional": true, "description": "between 0 and 1"})
    );
    assert_eq!(
        json["inputs"]["tags"],
        serde_json::json!({"type": "type:array", "items": {"type": "string"}, "default": ["a", "b"]})
    );
    assert_eq!(
        json["outputs"]["lines"],
        serde_json::json!({"type": "type:array", "items": {"type": "object:Line"}})
    );
    assert!(json.get("run").is_none());
    assert_eq!(build_manifest_from_node(&greet::Node).category, "code-function");
}

/// The compiler reads node definitions without running them. Both readings of this very
/// file must agree, pin for pin.
#[test]
fn static_reading_equals_the_runtime_builders() {
    let source = include_str!("nodes.rs");
    let file = syn::parse_file(source).unwrap();
    let mut static_manifests = Vec::new();
    for item in &file.items {
        if let syn::Item::Mod(m) = item
            && let Some((_, items)) = &m.content
        {
            let inner = syn::File {
                shebang: None,
                attrs: vec![],
                items: items.clone(),
                frontmatter: None,
            };
            for mac in svc_syntax::node_def::find_definitions(&inner) {
                static_manifests.push(svc_syntax::node_def::parse_definition(&mac.mac).unwrap().manifest);
            }
        }
    }
    let runtime_manifests = vec![
        build_manifest_from_node(&price_order::Node),
        build_manifest_from_node(&greet::Node),
        build_manifest_from_node(&sync_closure::Node),
    ];
    assert_eq!(static_manifests, runtime_manifests);
}
