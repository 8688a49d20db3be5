import { defineCodeFunctionNode, seq, t } from "@svc/sdk";
/** Words that make a ticket urgent whatever the reporter chose. */
const URGENT_WORDS = [
	"outage",
	"down",
	"breach"
];
const normalizeTag = (tag) => tag.trim().toLowerCase().replace(/\s+/g, "-");
export default defineCodeFunctionNode({
	nodeKey: "helpdesk.create-ticket",
	name: "Create ticket",
	description: "Checks a ticket request, tags it and signs its link",
	category: "tickets",
	inputs: {
		exec: seq.in(),
		request: t.struct("TicketRequest").portOnly(),
		maxTags: t.number().default(5).description("Requests with more distinct tags are refused"),
		baseUrl: t.string().default("https://help.example.com").description("Where ticket links point")
	},
	outputs: {
		next: seq.out(),
		ticket: t.struct("Ticket"),
		tagCount: t.number()
	},
	async run(ctx) {
		const { request, maxTags, baseUrl } = ctx.inputs;
		const subject = request.subject.trim();
		if (subject.length === 0) {
			ctx.fail("a ticket needs a subject", "EMPTY_SUBJECT");
		}
		const at = request.reporterEmail.lastIndexOf("@");
		if (at < 1) {
			ctx.fail(`\`${request.reporterEmail}\` is not an e-mail address`);
		}
		const tags = [...new Set((request.tags ?? []).map(normalizeTag).filter((tag) => tag !== ""))].sort();
		if (tags.length > maxTags) {
			ctx.fail(`a ticket takes at most ${maxTags} tags, not ${tags.length}`, "TOO_MANY_TAGS");
		}
		const text = `${subject} ${request.body}`.toLowerCase();
		const priority = URGENT_WORDS.some((word) => text.includes(word)) ? "urgent" : request.priority ?? "normal";
		const bytes = new TextEncoder().encode(`${subject}|${request.reporterEmail}`);
		const id = btoa(String.fromCharCode(...bytes.slice(0, 9))).replace(/[+/=]/g, "x");
		const link = new URL(`/tickets/${encodeURIComponent(id)}`, baseUrl);
		link.searchParams.set("from", "api");
		const signature = await sign(link.toString(), ctx.secret("SIGNING_KEY"));
		ctx.log(`ticket ${id}: ${tags.length} tags, ${priority}`);
		return {
			ticket: {
				id,
				subject,
				priority,
				tags,
				reporterDomain: request.reporterEmail.slice(at + 1).toLowerCase(),
				link: link.toString(),
				signature
			},
			tagCount: tags.length
		};
	}
});
/** A short keyed checksum of `text` (not cryptography: it shows that links were made here). */
async function sign(text, key) {
	let hash = 2166136261;
	for (const byte of new TextEncoder().encode(`${key}:${text}`)) {
		hash = Math.imul(hash ^ byte, 16777619) >>> 0;
	}
	return hash.toString(16).padStart(8, "0");
}
