import type { Session } from '@cognition/contracts';
import type { RunnableConfig } from '@langchain/core/runnables';
import { toWire } from './wire';

/**
 * A `langgraph.json` graph's state snapshot (LangGraph's `getState` / `getStateHistory`) as the
 * LangGraph API answers a thread's state (docs/langgraph-api.md, "Thread state"): `next`, the
 * `tasks` with their `interrupts`, and `interrupts` (every task's, in task order). Checkpoints
 * name the thread (the session id), never the session's internal checkpoint thread.
 */

/** The fields of LangGraph.js's `StateSnapshot` read here. */
interface Snapshot {
  values: unknown;
  next: readonly string[];
  config: RunnableConfig;
  parentConfig?: RunnableConfig | undefined;
  metadata?: unknown;
  createdAt?: string | undefined;
  tasks: readonly SnapshotTask[];
}

interface SnapshotTask {
  id: string;
  name: string;
  path?: readonly unknown[];
  error?: unknown;
  interrupts: readonly unknown[];
  state?: RunnableConfig | Snapshot;
  result?: unknown;
}

/** A checkpoint of the thread: `{thread_id, checkpoint_ns, checkpoint_id}`, or null. */
export function checkpointOf(
  session: Session,
  config: RunnableConfig | undefined,
): Record<string, string> | null {
  const configurable = config?.configurable;
  const id: unknown = configurable?.['checkpoint_id'];
  if (typeof id !== 'string' || id === '') return null;
  const ns: unknown = configurable?.['checkpoint_ns'];
  return {
    thread_id: session.id,
    checkpoint_ns: typeof ns === 'string' ? ns : '',
    checkpoint_id: id,
  };
}

function isSnapshot(state: unknown): state is Snapshot {
  return typeof state === 'object' && state !== null && 'values' in state && 'next' in state;
}

function errorText(error: unknown): string | null {
  if (error === undefined || error === null) return null;
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' ? message : JSON.stringify(error);
}

/** A subgraph task's own state (`subgraphs`) or where it is (its checkpoint namespace). */
function taskCheckpoint(session: Session, state: SnapshotTask['state']): unknown {
  if (state === undefined || isSnapshot(state)) return null;
  const configurable = state.configurable ?? {};
  const ns: unknown = configurable['checkpoint_ns'];
  return {
    thread_id: session.id,
    checkpoint_ns: typeof ns === 'string' ? ns : '',
    ...(typeof configurable['checkpoint_id'] === 'string'
      ? { checkpoint_id: configurable['checkpoint_id'] }
      : {}),
  };
}

export function snapshotState(session: Session, raw: unknown): Record<string, unknown> {
  const snapshot = raw as Snapshot;
  const tasks = snapshot.tasks.map((task) => ({
    id: task.id,
    name: task.name,
    path: toWire(task.path ?? []),
    error: errorText(task.error),
    interrupts: toWire(task.interrupts) as unknown[],
    checkpoint: taskCheckpoint(session, task.state),
    state: isSnapshot(task.state) ? snapshotState(session, task.state) : null,
    result: task.result === undefined ? null : toWire(task.result),
  }));
  // A graph whose state is not an object (a `MessagesValue` root…) is answered as it is.
  const values = toWire(snapshot.values ?? {});
  return {
    values,
    next: [...snapshot.next],
    tasks,
    checkpoint: checkpointOf(session, snapshot.config),
    parent_checkpoint: checkpointOf(session, snapshot.parentConfig),
    metadata: toWire(snapshot.metadata ?? {}),
    created_at: snapshot.createdAt ?? null,
    interrupts: tasks.flatMap((task) => task.interrupts),
  };
}
