// String helpers.
export const capitalize = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase();

export function plural(n: number, word: string): string {
  return n === 1 ? `${n} ${word}` : `${n} ${word}s`;
}

export const isBlank = (s: string) => s.trim().length === 0;
