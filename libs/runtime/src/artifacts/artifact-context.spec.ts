import { createMemoryStorage } from '@cognition/storage-memory';
import { artifactContext } from './artifact-context';

describe('artifactContext', () => {
  it('puts policies before memory, newest first, whole artifacts within the budget', async () => {
    const storage = createMemoryStorage();
    await storage.initialize();
    const scope = { team: 't' };
    const session = await storage.sessions.create({}, scope);
    const { run } = await storage.runs.create({ sessionId: session.id });
    const api = { scope };
    const make = (name: string, type: 'memory' | 'policy', content: string, extra = {}) =>
      storage.artifacts.create({ name, type, visibility: 'public', content, ...extra }, api);
    await make('old-note', 'memory', 'old');
    await make('big-note', 'memory', 'x'.repeat(500));
    await make('rule', 'policy', 'be kind');
    await make('bin', 'memory', 'AAEC', { encoding: 'base64' });
    await storage.artifacts.create(
      { name: 'other-session', type: 'memory', content: 'hidden', sessionId: session.id },
      api,
    );
    const access = { scope, agent: { sessionId: 'another', runId: run.id } };

    const text = await artifactContext(storage.artifacts, access, 200);
    expect(text.indexOf('## Policies')).toBeLessThan(text.indexOf('## Memory'));
    expect(text).toContain('### rule (v1)\nbe kind');
    expect(text).toContain('### old-note (v1)\nold');
    expect(text).toContain('Not shown for length: big-note; use artifact_read.');
    expect(text).not.toContain('hidden');
    expect(text).not.toContain('AAEC');

    expect(await artifactContext(storage.artifacts, { scope: { team: 'none' } })).toBe('');
    await storage.close();
  });
});
