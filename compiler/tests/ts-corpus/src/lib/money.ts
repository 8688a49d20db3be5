// Money helpers as people write them: arrow functions in module-level constants, a
// literal table, a function with a default parameter.
export const round2 = (n: number): number => Math.round(n * 100) / 100;

export const TAX_RATES = { EUR: 0.2, USD: 0.08, JPY: 0.1 } as const;

export const SYMBOLS: Record<string, string> = { EUR: "€", USD: "$", JPY: "¥" };

export function formatMoney(amount: number, currency: string, digits = 2): string {
  return `${SYMBOLS[currency] ?? currency}${amount.toFixed(digits)}`;
}

export const lineTotal = (quantity: number, unitPrice: number) => round2(quantity * unitPrice);
