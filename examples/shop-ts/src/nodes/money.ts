// A helper module: no default export, so not a node. Node modules import it relatively.

/** Rounds an amount to cents. */
export function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
