import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Logger } from '../logger';
import { parseSkillFile } from './skill-file';
import { SKILL_FILE_MAX_BYTES, SkillLibrary } from './skill-library';

const skillMd = (name: string, description: string, body = 'Do it step by step.') =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;

describe('parseSkillFile', () => {
  it('reads name, description and body; other frontmatter keys are ignored', () => {
    const text = '---\nname: pdf\ndescription: Fill PDF forms\nlicense: MIT\n---\nUse pdftk.\n';
    expect(parseSkillFile('pdf', text)).toEqual({
      ok: true,
      skill: { name: 'pdf', description: 'Fill PDF forms', body: 'Use pdftk.' },
    });
  });

  it.each([
    ['no frontmatter', 'Just instructions.', 'expected YAML frontmatter'],
    ['a missing description', '---\nname: pdf\n---\nbody', 'description: is required'],
    [
      'an empty description',
      '---\nname: pdf\ndescription: "  "\n---\nbody',
      'description: must not be empty',
    ],
    [
      'a name other than the directory',
      skillMd('other', 'x'),
      'must equal the directory\'s name "pdf"',
    ],
    ['a name with capitals', skillMd('PDF', 'x'), 'name: skill names are lowercase'],
    ['broken YAML', '---\nname: [pdf\n---\nbody', 'invalid YAML'],
  ])('rejects %s, naming the problem', (_case, text, message) => {
    const parsed = parseSkillFile('pdf', text);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.message).toContain(message);
  });
});

describe('SkillLibrary', () => {
  let workspace: string;
  let library: SkillLibrary;
  const warnings: object[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (obj) => warnings.push(obj),
    error: () => undefined,
  };

  const put = async (path: string, content: string) => {
    const file = join(workspace, '.cognition', 'skills', path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, content);
  };

  beforeEach(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'cognition-skills-'));
    warnings.length = 0;
    library = new SkillLibrary({ workspace, logger });
  });
  afterEach(() => rm(workspace, { recursive: true, force: true }));

  it('lists nothing when the workspace has no skills directory', async () => {
    expect(await library.list()).toEqual({ skills: [], problems: [] });
  });

  it('lists valid skills by name with their files, and reports each bad one without hiding the others', async () => {
    await put('release-notes/SKILL.md', skillMd('release-notes', 'Write release notes'));
    await put('release-notes/templates/notes.md', '# Notes');
    await put('release-notes/check.sh', 'echo ok');
    await put('api-docs/SKILL.md', skillMd('api-docs', 'Document an endpoint'));
    await put('broken/SKILL.md', '---\nname: broken\n---\nno description');
    await put('empty/README.md', 'not a skill');
    await put('huge/SKILL.md', skillMd('huge', 'x', 'y'.repeat(SKILL_FILE_MAX_BYTES)));
    const list = await library.list();
    expect(list.skills).toEqual([
      {
        name: 'api-docs',
        description: 'Document an endpoint',
        path: '.cognition/skills/api-docs/SKILL.md',
        files: [],
      },
      {
        name: 'release-notes',
        description: 'Write release notes',
        path: '.cognition/skills/release-notes/SKILL.md',
        files: ['check.sh', 'templates/notes.md'],
      },
    ]);
    expect(list.problems).toEqual([
      { path: '.cognition/skills/broken/SKILL.md', message: 'description: is required' },
      { path: '.cognition/skills/empty/SKILL.md', message: 'the directory has no SKILL.md' },
      {
        path: '.cognition/skills/huge/SKILL.md',
        message: expect.stringContaining('larger than 256 KB') as string,
      },
    ]);
    // Logged once per problem, not on every turn that lists the skills again.
    await library.list();
    expect(warnings).toHaveLength(3);
    expect(warnings[0]).toEqual({
      skill: '.cognition/skills/broken/SKILL.md',
      problem: 'description: is required',
    });
  });

  it('loads a body and reads the files beside it, never a path leaving the skill', async () => {
    await put(
      'release-notes/SKILL.md',
      skillMd('release-notes', 'Notes', 'Read templates/notes.md.'),
    );
    await put('release-notes/templates/notes.md', '# Notes');
    await put('secret.txt', 'not for the agent');
    await symlink(
      join(workspace, '.cognition', 'skills', 'secret.txt'),
      join(workspace, '.cognition', 'skills', 'release-notes', 'link.txt'),
    );
    expect((await library.load('release-notes'))?.body).toBe('Read templates/notes.md.');
    expect(await library.load('missing')).toBeNull();
    expect(await library.load('../release-notes')).toBeNull();
    expect(await library.readFile('release-notes', 'templates/notes.md')).toEqual({
      ok: true,
      text: '# Notes',
    });
    for (const file of ['../secret.txt', 'link.txt', '/etc/passwd']) {
      expect(await library.readFile('release-notes', file)).toEqual({
        ok: false,
        message: expect.stringMatching(/not inside the directory|has no file/) as string,
      });
    }
    expect(await library.readFile('release-notes', 'templates')).toEqual({
      ok: false,
      message: '"templates" is not a file.',
    });
    expect(await library.readFile('release-notes', 'nope.md')).toEqual({
      ok: false,
      message: 'Skill "release-notes" has no file "nope.md".',
    });
  });
});
