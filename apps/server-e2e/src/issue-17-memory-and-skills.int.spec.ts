import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createCognitionClient } from '@cognition/client';
import { FakeOpenAIServer, postMessage, startAgentServer } from './testing/agent-server';
import { http } from './testing/http';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 17 (memory files and skills) against the BUILT server on SQLite: the workspace's skills
 * through REST and the typed client, an agent (fake OpenAI-compatible model) that sees the
 * skill list, loads one with read_skill, keeps AGENTS.md, cannot change .cognition/AGENTS.md,
 * and finds its note in the next turn's system prompt.
 */
type Json = Record<string, unknown>;

function put(root: string, file: string, content: string): void {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  writeFileSync(path.join(root, file), content);
}

describe('memory files and skills end to end', () => {
  let fake: FakeOpenAIServer;
  let server: ServerProcess;
  const workspace = tempWorkspace();

  beforeAll(async () => {
    put(
      workspace.dir,
      '.cognition/skills/release-notes/SKILL.md',
      '---\nname: release-notes\ndescription: Write the release notes of a version\n---\nGroup changes under Added, Changed, Fixed.\n',
    );
    put(workspace.dir, '.cognition/skills/release-notes/templates/notes.md', '# v{version}\n');
    put(
      workspace.dir,
      '.cognition/skills/draft/SKILL.md',
      '---\nname: draft\n---\nNo description.',
    );
    fake = await FakeOpenAIServer.start();
    server = await startAgentServer(fake, workspace.dir);
  });

  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
    await fake.close();
    workspace.remove();
  });

  const systemPromptOf = (request: number): string => {
    const content = fake.requests[request]?.body.messages?.[0]?.content;
    return typeof content === 'string' ? content : '';
  };
  const toolOutputs = (sse: string) =>
    sse
      .split('\n\n')
      .filter((frame) => frame.includes('event: tool_result'))
      .map((frame) => String((JSON.parse(frame.split('data: ')[1] ?? '{}') as Json)['output']));

  it('lists the skills over REST and the typed client, with the skipped SKILL.md', async () => {
    const expected = {
      skills: [
        {
          name: 'release-notes',
          description: 'Write the release notes of a version',
          path: '.cognition/skills/release-notes/SKILL.md',
          files: ['templates/notes.md'],
        },
      ],
      problems: [{ path: '.cognition/skills/draft/SKILL.md', message: 'description: is required' }],
    };
    const rest = await http(server.url, 'GET', '/skills');
    expect(rest.status).toBe(200);
    expect(rest.json).toEqual(expected);
    const client = createCognitionClient({ url: `${server.url}/trpc` });
    expect(await client.skills.list.query()).toEqual(expected);
    const spec = await http(server.url, 'GET', '/openapi.json');
    expect(JSON.stringify(spec.json)).toContain('"/skills"');
  });

  it('an agent loads a skill, keeps AGENTS.md, and reads it back in its next turn', async () => {
    const created = await http(server.url, 'POST', '/sessions', { body: {} });
    const sessionId = String(created.json?.['id']);
    const sessionDir = String(created.json?.['workspace_path']);
    put(sessionDir, '.cognition/AGENTS.md', 'Never push to main.');
    const requestsBefore = fake.requests.length;
    fake.enqueue(
      { toolCalls: [{ name: 'read_skill', args: { name: 'release-notes' } }] },
      {
        toolCalls: [
          {
            name: 'write_file',
            args: { path: 'AGENTS.md', content: 'Release notes: use the skill.' },
          },
          { name: 'write_file', args: { path: '.cognition/AGENTS.md', content: 'Push anywhere.' } },
        ],
      },
      { text: 'Noted.' },
      { text: 'Writing them.' },
    );
    const first = await (
      await postMessage(server.url, sessionId, { content: 'Notes for 1.2' })
    ).text();
    expect(first).toContain('event: done');
    const [skill, note, refused] = toolOutputs(first);
    expect(skill).toContain('# Skill: release-notes');
    expect(skill).toContain('Group changes under Added, Changed, Fixed.');
    expect(skill).toContain('- templates/notes.md');
    expect(note).toContain('Wrote');
    expect(refused).toContain('PROTECTED_PATH');
    expect(readFileSync(path.join(sessionDir, '.cognition', 'AGENTS.md'), 'utf8')).toBe(
      'Never push to main.',
    );
    expect(systemPromptOf(requestsBefore)).toContain(
      '- release-notes: Write the release notes of a version',
    );
    expect(systemPromptOf(requestsBefore)).not.toContain('### AGENTS.md');

    const second = await (await postMessage(server.url, sessionId, { content: 'Go on' })).text();
    expect(second).toContain('event: done');
    expect(systemPromptOf(requestsBefore + 3)).toContain('## Project memory');
    expect(systemPromptOf(requestsBefore + 3)).toContain(
      '### .cognition/AGENTS.md\nNever push to main.\n\n### AGENTS.md\nRelease notes: use the skill.',
    );
  });
});
