import type { ApiServices } from '@cognition/api';
import type { AgentEventEnvelope, Run, Session } from '@cognition/contracts';
import type { Scope } from '@cognition/storage';
import { isStorageError } from '@cognition/storage';
import { z } from 'zod';
import type { Assistants } from './assistants';
import { AGENT_GRAPH_PREFIX } from './assistants';
import { graphKwargs, graphNodes, refuseEventsForAgents, refuseOtherRuns } from './graph-runs';
import { parseCommand, resumeThread } from './resume';
import type { CancelQuerySchema, RunCreate, RunListQuerySchema } from './run-wire';
import { NOT_FOR_AGENTS, humanText, refuse, runStatus, startCheckpoint } from './run-wire';
import { errorPart } from './run-stream';
import type { StateViews } from './state-views';
import type { Threads } from './threads';
import { GRAPH_KEY, LangGraphHttpError, decodeMetadata, encodeMetadata, notFound } from './wire';

/**
 * Runs (docs/langgraph-api.md, "How it maps"): a LangGraph run is a run of our machinery. An
 * agent assistant's run is a send of the input's last human message to the session (admission,
 * multitask strategy, leases, the durable event log, recovery: all ours); a graph assistant's
 * run is the same admission with the run's kwargs (graph-runs.ts) for input. Its answer is the
 * thread's values once it ended. Its bodies, checks and wire view are run-wire.ts's.
 */

export class Runs {
  constructor(
    private readonly services: ApiServices,
    private readonly assistants: Assistants,
    private readonly threads: Threads,
    private readonly states: StateViews,
  ) {}

  /** Admits a run on the thread: the send of our run machinery. */
  async create(
    threadId: string,
    body: RunCreate,
    scope: Scope,
  ): Promise<{ run: Run; session: Session; assistantId: string; after?: string }> {
    const checkpointId = startCheckpoint(body);
    const session = await this.thread(threadId, body.if_not_exists, scope);
    const { assistant, target } = await this.assistants.get(body.assistant_id, scope);
    if (checkpointId !== undefined && !(await this.states.hasCheckpoint(session, checkpointId))) {
      throw new LangGraphHttpError(404, 'Checkpoint not found');
    }
    if (target.kind === 'graph') {
      const graphId = target.graph.graphId;
      const kwargs = graphKwargs(
        { graphId, nodes: graphNodes(target.graph) },
        body,
        assistant,
        checkpointId,
      );
      refuseOtherRuns(session.id, graphId, await this.services.storage.runs.list(session.id));
      const sent = await this.services.runs.scheduler.sendGraph({
        sessionId: session.id,
        scope,
        kwargs,
        ...(body.multitask_strategy ? { multitaskStrategy: body.multitask_strategy } : {}),
        ...(body.webhook ? { callbackUrl: body.webhook } : {}),
        // Stored on the run row: the run waits `pending` until then, on any node, restarts too.
        ...(body.after_seconds
          ? { startAfter: new Date(Date.now() + body.after_seconds * 1000) }
          : {}),
      });
      return { run: sent.run, session, assistantId: assistant.assistant_id };
    }
    refuse(NOT_FOR_AGENTS, body, "an agent assistant pauses on its tools' decisions only");
    refuseEventsForAgents(body.stream_mode);
    refuse(['after_seconds'], body, 'not supported for an agent assistant yet');
    const agentSession = await this.bindAgent(session, target.name, scope);
    if (checkpointId !== undefined) {
      if (body.command != null) {
        const message =
          'an agent run resumes its own pause; it cannot also start from a checkpoint';
        throw new LangGraphHttpError(422, `Invalid body: body.checkpoint_id: ${message}`, [
          { path: 'body.checkpoint_id', message },
        ]);
      }
      // Time travel on an agent's thread: its head moves back to the checkpoint (our rewind:
      // a new head equal to it, whose parent is that checkpoint, so the history branches there
      // as LangGraph's does), and the run answers from there.
      if (await this.services.storage.runs.getActive(agentSession.id)) {
        throw new LangGraphHttpError(409, `Thread ${agentSession.id} is busy: a run holds it`);
      }
      await this.services.sessions.rewind(agentSession.id, { checkpointId, branch: true }, scope);
    }
    if (body.command != null) {
      const resumed = await resumeThread(
        this.services,
        agentSession,
        parseCommand(body.command),
        scope,
      );
      return {
        run: resumed.run,
        session: agentSession,
        assistantId: assistant.assistant_id,
        ...(resumed.lastEventId !== null ? { after: resumed.lastEventId } : {}),
      };
    }
    const content = humanText(body.input);
    const sent = await this.services.runs.scheduler.send({
      sessionId: agentSession.id,
      scope,
      content,
      // An agent run's metadata is its input message's (encoded as thread metadata is).
      ...(body.metadata !== undefined ? { metadata: encodeMetadata(body.metadata) } : {}),
      ...(body.multitask_strategy ? { multitaskStrategy: body.multitask_strategy } : {}),
      ...(body.webhook ? { callbackUrl: body.webhook } : {}),
    });
    return { run: sent.run, session: agentSession, assistantId: assistant.assistant_id };
  }

  /**
   * The thread's session; with `if_not_exists: create` (what `RemoteGraph` sends with every
   * run, on a thread id it made up) a thread made under that id first. An id another tenant
   * holds answers 404 like any thread of theirs.
   */
  private async thread(
    threadId: string,
    ifNotExists: RunCreate['if_not_exists'],
    scope: Scope,
  ): Promise<Session> {
    // A thread id is a UUID: anything else is not found, never made.
    if (ifNotExists === 'create' && z.uuid().safeParse(threadId).success) {
      await this.threads
        .create({ thread_id: threadId, metadata: {}, if_exists: 'do_nothing' }, scope)
        .catch((error: unknown) => {
          // Not visible in this scope, yet taken: another tenant's.
          if ((error as { code?: unknown }).code === 'CONFLICT') throw notFound('Thread');
          throw error;
        });
    }
    return this.threads.session(threadId, scope);
  }

  /**
   * A session runs one agent. A thread made without a graph (the default agent) takes the
   * assistant's agent at its first run; later, another agent's assistant is refused.
   */
  async bindAgent(session: Session, agent: string, scope: Scope): Promise<Session> {
    const runs = await this.services.storage.runs.list(session.id);
    // A thread that ran a langgraph.json graph holds that graph's state.
    const graph = runs.find((run) => run.kwargs !== null)?.kwargs;
    if (session.agentName === agent && !graph) return session;
    if (runs.length > 0) {
      const ran = graph ? `graph "${graph.graph_id}"` : `${AGENT_GRAPH_PREFIX}${session.agentName}`;
      const message = `thread ${session.id} runs assistant ${ran}`;
      throw new LangGraphHttpError(422, `Invalid body: body.assistant_id: ${message}`, [
        { path: 'body.assistant_id', message },
      ]);
    }
    await this.services.runs.validateSessionInput({ agentName: agent });
    return this.services.sessions.update(session.id, { agentName: agent }, scope);
  }

  /**
   * The run's metadata as it was sent: a graph run keeps it with its kwargs, an agent run's is
   * its input message's (or, while it waits in the queue, the message it will send).
   */
  async metadataOf(run: Run, session: Session): Promise<Record<string, unknown>> {
    if (run.kwargs) return run.kwargs.metadata ?? {};
    const message =
      run.inputMessageId !== null
        ? await this.services.storage.messages.get(session.id, run.inputMessageId, session.scopes)
        : null;
    const stored =
      message?.metadata ?? (await this.services.storage.runs.pendingInput(run.id))?.metadata;
    return stored ? decodeMetadata(stored) : {};
  }

  /** The run `runId` of the thread, in the caller's scope; 404 otherwise. */
  async get(
    threadId: string,
    runId: string,
    scope: Scope,
  ): Promise<{ run: Run; session: Session }> {
    const session = await this.threads.session(threadId, scope);
    const run = await this.services.storage.runs.get(runId);
    if (!run || run.sessionId !== session.id) throw notFound('Run');
    return { run, session };
  }

  async list(
    threadId: string,
    query: z.output<typeof RunListQuerySchema>,
    scope: Scope,
  ): Promise<{ runs: Run[]; session: Session }> {
    const session = await this.threads.session(threadId, scope);
    const runs = await this.services.storage.runs.list(session.id);
    const page = runs
      .filter((run) => query.status === undefined || runStatus(run.status) === query.status)
      .slice(query.offset, query.offset + query.limit);
    return { runs: page, session };
  }

  /** The run's events from the start (or after `lastEventId`) to its terminal event. */
  events(
    run: Run,
    options: { lastEventId?: string; signal?: AbortSignal },
  ): Promise<AsyncGenerator<AgentEventEnvelope, void, undefined>> {
    return this.services.runs.eventsOfRun(run, options);
  }

  /** Waits for the run's terminal event; answers the failure, if it failed. */
  async settle(run: Run, signal?: AbortSignal): Promise<{ error: string; message: string } | null> {
    let failure: { error: string; message: string } | null = null;
    for await (const envelope of await this.events(run, signal ? { signal } : {})) {
      if (envelope.event.type === 'error') failure = errorPart(envelope.event);
    }
    return failure;
  }

  /**
   * `DELETE /threads/{id}/runs/{run_id}`: an ended run goes (its callback records with it); one
   * that has not ended is a 409 — cancel it first. Its events, messages and checkpoints are the
   * thread's and stay. A graph thread whose last graph run goes remembers its graph (as a copy
   * does), so its state is still read as that graph's.
   */
  async delete(threadId: string, runId: string, scope: Scope): Promise<void> {
    const { run, session } = await this.get(threadId, runId, scope);
    const graphId = run.kwargs?.graph_id;
    if (graphId !== undefined && session.metadata[GRAPH_KEY] === undefined) {
      const runs = await this.services.storage.runs.list(session.id);
      if (!runs.some((other) => other.id !== run.id && other.kwargs !== null)) {
        await this.services.sessions.update(
          session.id,
          { metadata: { ...session.metadata, [GRAPH_KEY]: graphId } },
          scope,
        );
      }
    }
    try {
      await this.services.storage.runs.delete(run.id);
    } catch (error) {
      if (!isStorageError(error) || error.code !== 'CONFLICT') throw error;
      throw new LangGraphHttpError(
        409,
        `Run ${run.id} has not ended (${runStatus(run.status)}): cancel it first`,
      );
    }
  }

  /**
   * `POST /threads/{id}/runs/{run_id}/cancel`: the run holding the thread is cancelled (any
   * node); one still waiting behind it never starts (it ends `interrupted`, the queue moves
   * on). `action=rollback` also removes the run, as the reference server does: its row, its
   * input and what followed, the checkpoints its thread gained (a run that never started gained
   * none). A run that has ended is left as it is.
   */
  async cancel(
    threadId: string,
    runId: string,
    query: z.output<typeof CancelQuerySchema>,
    scope: Scope,
  ): Promise<void> {
    const { run, session } = await this.get(threadId, runId, scope);
    const rollback = query.action === 'rollback';
    const wait = query.wait === '1' || query.wait === 'true';
    if (run.status === 'pending') {
      const cancelled = await this.services.runs.cancelPending(session.id, run.id, scope, {
        rollback,
      });
      if (cancelled) return;
      // It started meanwhile: cancelled as the run holding the thread, below.
    }
    const { run: held } = await this.services.runs.abort(session.id, scope, {
      runId: run.id,
      rollback,
    });
    if (held !== null && wait) await this.settle(run);
  }
}
