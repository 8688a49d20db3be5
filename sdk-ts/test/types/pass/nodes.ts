// Everything here must compile: every builder and modifier, inputs typed from their
// pins, sync and async `run`, structures and enums typed through the registries.
import {
  buildManifestFromNode,
  collectAssets,
  defineCodeFunctionNode,
  defineEnum,
  defineSecret,
  defineStructure,
  seq,
  t,
  type CodeFunctionRunContext,
  type JsonObject,
  type JsonValue,
  type NodeManifest,
} from "@svc/sdk";

// What svc writes from svc.config.ts so that named types are typed.
declare module "@svc/sdk" {
  interface Structures {
    Line: { sku: string; quantity: number };
    Order: { id: string; currency: Enums["Currency"]; lines: Structures["Line"][]; note?: string };
  }
  interface Enums {
    Currency: "EUR" | "USD";
  }
}

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<A>(_value: A) {
  return { toBe<B>(..._proof: Equal<A, B> extends true ? [] : [never]) {} };
}

export const priceOrder = defineCodeFunctionNode({
  nodeKey: "acme.price-order",
  name: "Price order",
  description: "Totals an order",
  category: "pricing",
  inputs: {
    exec: seq.in(),
    order: t.struct("Order"),
    sameOrder: t.object("Order").portOnly(),
    discount: t.number().optional().description("between 0 and 1"),
    currency: t.enumValue("Currency").default("EUR"),
    optionalWithDefault: t.string().optional().default("x"),
    defaultThenOptional: t.string().default("x").optional(),
    tags: t.array(t.string()).default(["a", "b"]),
    matrix: t.array(t.array(t.number())).optional(),
    extra: t.any().optional(),
    meta: t.object().optional().pinOnly(),
    strict: t.boolean().default(false).pinOnly().allowInlineValue(),
    unknownStructure: t.struct("NotInTheRegistry"),
  },
  outputs: {
    next: seq.out(),
    total: t.number(),
    lines: t.array(t.struct("Line")),
    currency: t.enumValue("Currency"),
    note: t.string().optional(),
  },
  async run(ctx) {
    expectType(ctx.inputs.order).toBe<{ id: string; currency: "EUR" | "USD"; lines: { sku: string; quantity: number }[]; note?: string }>();
    expectType(ctx.inputs.sameOrder).toBe<typeof ctx.inputs.order>();
    expectType(ctx.inputs.discount).toBe<number | undefined>();
    expectType(ctx.inputs.currency).toBe<"EUR" | "USD">();
    expectType(ctx.inputs.optionalWithDefault).toBe<string>();
    expectType(ctx.inputs.defaultThenOptional).toBe<string>();
    expectType(ctx.inputs.tags).toBe<string[]>();
    expectType(ctx.inputs.matrix).toBe<number[][] | undefined>();
    expectType(ctx.inputs.extra).toBe<JsonValue | undefined>();
    expectType(ctx.inputs.meta).toBe<JsonObject | undefined>();
    expectType(ctx.inputs.strict).toBe<boolean>();
    expectType(ctx.inputs.unknownStructure).toBe<JsonObject>();
    expectType(ctx.secret("PRICING_TOKEN")).toBe<string>();
    expectType(ctx.env.isDev).toBe<boolean>();
    expectType(ctx.request?.headers?.["content-type"]).toBe<string | undefined>();
    const order = ctx.inputs.order;
    if (order.lines.length === 0) ctx.fail("the order has no lines", "EMPTY_ORDER");
    ctx.log("pricing", order.lines.length, "lines");
    const total = order.lines.reduce((sum, line) => sum + line.quantity, 0) * (1 - (ctx.inputs.discount ?? 0));
    // The optional output may be left out.
    return { total, lines: order.lines, currency: order.currency };
  },
});

// A node with no pins; a synchronous run; ctx used through its named type.
export const ping = defineCodeFunctionNode({
  nodeKey: "acme.ping",
  name: "Ping",
  run(ctx: CodeFunctionRunContext<{}>) {
    ctx.log("ping");
    return {};
  },
});

// Returning a variable (not a literal) is checked too, and an optional output may be null.
export const greet = defineCodeFunctionNode({
  nodeKey: "acme.greet",
  name: "Greet",
  inputs: { name: t.string() },
  outputs: { greeting: t.string(), shout: t.boolean().optional() },
  run(ctx) {
    const out = { greeting: `Hello, ${ctx.inputs.name}`, shout: null };
    return out;
  },
});

// A run that only fails still type-checks: `ctx.fail` never returns.
export const refuse = defineCodeFunctionNode({
  nodeKey: "acme.refuse",
  name: "Refuse",
  outputs: { never: t.string() },
  run(ctx) {
    return ctx.fail("always refused", "REFUSED");
  },
});

const manifest: NodeManifest = buildManifestFromNode(priceOrder);
manifest.inputs["order"]?.type.startsWith("object:");

export const config = {
  projectName: "shop",
  ...collectAssets([
    defineEnum({ name: "Currency", values: ["EUR", { key: "usd", value: "USD", label: "US dollar" }] }),
    defineStructure({
      name: "Line",
      fields: [
        { name: "sku", type: "string", required: true },
        { name: "quantity", type: "number", required: true, description: "how many" },
      ],
    }),
    defineSecret({ name: "PRICING_TOKEN", description: "Token for the pricing API" }),
    defineSecret({ name: "OPTIONAL_TOKEN", required: false }),
  ]),
};

// Constraint modifiers chain with the others and keep the pin's value type.
export const constrained = defineCodeFunctionNode({
  nodeKey: "acme.constrained",
  name: "Constrained",
  inputs: {
    quantity: t.number().integer().minimum(1).maximum(1000).default(1),
    email: t.string().format("email").maxLength(254).optional(),
    skus: t.array(t.string()).minItems(1).uniqueItems().pattern("^[A-Z]+$"),
  },
  outputs: { total: t.number().minimum(0) },
  run(ctx) {
    const q: number = ctx.inputs.quantity;
    const e: string | undefined = ctx.inputs.email;
    const s: string[] = ctx.inputs.skus;
    return { total: q * s.length + (e ? 1 : 0) };
  },
});
