import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc times: USER_HZ, fixed at 100 in Linux's user-space ABI. */
const USER_HZ = 100;

/**
 * CPU time (user + system, all threads) process `pid` has used so far, in ms, from
 * /proc/<pid>/stat (Linux; 10 ms resolution). Unlike wall time, it does not grow when other work
 * on a shared machine takes the CPU away.
 * @throws Error when /proc has no such process or the line is not as expected (not Linux).
 */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces and parentheses: count fields after its end.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 (utime) and 15 (stime) of proc(5); fields[0] is field 3.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) {
    throw new Error(`/proc/${pid}/stat has no utime/stime: ${stat.slice(0, 200)}`);
  }
  return ((utime + stime) * 1000) / USER_HZ;
}
