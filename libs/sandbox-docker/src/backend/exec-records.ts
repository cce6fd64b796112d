import type { OrphanReport } from '@cognition/sandbox';
import { randomUUID } from 'node:crypto';

/**
 * How commands are found again inside a session's container. Containers are per session (label
 * `cognition.session`) and outlive the server: a `docker exec` keeps running when the server
 * that attached to it dies. So the record of a running command lives in the container itself,
 * written by the exec's own wrapper (not by the server, so a crash cannot prevent it): a pid
 * file `/tmp/.cognition-exec/<runId | ->/<uuid>.pid` holding the command's process group id and
 * its leader's start time, removed by the wrapper when the command ends. /tmp is the
 * container's tmpfs: the records vanish exactly when a restart or removal ends the processes.
 *
 * Why not remove the container on recovery: it would end the commands too, but also drop the
 * session's /tmp and /home and cost a container start; killing the recorded groups ends exactly
 * what the recovered run left, and a container restart remains the fallback when no exec can
 * get in (a fork bomb holding every pid).
 */
const RECORD_DIR = '/tmp/.cognition-exec';

/** The pid file of a new command of `runId` (null: started outside a run). */
export function pidFilePath(runId: string | null): string {
  return `${RECORD_DIR}/${runId ?? '-'}/${randomUUID()}.pid`;
}

/**
 * Field 22 (start time) of /proc/$c/stat into $t, counting after the last ')' since the command
 * name may hold spaces. Shell builtins only.
 */
const START_TIME_OF_C =
  't=; if read -r st 2>/dev/null < /proc/$c/stat; then set -- ${st##*) }; t=${20}; fi';

/**
 * Runs inside the container as `sh -c WRAPPER cognition-exec <pidfile> <command>`. The command
 * gets its own session (setsid), so its whole process group can be signalled by a later exec
 * (`kill -SIG -<pgid>`, pgid read from the pid file) while the wrapper survives to report the
 * exit status; when the command ends, whatever it left in its group is killed too, so nothing
 * keeps the output stream open. The pid file also carries the leader's start time, so a reaper
 * never signals a pid reused by another process.
 */
export const EXEC_WRAPPER =
  'f=$1; mkdir -p "${f%/*}" 2>/dev/null; setsid sh -c "$2" & c=$!; ' +
  `${START_TIME_OF_C}; echo "$c $t" > "$f"; wait "$c"; s=$?; ` +
  'kill -KILL -"$c" 2>/dev/null; rm -f "$f"; exit "$s"';

/**
 * The same for a long-running process over stdio (`spawn`): `sh -c SPAWN_WRAPPER cognition-spawn
 * <pidfile> <program> <args...>`, no shell between the caller and the program. Its stdin is the
 * exec's: a background job's stdin would be /dev/null, so it is passed on through fd 3.
 */
export const SPAWN_WRAPPER =
  'f=$1; shift; mkdir -p "${f%/*}" 2>/dev/null; exec 3<&0; setsid "$@" <&3 3<&- & c=$!; ' +
  `exec 3<&-; ${START_TIME_OF_C}; echo "$c $t" > "$f"; wait "$c"; s=$?; ` +
  'kill -KILL -"$c" 2>/dev/null; rm -f "$f"; exit "$s"';

/**
 * Sends signal `$2` to the process group whose id is in the pid file `$1`. Shell builtins only
 * (`[`, `read`, `kill`): it must work while a fork bomb holds every pid the container may have.
 * Exit 3: no pid file (not written yet, or the wrapper already removed it: the group is gone).
 */
export const SIGNAL_SCRIPT =
  '[ -s "$1" ] || exit 3; read -r p t < "$1" || exit 3; kill -"$2" -"$p" 2>/dev/null; exit 0';

/**
 * Ends the recorded commands of run `$1` (`*`: every run): SIGKILL to each process group whose
 * leader is gone (members may remain; the group id cannot be reused while they exist) or runs
 * with the recorded start time; a leader with another start time is a reused pid and is left
 * alone. Removes the pid files and prints "<killed> <ended>".
 */
export const REAP_SCRIPT =
  'k=0; e=0; for f in ' +
  RECORD_DIR +
  '/$1/*.pid; do [ -f "$f" ] || continue; p=; r=; read -r p r < "$f"; ' +
  'case "$p" in ""|*[!0-9]*) rm -f "$f"; continue;; esac; c=$p; ' +
  `${START_TIME_OF_C}; ` +
  'if [ -n "$t" ] && [ "$t" != "$r" ]; then e=$((e+1)); ' +
  'elif kill -KILL -"$p" 2>/dev/null; then k=$((k+1)); else e=$((e+1)); fi; ' +
  'rm -f "$f"; done; echo "$k $e"';

/** Parses REAP_SCRIPT's output. */
export function reapReport(output: string): OrphanReport {
  const [killed = 0, ended = 0] = output.trim().split(/\s+/).map(Number);
  return {
    killed: Number.isFinite(killed) ? killed : 0,
    ended: Number.isFinite(ended) ? ended : 0,
    unreachable: 0,
  };
}
