import type { Readable, Writable } from 'node:stream';

/**
 * The execution port: one session's workspace, where agent tools run commands and touch files.
 * Every path argument is relative to the session root (absolute paths are accepted only when they
 * resolve inside it); every path is resolved with symlinks and must stay inside the root.
 */
export interface ExecuteOptions {
  /** Working directory relative to the session root (default: the root). */
  cwd?: string;
  /** Extra environment variables (added to the backend's allowlisted environment). */
  env?: Record<string, string>;
  /** Kill the whole process tree after this long (default: the backend's configured timeout). */
  timeoutMs?: number;
  /** Aborting kills the whole process tree. */
  signal?: AbortSignal;
}

export interface ExecuteResult {
  /** stdout and stderr interleaved in arrival order, capped at MAX_OUTPUT_BYTES. */
  output: string;
  /** The process's exit code; 128 + signal number when killed by a signal; -1 when unknown. */
  exitCode: number;
  truncated: boolean;
  timedOut: boolean;
}

/** Output cap of `execute` (100 KB). */
export const MAX_OUTPUT_BYTES = 100 * 1024;

export interface FileEntry {
  /** Path relative to the session root, `/`-separated. */
  path: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
}

export interface ReadOptions {
  /** 0-based line to start at. */
  offset?: number;
  /** Maximum number of lines. */
  limit?: number;
}

export interface GrepMatch {
  path: string;
  /** 1-based line number. */
  line: number;
  text: string;
}

/** Where and with what a long-running process starts (see `ExecutionBackend.spawn`). */
export interface SpawnOptions {
  /** Working directory relative to the session root (default: the root). */
  cwd?: string;
  /** Extra environment variables (added to the backend's allowlisted environment). */
  env?: Record<string, string>;
}

/**
 * A long-running process talking over its standard streams (an MCP stdio server), started by
 * `spawn`. It lives until `kill()`, its own exit, or the session's `terminate()`.
 */
export interface SandboxProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  /** The end of what the process wrote to stderr (at most 4 KB), for error messages. */
  stderrTail(): string;
  /** Resolves with the exit code once the process ended (128 + signal number when killed). */
  readonly exited: Promise<number>;
  /** Stops the whole process tree: SIGTERM, then SIGKILL after the backend's kill grace. */
  kill(): void;
}

export interface ExecutionBackend {
  readonly kind: 'local' | 'docker';
  /** Absolute host path of the session root. */
  readonly root: string;
  execute(command: string, options?: ExecuteOptions): Promise<ExecuteResult>;
  /**
   * Starts `program` with `args` (no shell) under the same confinement as `execute`, its stdio
   * piped to the caller (local: a process group on the host; docker: a `docker exec` in the
   * session's container). Rejects when the program cannot be started (`INVALID_COMMAND` naming
   * it).
   */
  spawn(program: string, args: readonly string[], options?: SpawnOptions): Promise<SandboxProcess>;
  ls(path?: string): Promise<FileEntry[]>;
  read(path: string, options?: ReadOptions): Promise<string>;
  write(path: string, content: string): Promise<void>;
  /** Replaces `oldText` with `newText`; `oldText` must occur exactly once. */
  edit(path: string, oldText: string, newText: string): Promise<void>;
  glob(pattern: string, path?: string): Promise<string[]>;
  grep(
    pattern: string,
    options?: { path?: string; glob?: string; maxMatches?: number },
  ): Promise<GrepMatch[]>;
  delete(path: string): Promise<void>;
  /** Releases everything the session holds (processes, container). Idempotent. */
  terminate(): Promise<void>;
}

/** What a session's backend is opened for (see `ExecutionBackendFactory.forSession`). */
export interface SessionOptions {
  /**
   * The run whose tools use this backend. Every command (and spawned process) it starts is
   * recorded under this run, so `reapOrphans({ sessionId, runId })` finds what the run left
   * running. Letters, digits, `_`, `.`, `-` (at most 128).
   */
  runId?: string;
}

/** Which recorded commands `reapOrphans` ends: a session's, or only one run's of it. */
export interface OrphanTarget {
  sessionId: string;
  /** Only the commands started for this run; absent: every command recorded for the session. */
  runId?: string;
}

/** What `reapOrphans` found. */
export interface OrphanReport {
  /** Commands (process groups) that were still running and were killed. */
  killed: number;
  /** Records of commands that had already ended (or whose pid now names another process). */
  ended: number;
  /**
   * Records left in place because this backend cannot reach their processes (local: started on
   * another machine sharing the state directory).
   */
  unreachable: number;
}

/**
 * Creates a backend for one session. The server picks the implementation; the runtime only sees
 * this factory.
 */
export interface ExecutionBackendFactory {
  readonly kind: 'local' | 'docker';
  forSession(sessionId: string, root: string, options?: SessionOptions): Promise<ExecutionBackend>;
  /** Removes everything held for a deleted session (e.g. its container). */
  release(sessionId: string): Promise<void>;
  /**
   * Ends what a crashed process left running: every command recorded for the session (or for
   * its run `runId`) that still runs is killed with its whole process group, and the records
   * are removed. Each command is recorded durably before it runs and unrecorded when it ends,
   * so this works from a fresh factory, in a restarted process, or on the node that took the
   * run over. Call it only when nothing of that session/run runs anywhere any more (recovery,
   * after winning the run's claim): it does not ask whose the commands are. A recorded pid
   * that now names another process (pid reuse) is never signalled. Idempotent.
   */
  reapOrphans(target: OrphanTarget): Promise<OrphanReport>;
}
