import { defineCodeFunctionNode, t } from "@svc/sdk";
import { CODES, withTax } from "../lib/money.ts";

/** Tax rates by kind of item, in percent. */
const TAX = { plain: 10, "fancy-one": 20 };

export default defineCodeFunctionNode({
  nodeKey: "conformance.basket",
  name: "Basket",
  inputs: { basket: t.struct("Basket"), limit: t.number().default(5) },
  outputs: { summary: t.struct("Summary"), sale: t.number(), discount: t.number() },
  run(ctx) {
    const { basket, limit } = ctx.inputs;
    if (basket.items.length > limit) {
      ctx.fail(`more than ${limit} items`, "TOO_MANY");
    }
    const priced = basket.items.map((item) => {
      if (item.price < 0) {
        ctx.fail(`\`${item.name}\` has a negative price`, "NEGATIVE");
      }
      return { name: item.name, price: withTax(item.price, TAX[item.kind]) };
    });
    const total = priced.reduce((sum, p) => sum + p.price, 0);
    const sale = basket.items.filter((i) => i.tags !== undefined && i.tags.some((tag) => tag === "sale"));
    const cheap = basket.items.every((i) => i.price < 100);
    let tagged = 0;
    for (const item of basket.items) {
      if (item.tags === undefined) {
        continue;
      }
      for (const tag of item.tags) {
        if (tag === "stop") {
          break;
        }
        tagged += tag.length;
      }
    }
    let discount = 0;
    if (basket.code !== undefined) {
      const code = basket.code.trim().toUpperCase();
      if (!(code in CODES)) {
        ctx.fail(`unknown code ${basket.code}`, "CODE");
      }
      discount = CODES[code];
    }
    ctx.log(`total ${total}`, priced.length, cheap, tagged);
    return {
      summary: { names: priced.map((p) => p.name), total, kind: cheap ? "plain" : "fancy-one", code: basket.code },
      sale: sale.length,
      discount: Math.round(total * discount * 100) / 100,
    };
  },
});
