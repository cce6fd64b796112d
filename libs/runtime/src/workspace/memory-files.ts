import type { ExecutionBackend } from '@cognition/sandbox';
import { errorMessage } from '../errors';
import type { Logger } from '../logger';

/**
 * The memory files of a session's workspace, in the order they are shown: the operators'
 * (`.cognition/AGENTS.md`, a protected path the agent can read but not change) before the
 * agent's own notes (`AGENTS.md`, which it keeps with its file tools), so that instructions the
 * agent cannot edit come first and a long AGENTS.md never pushes them out of the budget.
 */
export const MEMORY_FILES = ['.cognition/AGENTS.md', 'AGENTS.md'] as const;

/** Characters of memory-file content given to the agent per turn, all files together. */
export const MEMORY_FILES_MAX_CHARS = 12_000;

export interface MemoryFile {
  path: string;
  content: string;
}

/**
 * Reads the memory files through the session's sandbox backend (the workspace the agent's file
 * tools see, whichever backend holds it). A missing file is skipped; a file that cannot be read
 * (a directory, a path escaping the workspace) is logged and skipped: memory never fails a run.
 */
export async function readMemoryFiles(
  backend: ExecutionBackend,
  logger: Logger,
): Promise<MemoryFile[]> {
  const files: MemoryFile[] = [];
  for (const path of MEMORY_FILES) {
    try {
      const content = (await backend.read(path)).trim();
      if (content !== '') files.push({ path, content });
    } catch (error) {
      // Every backend's missing file: SandboxError NOT_FOUND (by code, as the port documents).
      if ((error as { code?: unknown }).code === 'NOT_FOUND') continue;
      logger.warn({ file: path, err: errorMessage(error) }, 'Cannot read a memory file');
    }
  }
  return files;
}

/**
 * The `## Project memory` section of the system prompt: each file under its path, whole files
 * while they fit `maxChars`, then the beginning of the next one with a visible note (how much is
 * shown, and to read the rest with read_file); files after that are named only. Empty when
 * there are no memory files. `writable`: the agent has a tool that can change AGENTS.md, so it
 * is told that keeping it is its job.
 */
export function memorySection(
  files: readonly MemoryFile[],
  options: { writable: boolean; maxChars?: number },
): string {
  if (files.length === 0) return '';
  let room = options.maxChars ?? MEMORY_FILES_MAX_CHARS;
  const intro = options.writable
    ? 'Files of the workspace, read at the start of this turn. AGENTS.md holds notes for whoever ' +
      'works here next: keep it current with your file tools when you learn something worth ' +
      'remembering (commands, conventions, decisions). .cognition/AGENTS.md is kept by the ' +
      'operators and is read-only.'
    : 'Files of the workspace, read at the start of this turn.';
  const parts = ['## Project memory', intro];
  for (const file of files) {
    if (room <= 0) {
      parts.push(
        `### ${file.path}\n[Not shown for length (${file.content.length} characters); read it with read_file.]`,
      );
      continue;
    }
    if (file.content.length <= room) {
      parts.push(`### ${file.path}\n${file.content}`);
      room -= file.content.length;
      continue;
    }
    parts.push(
      `### ${file.path}\n${file.content.slice(0, room)}\n[Truncated for length: the first ${room} of ` +
        `${file.content.length} characters are shown; read the rest with read_file.]`,
    );
    room = 0;
  }
  return parts.join('\n\n');
}
