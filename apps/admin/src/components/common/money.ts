/**
 * A USD amount as the dashboard shows it; `complete: false` (some calls had no known price)
 * makes it a lower bound, never a misleading exact figure.
 */
export function usd(value: number, complete = true): string {
  const text = `$${value.toFixed(value < 1 ? 4 : 2)}`;
  return complete ? text : `≥ ${text}`;
}
