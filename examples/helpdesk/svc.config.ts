// A helpdesk written from the spec alone (§2.7, §2.8), as its users write TypeScript:
// camelCase pin ids and fields, `defineSecret`, `collectAssets`. svc reads this file
// statically (it never runs it).
import { collectAssets, defineEnum, defineSecret, defineStructure } from "@svc/sdk";

export default {
  projectName: "helpdesk",
  workspaceId: "acme",
  apiId: "helpdesk",
  ...collectAssets([
    defineEnum({
      name: "Priority",
      description: "How soon someone should look",
      values: ["low", "normal", { key: "urgent", value: "urgent", label: "Urgent: page the on-call" }],
    }),
    defineStructure({
      name: "TicketRequest",
      fields: [
        { name: "subject", type: "string", required: true },
        { name: "body", type: "string", required: true },
        { name: "reporterEmail", type: "string", required: true },
        { name: "tags", type: "string:array" },
        { name: "priority", type: "enum-value:Priority" },
      ],
    }),
    defineStructure({
      name: "Ticket",
      fields: [
        { name: "id", type: "string", required: true },
        { name: "subject", type: "string", required: true },
        { name: "priority", type: "enum-value:Priority", required: true },
        { name: "tags", type: "string:array", required: true },
        { name: "reporterDomain", type: "string", required: true },
        { name: "link", type: "string", required: true },
        { name: "signature", type: "string", required: true },
      ],
    }),
    // The claims `GET /queue` reads from an agent's token (flows/queue.yaml).
    defineStructure({
      name: "AgentClaims",
      fields: [
        { name: "email", type: "string", required: true },
        { name: "name", type: "string" },
      ],
    }),
    defineSecret({ name: "SIGNING_KEY", description: "Signs ticket links", required: true }),
  ]),
};
