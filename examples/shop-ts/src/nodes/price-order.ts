import { defineCodeFunctionNode, seq, t } from "@svc/sdk";
import { round2 } from "./money.ts";

/** Coupons the shop knows: code and discount rate. */
const COUPONS: Record<string, number> = { WELCOME10: 0.1, VIP25: 0.25 };

export default defineCodeFunctionNode({
  nodeKey: "shop.price-order",
  name: "Price order",
  description: "Prices every line of an order and applies its coupon",
  category: "pricing",
  inputs: {
    exec: seq.in(),
    order: t.struct("Order").portOnly(),
    max_lines: t.number().default(100).integer().minimum(1).description("Orders with more lines are refused"),
  },
  outputs: {
    next: seq.out(),
    quote: t.struct("Quote"),
    line_count: t.number(),
  },
  run(ctx) {
    // The server has checked the order against the constraints of `Order` in
    // svc.config.ts (1 to 50 lines, whole quantities of at least 1, prices of at least
    // 0) before this node runs: only the rules of this node are left here.
    const { order, max_lines } = ctx.inputs;
    if (order.lines.length > max_lines) {
      ctx.fail(`the order has more than ${max_lines} lines`, "TOO_MANY_LINES");
    }
    const lines = order.lines.map((line) => ({
      sku: line.sku,
      quantity: line.quantity,
      lineTotal: round2(line.quantity * line.unitPrice),
    }));
    const subtotal = round2(lines.reduce((sum, l) => sum + l.lineTotal, 0));
    let rate = 0;
    if (order.couponCode !== undefined && order.couponCode !== null) {
      const code = order.couponCode.toUpperCase();
      if (!(code in COUPONS)) {
        ctx.fail(`unknown coupon \`${order.couponCode}\``, "UNKNOWN_COUPON");
      }
      rate = COUPONS[code];
    }
    const discount = round2(subtotal * rate);
    ctx.log(`priced ${lines.length} lines for ${order.currency}: ${subtotal} - ${discount}`);
    return {
      quote: { currency: order.currency, lines, subtotal, discount, total: round2(subtotal - discount) },
      line_count: lines.length,
    };
  },
});
