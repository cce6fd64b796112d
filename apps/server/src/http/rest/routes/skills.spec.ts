import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import request from 'supertest';
import { apiKeyFingerprint } from '../../../config';
import type { TestApp } from '../../../testing/test-app';
import { createTestApp } from '../../../testing/test-app';

const KEY = 'skills-key-0123456789';

async function put(t: TestApp, file: string, content: string): Promise<void> {
  const absolute = path.join(t.workspace, '.cognition', 'skills', file);
  await mkdir(path.dirname(absolute), { recursive: true });
  await writeFile(absolute, content);
}

describe('GET /skills', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({
      scoping: { enabled: true, keys: ['user'] },
      apiKeys: [{ id: apiKeyFingerprint(KEY), key: KEY }],
    });
  });
  afterEach(() => t.close());

  it('lists skills with their files, reports a bad SKILL.md (and logs it), and needs a key but no scope', async () => {
    await put(
      t,
      'api-docs/SKILL.md',
      '---\nname: api-docs\ndescription: Document an endpoint\n---\nOne section per route.',
    );
    await put(t, 'api-docs/examples/get.md', '## GET /x');
    await put(t, 'notes/SKILL.md', 'Just text, no frontmatter.');
    expect((await request(t.app).get('/skills')).status).toBe(401);
    const res = await request(t.app).get('/skills').set('Authorization', `Bearer ${KEY}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      skills: [
        {
          name: 'api-docs',
          description: 'Document an endpoint',
          path: '.cognition/skills/api-docs/SKILL.md',
          files: ['examples/get.md'],
        },
      ],
      problems: [
        {
          path: '.cognition/skills/notes/SKILL.md',
          message: 'expected YAML frontmatter between --- lines at the top',
        },
      ],
    });
    expect(t.logs()).toContainEqual(
      expect.objectContaining({
        level: 40, // pino's warn
        skill: '.cognition/skills/notes/SKILL.md',
        msg: 'Skipped a skill',
      }),
    );
  });

  it('answers an unknown query parameter with 422 naming it', async () => {
    const res = await request(t.app).get('/skills?name=x').set('Authorization', `Bearer ${KEY}`);
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toContain('name');
  });
});
