import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ApiTestBed } from '../../testing/test-bed';
import { createApiTestBed } from '../../testing/test-bed';

describe('skills router', () => {
  let bed: ApiTestBed;

  const put = async (path: string, content: string) => {
    const file = join(bed.workspace, '.cognition', 'skills', path);
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(file, content);
  };

  beforeEach(async () => {
    bed = await createApiTestBed();
  });
  afterEach(async () => {
    await bed.cleanup();
  });

  it('lists the workspace skills and the skipped SKILL.md files, read afresh on every call', async () => {
    expect(await bed.as().skills.list()).toEqual({ skills: [], problems: [] });
    await put('deploy/SKILL.md', '---\nname: deploy\ndescription: Ship a release\n---\nSteps.');
    await put('deploy/checklist.md', '- tests green');
    await put('typo/SKILL.md', '---\nname: typo\ndescripton: misspelt key\n---\nSteps.');
    // Skills are server-wide: every tenant sees the same list.
    const scopes: Record<string, string>[] = [{}, { user: 'alice' }, { user: 'bob' }];
    for (const scope of scopes) {
      expect(await bed.as(scope).skills.list()).toEqual({
        skills: [
          {
            name: 'deploy',
            description: 'Ship a release',
            path: '.cognition/skills/deploy/SKILL.md',
            files: ['checklist.md'],
          },
        ],
        problems: [
          { path: '.cognition/skills/typo/SKILL.md', message: 'description: is required' },
        ],
      });
    }
  });
});
