import {
  LiveSessions,
  PathGuard,
  SandboxError,
  validateRunId,
  validateSessionId,
} from '@cognition/sandbox';
import type { ExecutionBackendFactory, OrphanReport } from '@cognition/sandbox';
import { promises as fs } from 'node:fs';
import type { DockerSandboxConfig } from '../docker-config';
import { resolveDockerConfig, SESSION_LABEL } from '../docker-config';
import { DockerApi } from '../engine/docker-api';
import { DockerExecutionBackend, SIGNAL_ATTEMPTS, SIGNAL_RETRY_MS } from './docker-backend';
import { REAP_SCRIPT, reapReport } from './exec-records';

/** The docker factory, plus housekeeping the server calls. */
export interface DockerSandboxFactory extends ExecutionBackendFactory {
  readonly kind: 'docker';
  /**
   * Removes the managed containers (label `cognition.managed=true`, named with this factory's
   * prefix) of sessions that are not in `existingSessionIds`; call it at startup. Resolves to
   * the session ids whose container was removed.
   */
  reconcile(existingSessionIds: Iterable<string>): Promise<string[]>;
  /** The name of a session's container. */
  containerName(sessionId: string): string;
}

/**
 * One hardened container per session, created lazily on the first command and reused, named
 * `<prefix><sessionId>` and labelled so a restarted server finds it again. File operations act
 * on the host workspace (bind-mounted at `/workspace`) through the same path rules as the local
 * backend; every Docker API call goes through a circuit breaker.
 */
export function createDockerSandbox(config: DockerSandboxConfig = {}): DockerSandboxFactory {
  const resolved = resolveDockerConfig(config);
  const api = new DockerApi(resolved.connection, config.circuitBreakers);
  const sessions = new LiveSessions();
  const containerName = (sessionId: string): string => `${resolved.containerPrefix}${sessionId}`;

  return {
    kind: 'docker',
    containerName,
    async forSession(sessionId, root, options = {}) {
      validateSessionId(sessionId);
      const runId = validateRunId(options.runId) ?? null;
      await fs.mkdir(root, { recursive: true });
      const guard = await PathGuard.create({
        root,
        protectedPaths: resolved.protectedPaths,
        virtualRoot: resolved.workspacePath,
      });
      return sessions.track(
        sessionId,
        new DockerExecutionBackend(
          api,
          resolved,
          sessionId,
          containerName(sessionId),
          guard,
          runId,
        ),
      );
    },
    async release(sessionId) {
      await sessions.terminate(sessionId);
      await api.remove(containerName(validateSessionId(sessionId)));
    },
    async reapOrphans(target) {
      const name = containerName(validateSessionId(target.sessionId));
      const runId = validateRunId(target.runId);
      const container = api.container(name);
      const info = await api.inspect(container);
      // No container, or a stopped one: none of its processes runs (and /tmp went with them).
      if (!info?.State.Running) return { killed: 0, ended: 0, unreachable: 0 };
      const cmd = ['sh', '-c', REAP_SCRIPT, 'cognition-reap', runId ?? '*'];
      for (let attempt = 0; attempt < SIGNAL_ATTEMPTS; attempt += 1) {
        const result = await api.runCollect(container, cmd).catch((error: unknown) => {
          if (error instanceof SandboxError && error.code !== 'DOCKER_ERROR') throw error;
          return undefined;
        });
        if (result?.exitCode === 0) return reapReport(result.stdout);
        await new Promise((resolve) => setTimeout(resolve, SIGNAL_RETRY_MS));
      }
      // No exec gets in (every pid taken): a restart ends every process of the container.
      await api.restart(container);
      const report: OrphanReport = { killed: 1, ended: 0, unreachable: 0 };
      return report;
    },
    async reconcile(existingSessionIds) {
      const keep = new Set(existingSessionIds);
      const containers = await api.listManaged();
      const removed: string[] = [];
      for (const container of containers) {
        const sessionId = container.Labels[SESSION_LABEL];
        if (sessionId === undefined || keep.has(sessionId)) continue;
        // Only this factory's naming scheme: another prefix is another deployment's container.
        if (!container.Names.includes(`/${containerName(sessionId)}`)) continue;
        await api.remove(container.Id);
        removed.push(sessionId);
      }
      return removed;
    },
  };
}
