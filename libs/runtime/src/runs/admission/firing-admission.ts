import type { Run } from '@cognition/contracts';
import type { Scope, StorageBackend } from '@cognition/storage';
import { RuntimeError } from '../../errors';
import { newMessageId, newRunId } from '../../ids';
import type { ConfigRegistry } from '../../registry/config-registry';
import { missingAgent } from '../../registry/config-registry';
import type { RunInput } from '../execution/run-executor';
import type { FiringOutcome, FiringSend } from './send-input';
import { parseSendInput } from './send-input';

/** What the batch admission of firings needs of the run scheduler. */
export interface FiringAdmissionDeps {
  storage: StorageBackend;
  registry: Pick<ConfigRegistry, 'current'>;
  /** A send's check of a callback URL's host (`checkCallbackHost`). */
  checkCallbackHost(url: string): Promise<void>;
  /** Starts an admitted run as a send's (`RunScheduler`'s start: the claim, then the executor). */
  start(run: Run, input: RunInput, scope: Scope): Promise<void>;
}

/**
 * Admits a scheduler pass's `new_session` firings with a fixed number of storage statements
 * whatever their number (`ScheduleStore.admitFirings`: sessions, runs, messages and fires in
 * one transaction), where `send` costs several per firing. The checks of a send to a fresh
 * session still apply per firing (the input's schema, the agent in force — the registry read
 * once —, the callback host once per URL); a refused firing gets its error. The runs carry no
 * initial claim: `start` claims each one a free slot takes, the others stay `queued` for the
 * cluster (or this node's queue) as a send's do.
 * @throws a storage error: it fails the whole batch.
 */
export async function admitFirings(
  firings: FiringSend[],
  deps: FiringAdmissionDeps,
): Promise<FiringOutcome[]> {
  if (firings.length === 0) return [];
  const registry = await deps.registry.current();
  const hosts = new Map<string, Promise<RuntimeError | null>>();
  const checkHost = (url: string) => {
    let checked = hosts.get(url);
    if (!checked) {
      checked = deps.checkCallbackHost(url).then(
        () => null,
        (error: unknown) => asRuntimeError(error),
      );
      hosts.set(url, checked);
    }
    return checked;
  };
  const outcomes: FiringOutcome[] = [];
  const admissions: { index: number; firing: FiringSend; runId: string; messageId: string }[] = [];
  for (const [index, firing] of firings.entries()) {
    try {
      parseSendInput({
        sessionId: firing.session.id,
        scope: firing.scope,
        content: firing.content,
        metadata: firing.metadata,
        idempotencyKey: firing.idempotencyKey,
        ...(firing.callbackUrl ? { callbackUrl: firing.callbackUrl } : {}),
      });
      if (!registry.agents.get(firing.session.agentName)) {
        throw missingAgent(firing.session.agentName);
      }
      const refused = firing.callbackUrl ? await checkHost(firing.callbackUrl) : null;
      if (refused) throw refused;
    } catch (error) {
      outcomes[index] = { error: asRuntimeError(error) };
      continue;
    }
    outcomes[index] = null;
    admissions.push({ index, firing, runId: newRunId(), messageId: newMessageId() });
  }
  const admitted = await deps.storage.schedules.admitFirings(
    admissions.map(({ firing, runId, messageId }) => ({
      scheduleId: firing.scheduleId,
      dueAt: firing.dueAt,
      cleanup: firing.cleanup,
      scope: firing.scope,
      session: firing.session,
      run: {
        id: runId,
        messageId,
        idempotencyKey: firing.idempotencyKey,
        callbackUrl: firing.callbackUrl,
        ownerNode: null,
        leaseExpiresAt: null,
      },
      message: { content: firing.content, metadata: firing.metadata },
    })),
  );
  const byRun = new Map(admitted.map((a) => [a.run.id, a]));
  for (const { index, firing, runId } of admissions) {
    const a = byRun.get(runId);
    if (!a) continue;
    outcomes[index] = { run: a.run, message: a.message, created: true };
    await deps.start(
      a.run,
      {
        session: a.session,
        userMessage: a.message,
        callbackUrl: a.run.callbackUrl,
        fresh: { registry, clientTools: [] },
      },
      firing.scope,
    );
  }
  return outcomes;
}

/** A refusal (a RuntimeError) as a firing's outcome; anything else is rethrown. */
function asRuntimeError(error: unknown): RuntimeError {
  if (error instanceof RuntimeError) return error;
  throw error;
}
