import { describe, expect, it } from 'vitest';
import { sessionTitle } from './session-title';

describe('sessionTitle', () => {
  it('is the title, or says untitled with the creation time instead of the id', () => {
    const createdAt = new Date('2026-11-27T10:00:00Z');
    expect(sessionTitle({ title: 'Report', createdAt })).toBe('Report');
    expect(sessionTitle({ title: null, createdAt })).toBe(
      `Untitled session of ${createdAt.toLocaleString()}`,
    );
  });
});
