import { SandboxError } from './errors';
import type { PathGuard } from './paths';
import type {
  ExecuteOptions,
  ExecuteResult,
  ExecutionBackend,
  FileEntry,
  GrepMatch,
  ReadOptions,
  SandboxProcess,
  SpawnOptions,
} from './port';
import type { FileOwner } from './workspace-files';
import { WorkspaceFiles } from './workspace-files';

/**
 * What every backend's session shares: the file operations (the host acts on the workspace
 * directly; the Docker backend mounts that same directory, so they are identical) and the
 * terminated state. A backend adds how commands run (`execute`, `spawn`) and what terminating frees
 * (`release`).
 */
export abstract class SessionBackend implements ExecutionBackend {
  abstract readonly kind: ExecutionBackend['kind'];
  /** Absolute host path of the session root. */
  readonly root: string;
  protected readonly files: WorkspaceFiles;
  private terminated = false;
  private readonly terminateListeners: Array<() => void> = [];

  constructor(guard: PathGuard, owner?: FileOwner) {
    this.root = guard.root;
    this.files = new WorkspaceFiles(guard, owner);
  }

  abstract execute(command: string, options?: ExecuteOptions): Promise<ExecuteResult>;

  abstract spawn(
    program: string,
    args: readonly string[],
    options?: SpawnOptions,
  ): Promise<SandboxProcess>;

  /** Frees what the session holds (processes, container); called once, by `terminate`. */
  protected abstract release(): Promise<void>;

  /** `listener` runs once, when the session is terminated (the factory forgets it then). */
  onTerminate(listener: () => void): void {
    this.terminateListeners.push(listener);
  }

  ls(path?: string): Promise<FileEntry[]> {
    return this.live(() => this.files.ls(path));
  }

  read(path: string, options?: ReadOptions): Promise<string> {
    return this.live(() => this.files.read(path, options));
  }

  write(path: string, content: string): Promise<void> {
    return this.live(() => this.files.write(path, content));
  }

  edit(path: string, oldText: string, newText: string): Promise<void> {
    return this.live(() => this.files.edit(path, oldText, newText));
  }

  glob(pattern: string, path?: string): Promise<string[]> {
    return this.live(() => this.files.glob(pattern, path));
  }

  grep(
    pattern: string,
    options?: { path?: string; glob?: string; maxMatches?: number },
  ): Promise<GrepMatch[]> {
    return this.live(() => this.files.grep(pattern, options));
  }

  delete(path: string): Promise<void> {
    return this.live(() => this.files.delete(path));
  }

  /** Idempotent: the first call marks the session terminated, tells listeners, and releases. */
  async terminate(): Promise<void> {
    if (this.terminated) return;
    this.terminated = true;
    for (const listener of this.terminateListeners.splice(0)) listener();
    await this.release();
  }

  protected assertLive(): void {
    if (this.terminated) {
      throw new SandboxError('TERMINATED', 'This sandbox session was terminated');
    }
  }

  /** Runs `operation` unless terminated; every failure surfaces as a rejection. */
  private async live<T>(operation: () => Promise<T>): Promise<T> {
    this.assertLive();
    return operation();
  }
}

/**
 * A factory's live sessions by session id, so `release(sessionId)` can terminate every backend
 * it handed out for that session; a terminated backend drops out by itself.
 */
export class LiveSessions {
  private readonly bySession = new Map<string, Set<SessionBackend>>();

  track<T extends SessionBackend>(sessionId: string, backend: T): T {
    const live = this.bySession.get(sessionId) ?? new Set();
    live.add(backend);
    this.bySession.set(sessionId, live);
    backend.onTerminate(() => live.delete(backend));
    return backend;
  }

  /** Terminates (and forgets) every tracked backend of the session. */
  async terminate(sessionId: string): Promise<void> {
    const live = this.bySession.get(sessionId);
    this.bySession.delete(sessionId);
    await Promise.all([...(live ?? [])].map((backend) => backend.terminate()));
  }
}
