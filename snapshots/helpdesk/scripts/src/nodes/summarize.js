import { defineCodeFunctionNode, t } from "@svc/sdk";
export default defineCodeFunctionNode({
	nodeKey: "helpdesk.summarize",
	name: "Summarize",
	description: "What the on-call sees first",
	category: "tickets",
	inputs: {
		ticket: t.struct("Ticket"),
		tagCount: t.number(),
		urgentEnough: t.number().default(2).description("Tickets with at least this many tags count as urgent too")
	},
	outputs: {
		summary: t.object(),
		urgent: t.boolean()
	},
	run: async ({ inputs, request, env }) => {
		const { ticket, tagCount, urgentEnough } = inputs;
		const urgent = ticket.priority === "urgent" || tagCount >= urgentEnough;
		const labels = ticket.tags.length > 0 ? ticket.tags.join(", ") : "(none)";
		const note = `${urgent ? "URGENT " : ""}${ticket.subject} [${ticket.reporterDomain}]`;
		// Keys in the order a reader expects, not sorted: JavaScript keeps insertion order.
		return {
			summary: {
				note,
				labels,
				dev: env.isDev,
				method: request?.method ?? "unknown",
				share: tagCount / 3
			},
			urgent
		};
	}
});
