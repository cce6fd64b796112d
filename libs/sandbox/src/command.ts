import { parse } from 'shell-quote';
import type { ParseEntry } from 'shell-quote';
import { SandboxError } from './errors';

/**
 * Splits a command line into argv with shell-style quoting, for running WITHOUT a shell.
 * `$VAR` / `${VAR}` are expanded from `env` (the environment the command will get, so nothing of
 * the server's leaks) into a single argument each; every shell operator (`;`, `&&`, `|`, `>`,
 * `$(`...) and glob becomes a plain, literal argument, so no second command can be smuggled in.
 * @throws SandboxError INVALID_COMMAND for an empty command.
 */
export function parseCommand(command: string, env: Readonly<Record<string, string>>): string[] {
  if (typeof command !== 'string' || command.trim() === '') {
    throw new SandboxError('INVALID_COMMAND', 'command must be a non-empty string');
  }
  if (command.includes('\0')) {
    throw new SandboxError('INVALID_COMMAND', 'command must not contain NUL characters');
  }
  let entries: ParseEntry[];
  try {
    // A lone `$` (as in `$(`) stays literal; unknown variables expand to '' like in a shell.
    entries = parse(command, (name) => (name === '' ? '$' : (env[name] ?? '')));
  } catch (error) {
    throw new SandboxError(
      'INVALID_COMMAND',
      `command cannot be parsed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const argv = entries.map((entry) => {
    if (typeof entry === 'string') return entry;
    if ('comment' in entry) return `#${entry.comment}`;
    return entry.op === 'glob' ? entry.pattern : entry.op;
  });
  if (argv.length === 0 || argv[0] === '') {
    throw new SandboxError('INVALID_COMMAND', `command "${command}" names no program to run`);
  }
  return argv;
}

/**
 * The program and arguments of `spawn` (no shell, so no parsing): a program to name and no NUL
 * anywhere, on every backend.
 * @throws SandboxError INVALID_COMMAND
 */
export function assertSpawnable(program: string, args: readonly string[]): void {
  if (program.trim() === '' || program.includes('\0') || args.some((a) => a.includes('\0'))) {
    throw new SandboxError('INVALID_COMMAND', 'program must be a non-empty string without NUL');
  }
}
