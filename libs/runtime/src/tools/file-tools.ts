import { z } from 'zod';
import type { RuntimeTool } from './types';
import { capOutput, defineTool } from './types';

const ok = (output: string) => ({ output: capOutput(output), exitCode: 0 });

const lsTool = defineTool({
  name: 'ls',
  idempotent: true,
  description:
    'List the entries of a directory of the workspace (default: the workspace root). Directories end with /.',
  schema: z.strictObject({
    path: z.string().optional().describe('Directory relative to the workspace root'),
  }),
  async run({ path }, ctx) {
    const entries = await (await ctx.backend()).ls(path);
    if (entries.length === 0) return ok('(empty directory)');
    return ok(
      entries
        .map((e) => (e.type === 'directory' ? `${e.path}/` : `${e.path} (${e.size} bytes)`))
        .join('\n'),
    );
  },
});

const readFileTool = defineTool({
  name: 'read_file',
  idempotent: true,
  description: 'Read a text file of the workspace, optionally a window of lines.',
  schema: z.strictObject({
    path: z.string().min(1),
    offset: z.number().int().min(0).optional().describe('0-based first line'),
    limit: z.number().int().min(1).optional().describe('Maximum number of lines'),
  }),
  async run({ path, offset, limit }, ctx) {
    return ok(await (await ctx.backend()).read(path, { offset, limit }));
  },
});

const writeFileTool = defineTool({
  name: 'write_file',
  idempotent: true,
  description: 'Create or overwrite a file of the workspace with the given content.',
  schema: z.strictObject({ path: z.string().min(1), content: z.string() }),
  async run({ path, content }, ctx) {
    await (await ctx.backend()).write(path, content);
    return ok(`Wrote ${content.length} characters to ${path}`);
  },
});

const editFileTool = defineTool({
  name: 'edit_file',
  idempotent: false,
  description:
    'Replace one exact occurrence of old_string with new_string in a file. old_string must occur exactly once.',
  schema: z.strictObject({
    path: z.string().min(1),
    old_string: z.string().min(1),
    new_string: z.string(),
  }),
  async run({ path, old_string, new_string }, ctx) {
    await (await ctx.backend()).edit(path, old_string, new_string);
    return ok(`Edited ${path}`);
  },
});

const globTool = defineTool({
  name: 'glob',
  idempotent: true,
  description: 'Find files of the workspace matching a glob pattern (e.g. "src/**/*.ts").',
  schema: z.strictObject({
    pattern: z.string().min(1),
    path: z.string().optional().describe('Directory to search from'),
  }),
  async run({ pattern, path }, ctx) {
    const files = await (await ctx.backend()).glob(pattern, path);
    return ok(files.length === 0 ? '(no matches)' : files.join('\n'));
  },
});

const grepTool = defineTool({
  name: 'grep',
  idempotent: true,
  description: 'Search file contents for a regular expression; prints path:line:text per match.',
  schema: z.strictObject({
    pattern: z.string().min(1),
    path: z.string().optional(),
    glob: z.string().optional().describe('Only files matching this glob'),
  }),
  async run({ pattern, path, glob }, ctx) {
    const matches = await (await ctx.backend()).grep(pattern, { path, glob, maxMatches: 500 });
    return ok(
      matches.length === 0
        ? '(no matches)'
        : matches.map((m) => `${m.path}:${m.line}:${m.text}`).join('\n'),
    );
  },
});

const deleteTool = defineTool({
  name: 'delete',
  idempotent: false,
  description: 'Delete a file or directory of the workspace.',
  schema: z.strictObject({ path: z.string().min(1) }),
  async run({ path }, ctx) {
    await (await ctx.backend()).delete(path);
    return ok(`Deleted ${path}`);
  },
});

const executeTool = defineTool({
  name: 'execute',
  idempotent: false,
  description:
    'Run a shell command in the workspace sandbox and return its combined output and exit code.',
  schema: z.strictObject({
    command: z.string().min(1),
    timeout_seconds: z.number().int().min(1).max(3600).optional(),
  }),
  async run({ command, timeout_seconds }, ctx) {
    const result = await (
      await ctx.backend()
    ).execute(command, {
      signal: ctx.signal,
      timeoutMs: timeout_seconds === undefined ? undefined : timeout_seconds * 1000,
    });
    const notes = [
      result.truncated ? '[output truncated]' : null,
      result.timedOut ? '[timed out]' : null,
      result.exitCode !== 0 ? `[exit code ${result.exitCode}]` : null,
    ].filter((note): note is string => note !== null);
    return {
      output: capOutput([result.output, ...notes].filter((part) => part !== '').join('\n')),
      exitCode: result.exitCode,
    };
  },
});

export const FILE_TOOLS: readonly RuntimeTool[] = [
  lsTool,
  readFileTool,
  writeFileTool,
  editFileTool,
  globTool,
  grepTool,
  deleteTool,
  executeTool,
];
