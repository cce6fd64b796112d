import { match } from '../testing/test-runtime';
import type { JsonSchemaTool } from './types';
import { checkToolArgs } from './types';

const tool: JsonSchemaTool = {
  name: 'mcp__notes__add',
  description: 'Adds a note',
  idempotent: false,
  inputSchema: {
    type: 'object',
    properties: {
      title: { type: 'string' },
      meta: {
        type: 'object',
        properties: { priority: { type: 'integer' } },
        required: ['priority'],
      },
    },
    required: ['title'],
    additionalProperties: false,
  },
  run: () => Promise.resolve({ output: '', exitCode: 0 }),
};

describe('checkToolArgs with a JSON Schema tool (MCP)', () => {
  it('accepts arguments the schema accepts, unchanged', () => {
    const args = { title: 'a', meta: { priority: 2 } };
    expect(checkToolArgs(tool, args)).toEqual({ ok: true, value: args });
  });

  it('names each offending field with a dotted path, like zod issues', () => {
    const result = checkToolArgs(tool, { meta: { priority: 'high' }, colour: 'red' });
    expect(result).toEqual({
      ok: false,
      issues: [
        { path: 'title', message: 'Required' },
        { path: 'meta.priority', message: match.containing('Expected "integer"') },
        { path: 'colour', message: 'not allowed by the schema' },
      ],
    });
  });

  it('refuses arguments that are not an object', () => {
    expect(checkToolArgs(tool, 'title')).toMatchObject({
      ok: false,
      issues: [{ path: '(root)' }],
    });
  });
});
