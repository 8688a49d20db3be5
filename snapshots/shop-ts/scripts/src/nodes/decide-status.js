import { defineCodeFunctionNode, t } from "@svc/sdk";
/** Rough conversion to EUR, to compare against one threshold. */
const TO_EUR = {
	EUR: 1,
	USD: .92,
	GBP: 1.17
};
export default defineCodeFunctionNode({
	nodeKey: "shop.decide-status",
	name: "Decide status",
	description: "Large orders need a manual review",
	category: "pricing",
	inputs: {
		total: t.number(),
		currency: t.enumValue("Currency"),
		review_above: t.number().default(1e3).description("Totals above this need review (in EUR)")
	},
	outputs: { status: t.enumValue("QuoteStatus") },
	run: (ctx) => {
		const inEur = ctx.inputs.total * TO_EUR[ctx.inputs.currency];
		const status = inEur > ctx.inputs.review_above ? "needs-review" : "accepted";
		return { status };
	}
});
