import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MUTATING_TOOLS, TOOL_NAMES } from '../tools/names';
import { AGENTS_DIR, parseAgentFile } from './load-agents';
import { AgentRegistry } from './registry';
import type { RuntimeError } from '../errors';
import { match, thrownBy } from '../testing/test-runtime';

describe('agent registry', () => {
  let workspace: string;
  beforeEach(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'cognition-agents-'));
    await mkdir(join(workspace, AGENTS_DIR), { recursive: true });
  });
  afterEach(async () => {
    await rm(workspace, { recursive: true, force: true });
  });
  const put = (name: string, text: string) => writeFile(join(workspace, AGENTS_DIR, name), text);

  it('has a default agent with every tool and a readonly agent without mutating tools', () => {
    const registry = new AgentRegistry();
    expect(registry.resolvePrimary('default').tools).toEqual(TOOL_NAMES);
    const readonly = registry.resolvePrimary('readonly');
    expect(readonly.tools).toEqual([
      'ls',
      'read_file',
      'glob',
      'grep',
      'write_todos',
      'artifact_list',
      'artifact_read',
      'read_skill',
    ]);
    expect(readonly.tools.some((t) => MUTATING_TOOLS.includes(t))).toBe(false);
  });

  it('loads markdown and yaml agents from the workspace', async () => {
    await put(
      'reviewer.md',
      '---\ndescription: Reviews code\ntools: [ls, read_file]\nmodel: gpt-4o\ntemperature: 0.2\n---\nYou review code.\n',
    );
    await put('helper.yaml', 'description: Helps\nmode: subagent\nsystem_prompt: You help.\n');
    await put('notes.txt', 'ignored');
    const registry = await AgentRegistry.load(workspace);
    expect(registry.resolvePrimary('reviewer')).toMatchObject({
      description: 'Reviews code',
      mode: 'primary',
      tools: ['ls', 'read_file'],
      model: 'gpt-4o',
      temperature: 0.2,
      systemPrompt: 'You review code.',
      source: join(workspace, AGENTS_DIR, 'reviewer.md'),
    });
    expect(registry.subagents().map((a) => a.name)).toEqual(['helper']);
    expect(() => registry.resolvePrimary('helper')).toThrow(/subagent/);
  });

  it('is just the built-ins when the agents directory does not exist', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'cognition-noagents-'));
    try {
      expect((await AgentRegistry.load(empty)).list().map((a) => a.name)).toEqual([
        'default',
        'readonly',
      ]);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('names every invalid file and its problem', async () => {
    await put('bad-tools.md', '---\ndescription: x\ntools: [ls, rm_rf]\n---\nPrompt\n');
    await put('no-frontmatter.md', 'Just a prompt');
    await put('bad-yaml.yaml', 'description: [unclosed\n');
    await put('typo.yaml', 'description: x\nsystem_prompt: p\ntemprature: 1\n');
    await put('empty-body.md', '---\ndescription: x\n---\n\n');
    const error = await AgentRegistry.load(workspace).then(
      () => null,
      (e: unknown) =>
        e as { code: string; message: string; issues: { path: string; message: string }[] },
    );
    expect(error?.code).toBe('VALIDATION_ERROR');
    const dir = join(workspace, AGENTS_DIR);
    const paths = error?.issues.map((i) => i.path) ?? [];
    expect(paths).toEqual(
      match.arrayContaining([
        `${join(dir, 'bad-tools.md')}: tools.1`,
        `${join(dir, 'no-frontmatter.md')}: (frontmatter)`,
        `${join(dir, 'bad-yaml.yaml')}: (yaml)`,
        `${join(dir, 'typo.yaml')}: (root)`,
        `${join(dir, 'empty-body.md')}: (body)`,
      ]),
    );
    expect(error?.message).toContain('typo.yaml');
    expect(error?.message).toContain('temprature');
  });

  it('rejects redefining a built-in and duplicate names', async () => {
    await put('readonly.md', '---\ndescription: sneaky\n---\nI can write.\n');
    await expect(AgentRegistry.load(workspace)).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      message: match.containing('redefines the built-in agent "readonly"'),
    });
    const a = parseAgentFile('/x/a.md', '---\ndescription: one\nname: same\n---\nP\n');
    const b = parseAgentFile('/x/b.yaml', 'description: two\nname: same\nsystem_prompt: P\n');
    expect(() => new AgentRegistry([a, b])).toThrow(/already defined by \/x\/a\.md/);
  });

  it('reports unknown agents with the field name for a 422', () => {
    expect(thrownBy(() => new AgentRegistry().resolvePrimary('ghost'))).toMatchObject({
      code: 'VALIDATION_ERROR',
      issues: [{ path: 'agentName', message: match.containing('unknown agent "ghost"') }],
    });
  });

  it('reads interrupt_on, mcp_servers and skills, and names a tool interrupt_on cannot know', () => {
    const agent = parseAgentFile(
      '/x/guarded.yaml',
      [
        'description: asks first',
        'system_prompt: P',
        'interrupt_on:',
        '  execute: true',
        '  write_file: {allowed: [approve, reject]}',
        '  mcp__notes__add: {allowed: [approve]}',
        'mcp_servers:',
        '  - {name: notes, command: node, args: [server.js]}',
        '  - {name: web, url: "http://127.0.0.1:9/mcp", allow_private: true}',
        'skills: [deploy]',
      ].join('\n'),
    );
    expect(agent.interruptOn).toEqual({
      execute: ['approve', 'edit', 'reject'],
      write_file: ['approve', 'reject'],
      mcp__notes__add: ['approve'],
    });
    expect(agent.mcpServers.map((server) => server.name)).toEqual(['notes', 'web']);
    expect(agent.skills).toEqual(['deploy']);
    const bad = thrownBy(() =>
      parseAgentFile(
        '/x/bad.md',
        '---\ndescription: d\ninterrupt_on:\n  exec: true\n  read_file: {allowed: [maybe]}\n---\nP\n',
      ),
    ) as RuntimeError;
    expect(bad.code).toBe('VALIDATION_ERROR');
    expect(bad.issues.map((issue) => issue.path)).toContainEqual(
      match.containing('interrupt_on.read_file'),
    );
    expect(
      thrownBy(() =>
        parseAgentFile('/x/bad.md', '---\ndescription: d\ninterrupt_on:\n  exec: true\n---\nP\n'),
      ),
    ).toMatchObject({ issues: [{ path: '/x/bad.md: interrupt_on.exec' }] });
  });
});
