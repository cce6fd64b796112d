import { randomUUID } from 'node:crypto';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { OrphanReport, OrphanTarget } from '@cognition/sandbox';

/**
 * What is needed to find a running command again after the server that started it died: its
 * process group, and who it is (the start time of the group leader, so a pid the kernel handed
 * to another process since is never signalled; the machine and boot, since a pid means nothing
 * elsewhere). One small JSON file per command under `<stateDir>/<sessionId>/`.
 */
export interface ExecRecord {
  sessionId: string;
  runId: string | null;
  /** The process group id: the leader's pid (every command leads its own group). */
  pgid: number;
  /** Field 22 of /proc/<pgid>/stat: clock ticks after boot at which the leader started. */
  startTime: string;
  /** /proc/sys/kernel/random/boot_id: the same machine, since its last boot. */
  bootId: string;
  hostname: string;
  /** The server process that started it (for people reading the file). */
  ownerPid: number;
  /** `execute` or `spawn`. */
  kind: 'execute' | 'spawn';
  /** The command line, cut at 200 characters (for people reading the file). */
  command: string;
  startedAt: string;
}

/** Default state directory when the server gives none: shared by every server of this user. */
export function defaultStateDir(): string {
  return path.join(os.tmpdir(), `cognition-sandbox-${process.getuid?.() ?? 'user'}`);
}

let cachedBootId: string | undefined;

/** This boot of this machine ('' where /proc does not say, e.g. not Linux). */
export function bootId(): string {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      cachedBootId = '';
    }
  }
  return cachedBootId;
}

/**
 * The start time of process `pid` (field 22 of /proc/<pid>/stat), undefined when it does not
 * exist or is a zombie (it runs nothing any more; its parent has yet to reap it). The command
 * name (field 2) is in parentheses and may hold spaces or ')', so fields are counted after the
 * last ')'.
 */
export function processStartTime(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state), so field 22 is fields[19].
  if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
  return fields[19];
}

/**
 * The records of the commands a factory started, on disk. Written before the command runs and
 * removed when it ended; what is left after a crash is what `reap` ends. Records need no fsync:
 * a crash of the server (kill -9, OOM) keeps the page cache, and a crash of the machine ends
 * the processes too.
 */
export class ExecRecords {
  constructor(private readonly stateDir: string) {}

  /** Writes `record` atomically (temp file + rename), returning its path for `remove`. */
  async write(record: ExecRecord): Promise<string> {
    const dir = path.join(this.stateDir, record.sessionId);
    const file = path.join(dir, `${randomUUID()}.json`);
    const temp = `${file}.tmp`;
    // `remove` drops directories it leaves empty, so one may vanish between the mkdir and the
    // write: make it again (a second miss in a row would need a third command ending meanwhile).
    for (let attempt = 1; ; attempt += 1) {
      await fs.mkdir(dir, { recursive: true, mode: 0o700 });
      try {
        await fs.writeFile(temp, JSON.stringify(record), { mode: 0o600 });
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 3) throw error;
      }
    }
    await fs.rename(temp, file);
    return file;
  }

  /**
   * Removes a record; one already gone (reaped meanwhile) is fine. The session's directory and
   * the state directory go too once empty, so a server (or a test) that ran commands leaves
   * nothing behind when none is running.
   */
  async remove(file: string): Promise<void> {
    await fs.rm(file, { force: true });
    const sessionDir = path.dirname(file);
    if (await removeIfEmpty(sessionDir)) await removeIfEmpty(this.stateDir);
  }

  /** Kills what is left of the target's recorded commands; see `ExecutionBackendFactory`. */
  async reap(target: OrphanTarget): Promise<OrphanReport> {
    const report: OrphanReport = { killed: 0, ended: 0, unreachable: 0 };
    const dir = path.join(this.stateDir, target.sessionId);
    let names: string[];
    try {
      names = await fs.readdir(dir);
    } catch {
      return report;
    }
    for (const name of names) {
      const file = path.join(dir, name);
      if (!name.endsWith('.json')) {
        // A temp file the crash cut short: its command never got the go-ahead (see the gate).
        if (name.endsWith('.json.tmp')) await this.remove(file);
        continue;
      }
      const record = await readRecord(file);
      if (record === undefined) {
        await this.remove(file);
        continue;
      }
      if (target.runId !== undefined && record.runId !== target.runId) continue;
      if (record.bootId !== bootId()) {
        if (record.hostname === os.hostname()) {
          // The same machine booted since: every process of the record's boot is gone.
          report.ended += 1;
          await this.remove(file);
        } else {
          report.unreachable += 1;
        }
        continue;
      }
      if (endGroup(record)) report.killed += 1;
      else report.ended += 1;
      await this.remove(file);
    }
    return report;
  }
}

/** rmdir, which refuses a directory that is not empty (another command's record): false then. */
async function removeIfEmpty(dir: string): Promise<boolean> {
  try {
    await fs.rmdir(dir);
    return true;
  } catch {
    return false;
  }
}

async function readRecord(file: string): Promise<ExecRecord | undefined> {
  try {
    const parsed = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<ExecRecord>;
    if (
      typeof parsed.sessionId !== 'string' ||
      typeof parsed.pgid !== 'number' ||
      !Number.isSafeInteger(parsed.pgid) ||
      parsed.pgid <= 1 ||
      typeof parsed.startTime !== 'string' ||
      typeof parsed.bootId !== 'string'
    ) {
      return undefined;
    }
    return parsed as ExecRecord;
  } catch {
    return undefined;
  }
}

/**
 * SIGKILLs the record's process group if it is still the recorded one; whether it was.
 *
 * - The leader runs with the recorded start time: the group is ours; kill it.
 * - A process with that pid but another start time: the pid was reused, so our group is gone
 *   (the kernel never hands out a pid still in use as a group id). Left alone.
 * - No such process: the leader ended, but processes it started may still be in its group. As
 *   long as one is, the kernel keeps the group id from being reused, so signalling the group
 *   reaches only them; if none is, the signal finds nothing (ESRCH). (The one case this cannot
 *   tell apart: the whole group ended, the pid wrapped around pid_max and a new process made it
 *   its group id and exited leaving members, all between the crash and the recovery.)
 */
function endGroup(record: ExecRecord): boolean {
  const startTime = processStartTime(record.pgid);
  if (startTime !== undefined && startTime !== record.startTime) return false;
  try {
    process.kill(-record.pgid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}
