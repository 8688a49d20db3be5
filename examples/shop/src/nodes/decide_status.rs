use crate::assets::{Currency, QuoteStatus};
use svc_sdk::prelude::*;

define_code_function_node! {
    node_key: "shop.decide-status",
    name: "Decide status",
    description: "Large orders need a manual review",
    category: "pricing",
    inputs: {
        total: t::number(),
        currency: t::enum_value("Currency"),
        review_above: t::number().default(1000).description("Totals above this need review (in EUR)"),
    },
    outputs: {
        status: t::enum_value("QuoteStatus"),
    },
    run: |ctx| {
        // Rough conversion to EUR, to compare against one threshold.
        let in_eur = ctx.inputs.total * match ctx.inputs.currency {
            Currency::Eur => 1.0,
            Currency::Usd => 0.92,
            Currency::Gbp => 1.17,
        };
        let status = if in_eur > ctx.inputs.review_above { QuoteStatus::NeedsReview } else { QuoteStatus::Accepted };
        Ok(Outputs { status })
    },
}
