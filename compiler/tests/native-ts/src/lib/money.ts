// A helper module: functions and literal tables only, so nodes that import it compile.
export const CODES = { SAVE: 0.1, HALF: 0.5 } as const;

export function withTax(price: number, rate: number): number {
  return Math.round(price * (1 + rate / 100) * 100) / 100;
}

export function label(name: string, n: number): string {
  if (n === 1) {
    return name;
  }
  return `${n} × ${name}`;
}
