import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { AgentEventEnvelope } from '@cognition/contracts';
import { createLocalSandbox } from '@cognition/sandbox-local';
import type { AgentDefinition } from '../agents/agent';
import { BUILTIN_AGENTS } from '../agents/agent';
import type { TestRuntime } from '../testing/test-runtime';
import { createTestRuntime, sendAndCollect } from '../testing/test-runtime';
import { ContextInspector } from '../context/context-view';
import { FakeOpenAIServer } from '../testing/fake-openai-server';
import { SkillLibrary } from './skill-library';

const toolResults = (events: AgentEventEnvelope[]) =>
  events.flatMap((e) => (e.event.type === 'tool_result' ? [e.event.output] : []));

const reviewer: AgentDefinition = {
  ...(BUILTIN_AGENTS[0] as AgentDefinition),
  name: 'reviewer',
  description: 'Reviews',
  skills: ['api-docs'],
  source: 'test',
};

describe('issue 17: memory files and skills in a run', () => {
  let server: FakeOpenAIServer;
  let rt: TestRuntime;

  let serverWorkspace: string;

  const put = async (path: string, content: string) => {
    const file = join(serverWorkspace, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, content);
  };
  const systemPromptOf = (request: number): string => {
    const content = server.requests[request]?.body.messages?.[0]?.content;
    return typeof content === 'string' ? content : '';
  };

  beforeEach(async () => {
    server = await FakeOpenAIServer.start();
    // The skills live in the server's workspace; sessions work in their own directories.
    serverWorkspace = await mkdtemp(join(tmpdir(), 'cognition-server-ws-'));
    await put(
      '.cognition/skills/release-notes/SKILL.md',
      '---\nname: release-notes\ndescription: Write the release notes of a version\n---\nList every merged change under Added, Changed, Fixed. Use templates/notes.md.\n',
    );
    await put('.cognition/skills/release-notes/templates/notes.md', '# v{version}\n## Added\n');
    await put(
      '.cognition/skills/api-docs/SKILL.md',
      '---\nname: api-docs\ndescription: Document an HTTP endpoint\n---\nOne section per route.\n',
    );
    await put('.cognition/skills/broken/SKILL.md', 'no frontmatter at all');
    rt = await createTestRuntime({
      providers: {
        providers: [
          {
            id: 'local',
            kind: 'openai_compatible',
            model: 'fake-model',
            baseUrl: server.baseUrl,
            maxRetries: 0,
          },
        ],
      },
      agents: [reviewer],
      // The real local sandbox: its protected-path rule is part of what is tested.
      extra: {
        sandbox: createLocalSandbox(),
        skills: new SkillLibrary({ workspace: serverWorkspace }),
      },
    });
  });
  afterEach(async () => {
    await rt.cleanup();
    await server.close();
    await rm(serverWorkspace, { recursive: true, force: true });
  });

  it('lists the skills in the system prompt and loads a body and a file with read_skill', async () => {
    server.enqueue(
      { toolCalls: [{ id: 'r1', name: 'read_skill', args: { name: 'release-notes' } }] },
      {
        toolCalls: [
          {
            id: 'r2',
            name: 'read_skill',
            args: { name: 'release-notes', file: 'templates/notes.md' },
          },
        ],
      },
      { text: 'Done.' },
    );
    const session = await rt.createSession();
    const turn = await sendAndCollect(rt, session, 'Write the notes for 1.2.');
    expect(turn.types.at(-1)).toBe('done');
    const prompt = systemPromptOf(0);
    expect(prompt).toContain(
      '## Skills\n\nInstructions for particular tasks, kept in this workspace.',
    );
    expect(prompt).toContain(
      '- api-docs: Document an HTTP endpoint\n- release-notes: Write the release notes of a version',
    );
    expect(prompt).not.toContain('broken');
    expect(server.toolNames(0)).toContain('read_skill');
    const [body, file] = toolResults(turn.events);
    expect(body).toBe(
      '# Skill: release-notes\n\nWrite the release notes of a version\n\n' +
        'List every merged change under Added, Changed, Fixed. Use templates/notes.md.\n\n' +
        'Files of this skill (read one with read_skill {"name": "release-notes", "file": "<file>"}):\n' +
        '- templates/notes.md',
    );
    expect(file).toBe('# v{version}\n## Added\n');
  });

  it('shows an agent only the skills its definition lists, and read_skill refuses the others', async () => {
    server.enqueue(
      { toolCalls: [{ id: 'r1', name: 'read_skill', args: { name: 'release-notes' } }] },
      { text: 'Cannot.' },
    );
    const session = await rt.createSession('reviewer');
    const turn = await sendAndCollect(rt, session, 'Write the notes.');
    expect(systemPromptOf(0)).toContain('- api-docs: Document an HTTP endpoint');
    expect(systemPromptOf(0)).not.toContain('release-notes');
    expect(toolResults(turn.events)).toEqual([
      'No skill named "release-notes". Available skills: api-docs.',
    ]);
  });

  it('counts the skill list and read_skill in the context-window view only where the run sends them', async () => {
    const session = await rt.createSession();
    const viewWith = (skills?: SkillLibrary) =>
      new ContextInspector({
        storage: rt.storage,
        agents: rt.agents,
        providers: rt.providers,
        ...(skills ? { skills } : {}),
      }).view(session.id, {});
    const listed = await viewWith(new SkillLibrary({ workspace: serverWorkspace }));
    const none = await viewWith();
    expect(listed.parts.system_prompt).toBeGreaterThan(none.parts.system_prompt);
    // Without skills the run drops read_skill, so its schema is not counted either.
    expect(listed.parts.tool_schemas).toBeGreaterThan(none.parts.tool_schemas);
  });

  it('reads AGENTS.md at the start of every turn: what the agent wrote in one turn is in the next', async () => {
    const session = await rt.createSession();
    const root = join(rt.workspace, session.id);
    await mkdir(join(root, '.cognition'), { recursive: true });
    await writeFile(join(root, '.cognition', 'AGENTS.md'), 'Never push to main.');
    server.enqueue(
      {
        toolCalls: [
          {
            id: 'w1',
            name: 'write_file',
            args: { path: 'AGENTS.md', content: 'Build: npm run build' },
          },
          {
            id: 'w2',
            name: 'write_file',
            args: { path: '.cognition/AGENTS.md', content: 'Push anywhere.' },
          },
        ],
      },
      { text: 'Noted.' },
      { text: 'Building.' },
    );
    const first = await sendAndCollect(rt, session, 'Remember how we build.');
    expect(systemPromptOf(0)).toContain('## Project memory');
    expect(systemPromptOf(0)).toContain('### .cognition/AGENTS.md\nNever push to main.');
    expect(systemPromptOf(0)).not.toContain('### AGENTS.md');
    // The protected path stays protected: the operators' file is not the agent's to change.
    expect(toolResults(first.events)[1]).toContain('PROTECTED_PATH');
    expect(await readFile(join(root, '.cognition', 'AGENTS.md'), 'utf8')).toBe(
      'Never push to main.',
    );

    await sendAndCollect(rt, session, 'Build it.');
    expect(systemPromptOf(2)).toContain(
      '### .cognition/AGENTS.md\nNever push to main.\n\n### AGENTS.md\nBuild: npm run build',
    );
  });
});
