import {
  abandonedCutoff,
  CheckpointRetentionSchema,
  CreateSessionInputSchema,
  readStatusOf,
  SessionConfigSchema,
  UpdateSessionInputSchema,
} from './session';

describe('session contracts', () => {
  it('defaults a new session to the default agent with empty config and metadata', () => {
    expect(CreateSessionInputSchema.parse({})).toEqual({
      agentName: 'default',
      config: {},
      metadata: {},
    });
  });

  it('rejects a title over 200 characters and unknown fields', () => {
    expect(CreateSessionInputSchema.safeParse({ title: 'x'.repeat(201) }).success).toBe(false);
    expect(CreateSessionInputSchema.safeParse({ titel: 'typo' }).success).toBe(false);
    expect(UpdateSessionInputSchema.safeParse({ expectedVersion: 0 }).success).toBe(false);
  });

  it('bounds temperature and max tokens', () => {
    expect(SessionConfigSchema.safeParse({ temperature: 3 }).success).toBe(false);
    expect(SessionConfigSchema.safeParse({ maxTokens: 0 }).success).toBe(false);
    expect(SessionConfigSchema.parse({ model: 'gpt-4o', temperature: 0.2 })).toEqual({
      model: 'gpt-4o',
      temperature: 0.2,
    });
  });

  it('reads an active session idle for the threshold as abandoned, at the boundary included', () => {
    const now = new Date('2026-11-25T10:00:00Z');
    const at = (secondsAgo: number) => new Date(now.getTime() - secondsAgo * 1000);
    expect(readStatusOf({ status: 'active', lastActivityAt: at(1799) }, now, 1800)).toBe('active');
    expect(readStatusOf({ status: 'active', lastActivityAt: at(1800) }, now, 1800)).toBe(
      'abandoned',
    );
    expect(readStatusOf({ status: 'suspended', lastActivityAt: at(99_999) }, now, 1800)).toBe(
      'suspended',
    );
    expect(readStatusOf({ status: 'active', lastActivityAt: at(99_999) }, now, 0)).toBe('active');
    expect(abandonedCutoff(now, 60)).toEqual(at(60));
    expect(abandonedCutoff(now, 0)).toBeNull();
  });

  it('accepts the checkpoint retention grammar and nothing else', () => {
    for (const ok of [
      'all',
      'keep_latest',
      'keep_last:1',
      'keep_last:500',
      'max_age:7d',
      'max_age:30s',
    ]) {
      expect(CheckpointRetentionSchema.safeParse(ok).success).toBe(true);
    }
    for (const bad of ['', 'none', 'keep_last:0', 'keep_last:', 'max_age:1w', 'max_age:0h']) {
      expect(CheckpointRetentionSchema.safeParse(bad).success).toBe(false);
    }
  });

  it('never stores abandoned, and types the new fields', () => {
    expect(UpdateSessionInputSchema.safeParse({ status: 'abandoned' }).success).toBe(false);
    expect(UpdateSessionInputSchema.safeParse({ expiresAt: '2026-01-01' }).success).toBe(false);
    expect(UpdateSessionInputSchema.safeParse({ task: null, systemPrompt: null }).success).toBe(
      true,
    );
  });
});
