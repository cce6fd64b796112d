/** A duration in milliseconds as people read it: one decimal below 10 ms, whole ones above. */
export function milliseconds(value: number): string {
  return value < 10 ? `${value.toFixed(1)} ms` : `${Math.round(value)} ms`;
}
