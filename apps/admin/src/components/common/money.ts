/**
 * A USD amount as every page shows it. `complete: false` (some calls had no known price) makes
 * it a lower bound, and with nothing priced at all it reads "unknown price": never a
 * misleading $0. The list, analytics, the session and the playground say it the same way.
 */
export function cost(value: number, complete = true): string {
  const text = `$${value.toFixed(value < 1 ? 4 : 2)}`;
  if (complete) return text;
  return value === 0 ? 'unknown price' : `≥ ${text} (some prices unknown)`;
}

/** A run's cost (`usage.costUsd`: null when its model's price is unknown). */
export const runCost = (costUsd: number | null): string =>
  costUsd === null ? cost(0, false) : cost(costUsd);
