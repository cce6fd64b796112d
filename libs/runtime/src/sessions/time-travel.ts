import type { CreateSessionInput, Session, StringMap } from '@cognition/contracts';
import type { Scope, StorageBackend } from '@cognition/storage';
import { copyThreadCheckpoints, putCheckpointCopy, rootCheckpoint } from '@cognition/storage';
import { RuntimeError } from '../errors';
import type { SessionPipeline } from './session-pipeline';
import type { Versioned } from './session-status';
import { requireNotTerminal } from './session-status';
import type { SessionThreads, ThreadPoint } from './session-threads';
import { forkValues } from './thread-edits';

/*
 * Time travel: the session actions that copy checkpoints of a thread to another point of the
 * history — `fork` (into a new session, one state or the whole history) and `rewind` (the
 * head moves back, or branches). Both go through the session's execute pipeline.
 */

/** What fork and rewind need of the session service. */
export interface TimeTravelDeps {
  storage: StorageBackend;
  pipeline: SessionPipeline;
  threads: SessionThreads;
  /** A new session's input with its id and workspace path (the service's `withWorkspace`). */
  withWorkspace(input: CreateSessionInput): CreateSessionInput;
}

export type ForkOptions = ThreadPoint & {
  title?: string | null | undefined;
  /**
   * Copy every root checkpoint (same ids, parents, metadata, pending writes, messages), not
   * only the state at one point: the fork's history is the source's. Not with a point.
   */
  history?: boolean | undefined;
};

export type RewindOptions = ThreadPoint &
  Versioned & {
    /** The new head's parent is the point (a branch of the history), not the old head. */
    branch?: boolean | undefined;
  };

/**
 * A new session (parent: the source; same agent, config, metadata, system prompt, task and
 * scopes) whose thread starts from the source's state at `point` (latest when omitted), its
 * messages keeping their ids (unique per session, not across sessions). The source is not
 * written.
 */
export async function forkSession(
  deps: TimeTravelDeps,
  id: string,
  options: ForkOptions,
  scope: Scope,
): Promise<Session> {
  const { storage, pipeline, threads } = deps;
  if (options.history === true && (options.checkpointId ?? options.messageId) !== undefined) {
    throw RuntimeError.field(
      'history',
      'a fork with its history copies every checkpoint: give no point',
    );
  }
  let created: Session | null = null;
  await pipeline.execute(id, scope, {
    name: 'fork',
    save: false,
    apply: async (source) => {
      const point =
        options.checkpointId !== undefined || options.messageId !== undefined
          ? await threads.resolvePoint(source, options, scope)
          : await rootCheckpoint(storage.checkpointer, source.threadId);
      const fork = await storage.sessions.create(
        deps.withWorkspace({
          title: options.title !== undefined ? options.title : source.title,
          agentName: source.agentName,
          config: source.config,
          metadata: source.metadata,
          parentId: source.id,
          systemPrompt: source.systemPrompt,
          task: source.task,
          checkpointRetention: source.checkpointRetention,
        }),
        source.scopes,
      );
      try {
        if (options.history === true) {
          await copyThreadCheckpoints(
            storage.checkpointer,
            source.threadId,
            fork.threadId,
            forkValues,
          );
        } else if (point) {
          await putCheckpointCopy(storage.checkpointer, point, fork.threadId, forkValues);
        }
      } catch (error) {
        await storage.sessions.delete(fork.id, source.scopes);
        throw error;
      }
      created = (await storage.sessions.get(fork.id, source.scopes)) ?? fork;
      const detail: StringMap = {
        forked_to: fork.id,
        checkpoint_id: point?.checkpoint.id ?? '',
      };
      return { session: source, detail };
    },
  });
  const fork = created as Session | null;
  if (!fork) throw new RuntimeError('INTERNAL_ERROR', 'fork produced no session');
  await pipeline.record(fork.id, fork, 'session.saved', 'fork', {
    versionAfter: fork.version,
    statusAfter: fork.status,
    detail: { forked_from: id },
  });
  return fork;
}

/**
 * The thread's head moves back to `point`: a new checkpoint equal to it (history is kept),
 * the message rows follow, the version increments. Refused while a run is active.
 */
export function rewindSession(
  deps: TimeTravelDeps,
  id: string,
  options: RewindOptions,
  scope: Scope,
): Promise<Session> {
  const { storage, pipeline, threads } = deps;
  return pipeline.execute(id, scope, {
    name: 'rewind',
    expectedVersion: options.expectedVersion,
    apply: async (session) => {
      requireNotTerminal(session, 'rewind');
      await threads.requireIdle(session);
      const point = await threads.resolvePoint(session, options, scope);
      const head = await putCheckpointCopy(
        storage.checkpointer,
        point,
        session.threadId,
        undefined,
        options.branch === true ? 'source' : 'head',
      );
      return {
        session,
        detail: { to_checkpoint_id: point.checkpoint.id, checkpoint_id: head },
      };
    },
  });
}
