import { describe, expect, it } from 'vitest';
import { changesSessionList, liveLabel } from './session-watch';

describe('sessions list live updates', () => {
  it('refreshes on a saved session only, not on the other entries of an action', () => {
    expect(changesSessionList({ type: 'session.saved' })).toBe(true);
    for (const type of [
      'session.loaded',
      'session.action_executed',
      'session.load_failed',
      'session.save_failed',
    ] as const) {
      expect(changesSessionList({ type })).toBe(false);
    }
  });

  it('says whether the list is live', () => {
    expect(liveLabel('pending')).toMatch(/^Live/);
    expect(liveLabel('connecting')).toMatch(/^Connecting/);
    expect(liveLabel('error')).toMatch(/stopped/);
  });
});
