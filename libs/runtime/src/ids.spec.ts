import { eventId, newRunId, runIdOfEventId, seqOfEventId } from './ids';

describe('ids', () => {
  it('makes run ids of fixed width that increase, even within one millisecond', () => {
    const ids = Array.from({ length: 200 }, () => newRunId(1_700_000_000_000));
    const later = newRunId(1_700_000_000_001 + 10);
    expect(new Set(ids.map((id) => id.length)).size).toBe(1);
    expect([...ids].sort()).toEqual(ids);
    expect(ids.every((id) => id < later)).toBe(true);
  });

  it('orders event ids by run then sequence with plain string comparison', () => {
    const a = newRunId();
    const b = newRunId();
    expect(eventId(a, 9) < eventId(a, 10)).toBe(true);
    expect(eventId(a, 999) < eventId(b, 1)).toBe(true);
    expect(runIdOfEventId(eventId(a, 3))).toBe(a);
    expect(seqOfEventId(eventId(a, 3))).toBe(3);
    expect(runIdOfEventId('nope')).toBeNull();
  });
});
