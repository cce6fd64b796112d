import { randomUUID } from 'node:crypto';
import type { Message } from '@cognition/contracts';
import type { BaseMessage } from '@langchain/core/messages';
import type { CheckpointTuple } from '@langchain/langgraph-checkpoint';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import type { StorageErrorCode } from '../errors';
import { StorageError } from '../errors';
import type { StorageBackend } from '../backend';
import type { RunFence } from '../domains/runs';
import { RUN_FENCE_KEY } from '../domains/runs';

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A unique id with a readable prefix (message ids are global in some backends). */
export function uid(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

/** Awaits `promise`, expecting a StorageError with `code`; returns it for further checks. */
export async function expectStorageError(
  promise: Promise<unknown>,
  code: StorageErrorCode,
): Promise<StorageError> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(StorageError);
  expect((caught as StorageError).code).toBe(code);
  return caught as StorageError;
}

/** Expects `error` (e.g. a rejection reason) to be a StorageError with `code`. */
export function expectStorageErrorValue(error: unknown, code: StorageErrorCode): void {
  expect(error).toBeInstanceOf(StorageError);
  expect((error as StorageError).code).toBe(code);
}

/** Expects a VALIDATION_ERROR whose field issues name `field` (dotted path prefix). */
export async function expectValidationError(
  promise: Promise<unknown>,
  field: string,
): Promise<void> {
  const error = await expectStorageError(promise, 'VALIDATION_ERROR');
  const paths = (error.details.issues ?? []).map((issue) => issue.path);
  expect(paths.some((path) => path === field || path.startsWith(`${field}.`))).toBe(true);
}

let lastCheckpointId = '';

/** A checkpoint id later than every id this process handed out before (uuid6 sorts by time). */
export function nextCheckpointId(): string {
  let id = uuid6(-1);
  while (id <= lastCheckpointId) id = uuid6(-1);
  lastCheckpointId = id;
  return id;
}

/**
 * Writes a checkpoint whose `messages` channel holds `messages` on `threadId`, exactly as a
 * LangGraph graph would, and returns its id.
 */
export async function putMessagesCheckpoint(
  backend: StorageBackend,
  threadId: string,
  messages: BaseMessage[],
  options: {
    checkpointId?: string;
    namespace?: string;
    step?: number;
    parentId?: string;
    /** Written under this run fence (as a run's executor writes). */
    fence?: RunFence;
  } = {},
): Promise<string> {
  const id = options.checkpointId ?? nextCheckpointId();
  const step = options.step ?? messages.length;
  const checkpoint = {
    ...emptyCheckpoint(),
    id,
    channel_values: { messages },
    channel_versions: { messages: step + 1 },
  };
  await backend.checkpointer.put(
    {
      configurable: {
        thread_id: threadId,
        checkpoint_ns: options.namespace ?? '',
        // The saver records the config's checkpoint as the new one's parent.
        ...(options.parentId !== undefined ? { checkpoint_id: options.parentId } : {}),
        ...(options.fence ? { [RUN_FENCE_KEY]: options.fence } : {}),
      },
    },
    checkpoint,
    { source: 'loop', step, parents: {} },
    { messages: step + 1 },
  );
  return id;
}

export async function latestCheckpoint(
  backend: StorageBackend,
  threadId: string,
  namespace = '',
): Promise<CheckpointTuple | undefined> {
  return backend.checkpointer.getTuple({
    configurable: { thread_id: threadId, checkpoint_ns: namespace },
  });
}

export async function countCheckpoints(backend: StorageBackend, threadId: string): Promise<number> {
  let count = 0;
  for await (const _tuple of backend.checkpointer.list({ configurable: { thread_id: threadId } })) {
    count += 1;
  }
  return count;
}

/** A message without its timestamp, for comparing projections across rewrites. */
export function withoutCreatedAt(message: Message): Omit<Message, 'createdAt'> {
  const { createdAt: _createdAt, ...rest } = message;
  return rest;
}
