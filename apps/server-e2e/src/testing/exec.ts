import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to completion (in `env`, default this process's environment); never throws, so
 * failures can be asserted on.
 */
export async function attempt(
  file: string,
  args: string[],
  cwd: string,
  env?: NodeJS.ProcessEnv,
): Promise<ExecResult> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code?: unknown; stdout?: string; stderr?: string };
    return {
      code: typeof failure.code === 'number' ? failure.code : 1,
      stdout: failure.stdout ?? '',
      stderr: failure.stderr ?? String(error),
    };
  }
}

/** Runs a command that must succeed; a failure throws with the command's output. */
export async function succeed(
  file: string,
  args: string[],
  cwd: string,
  env?: NodeJS.ProcessEnv,
): Promise<ExecResult> {
  const result = await attempt(file, args, cwd, env);
  if (result.code !== 0) {
    const command = [path.basename(file), ...args].join(' ');
    throw new Error(
      `${command} failed (${result.code}) in ${cwd}:\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result;
}
