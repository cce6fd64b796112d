import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentDefinition } from '../agents/agent';
import { BUILTIN_AGENTS } from '../agents/agent';
import { silentLogger } from '../logger';
import { SkillLibrary } from '../skills/skill-library';
import { ToolCatalog } from '../tools/catalog';
import { skillContext, skillSection } from './skill-context';

const defaultAgent = BUILTIN_AGENTS[0] as AgentDefinition;

describe('skillContext', () => {
  let workspace: string;
  let library: SkillLibrary;
  const tools = new ToolCatalog().forAgent(defaultAgent, []);
  const names = (list: readonly { name: string }[]) => list.map((t) => t.name);

  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'cognition-skill-context-'));
    for (const name of ['deploy', 'review']) {
      await mkdir(join(workspace, '.cognition', 'skills', name), { recursive: true });
      await writeFile(
        join(workspace, '.cognition', 'skills', name, 'SKILL.md'),
        `---\nname: ${name}\ndescription: How to ${name}\n---\nSteps for ${name}.`,
      );
    }
    library = new SkillLibrary({ workspace });
  });
  afterAll(() => rm(workspace, { recursive: true, force: true }));

  it('lists every skill to an agent with skills: null, with read_skill kept', async () => {
    const context = await skillContext(library, defaultAgent, tools, silentLogger);
    expect(context.section).toContain('## Skills');
    expect(context.section).toContain('- deploy: How to deploy\n- review: How to review');
    expect(names(context.tools)).toContain('read_skill');
    expect(context.access?.names).toEqual(['deploy', 'review']);
  });

  it('restricts what an agent sees and can load to its skills list', async () => {
    const agent: AgentDefinition = { ...defaultAgent, skills: ['review', 'unknown'] };
    const context = await skillContext(library, agent, tools, silentLogger);
    expect(context.section).not.toContain('deploy');
    expect(context.access?.names).toEqual(['review']);
    expect(await context.access?.load('deploy')).toBeNull();
    expect((await context.access?.load('review'))?.body).toBe('Steps for review.');
    expect(await context.access?.readFile('deploy', 'x')).toEqual({
      ok: false,
      message: 'No skill named "deploy".',
    });
  });

  it('drops read_skill and the section when the agent may see no skill, or has no library', async () => {
    for (const context of [
      await skillContext(library, { ...defaultAgent, skills: [] }, tools, silentLogger),
      await skillContext(null, defaultAgent, tools, silentLogger),
    ]) {
      expect(context.section).toBe('');
      expect(names(context.tools)).not.toContain('read_skill');
      expect(context.access).toBeUndefined();
    }
  });

  it('shows no list to an agent without read_skill (it could not load them)', async () => {
    const agent: AgentDefinition = { ...defaultAgent, tools: ['ls', 'read_file'] };
    const context = await skillContext(
      library,
      agent,
      new ToolCatalog().forAgent(agent, []),
      silentLogger,
    );
    expect(context.section).toBe('');
    expect(names(context.tools)).toEqual(['ls', 'read_file']);
  });

  it('names the skills that do not fit the list budget', () => {
    const skills = [
      { name: 'a', description: 'x'.repeat(20) },
      { name: 'b', description: 'y'.repeat(20) },
    ];
    const section = skillSection(skills, 30);
    expect(section).toContain(`- a: ${'x'.repeat(20)}`);
    expect(section).toContain('- (not described for length: b)');
  });
});
