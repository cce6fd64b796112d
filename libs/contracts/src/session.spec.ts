import { CreateSessionInputSchema, SessionConfigSchema, UpdateSessionInputSchema } from './session';

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
});
