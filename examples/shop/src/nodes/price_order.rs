use crate::assets::{PricedLine, Quote};
use svc_sdk::prelude::*;

/// Coupons the shop knows: code and discount rate.
const COUPONS: &[(&str, f64)] = &[("WELCOME10", 0.10), ("VIP25", 0.25)];

define_code_function_node! {
    node_key: "shop.price-order",
    name: "Price order",
    description: "Prices every line of an order and applies its coupon",
    category: "pricing",
    inputs: {
        exec: seq::input(),
        order: t::structure("Order").port_only(),
        max_lines: t::number().default(100).integer().minimum(1).description("Orders with more lines are refused"),
    },
    outputs: {
        next: seq::output(),
        quote: t::structure("Quote"),
        line_count: t::number(),
    },
    run: |ctx| async move {
        // The server has checked the order against the constraints of `Order` in
        // svc.config.yaml (1 to 50 lines, whole quantities of at least 1, prices of at
        // least 0) before this node runs: only the rules of this node are left here.
        let order = &ctx.inputs.order;
        if order.lines.len() as f64 > ctx.inputs.max_lines {
            return Err(ctx.fail(format!("the order has more than {} lines", ctx.inputs.max_lines), "TOO_MANY_LINES"));
        }
        let mut lines = Vec::with_capacity(order.lines.len());
        for line in &order.lines {
            lines.push(PricedLine { sku: line.sku.clone(), quantity: line.quantity, line_total: round2(line.quantity * line.unit_price) });
        }
        let subtotal = round2(lines.iter().map(|l| l.line_total).sum());
        let rate = match &order.coupon_code {
            None => 0.0,
            Some(code) => match COUPONS.iter().find(|(c, _)| c.eq_ignore_ascii_case(code)) {
                Some((_, rate)) => *rate,
                None => return Err(ctx.fail(format!("unknown coupon `{code}`"), "UNKNOWN_COUPON")),
            },
        };
        let discount = round2(subtotal * rate);
        ctx.log(format_args!("priced {} lines for {}: {subtotal} - {discount}", lines.len(), order.currency));
        let line_count = lines.len() as f64;
        Ok(Outputs {
            quote: Quote { currency: order.currency, lines, subtotal, discount, total: round2(subtotal - discount) },
            line_count,
        })
    },
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assets::{Currency, Order, OrderLine};
    use svc_sdk::testing::TestHost;

    fn order(coupon: Option<&str>, lines: Vec<(f64, f64)>) -> Order {
        Order {
            customer_email: "ada@example.com".into(),
            currency: Currency::Eur,
            coupon_code: coupon.map(str::to_string),
            lines: lines
                .into_iter()
                .enumerate()
                .map(|(i, (quantity, unit_price))| OrderLine { sku: format!("SKU-{i}"), quantity, unit_price, tags: None })
                .collect(),
        }
    }

    #[test]
    fn prices_lines_and_applies_coupons() {
        let out = TestHost::new().run::<Node>(Inputs { order: order(Some("welcome10"), vec![(2.0, 10.0), (1.0, 5.5)]), max_lines: 10.0 }).result.unwrap();
        assert_eq!(out.quote.subtotal, 25.5);
        assert_eq!(out.quote.discount, 2.55);
        assert_eq!(out.quote.total, 22.95);
        assert_eq!(out.line_count, 2.0);
    }

    #[test]
    fn refuses_bad_orders() {
        let code = |o: Order| TestHost::new().run::<Node>(Inputs { order: o, max_lines: 2.0 }).result.unwrap_err().code.unwrap();
        assert_eq!(code(order(None, vec![(1.0, 1.0); 3])), "TOO_MANY_LINES");
        assert_eq!(code(order(Some("FREE"), vec![(1.0, 1.0)])), "UNKNOWN_COUPON");
    }
}
