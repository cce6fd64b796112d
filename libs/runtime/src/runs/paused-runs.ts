import type { HitlDecision, PendingAction, Run, Session } from '@cognition/contracts';
import type { Scope } from '@cognition/storage';
import { RuntimeError } from '../errors';
import type { Outcome } from '../run-outcome';
import { eventId, seqOfEventId } from '../ids';
import type { ActiveRuns } from './coordination/active-runs';
import { validateDecisions } from './execution/decisions';
import type { RunContext } from './run-context';
import { requireSession } from './run-context';
import type { RunExecutor } from './execution/run-executor';
import { executeInBackground } from './execution/run-executor';
import { sessionBackend } from './execution/turn-setup';
import type { RunFinisher } from './run-finisher';
import type { RunLeases } from './coordination/run-leases';
import { ensureInputMessage } from './admission/user-message';

/** A resumed run, and the id of its last event before it resumed (its `interrupt`). */
export interface ResumedRun {
  run: Run;
  /** Follow the run after this id to get exactly what it does from now on (null: no events). */
  lastEventId: string | null;
}

const ABORTED_WHILE_PAUSED = 'The run was aborted while it waited for a decision';

export interface PausedRunsOptions {
  ctx: RunContext;
  active: ActiveRuns;
  executor: Pick<RunExecutor, 'execute'>;
  finisher: Pick<RunFinisher, 'finish'>;
  leases: Pick<RunLeases, 'resumeClaim' | 'claim'>;
}

/**
 * Runs paused for a person's decision (human in the loop): resuming one with decisions, and
 * aborting one. Both start from the run row, not from anything in memory, so any node can do
 * either after any restart; storage's `settlePaused` lets exactly one of concurrent callers act.
 */
export class PausedRuns {
  constructor(private readonly o: PausedRunsOptions) {}

  /**
   * Checks the decisions against what the run waits for, resumes it (same run id, event ids
   * continuing after its `interrupt`) and executes it here.
   * @throws RuntimeError SESSION_NOT_FOUND, RUN_NOT_FOUND (not a run of this session),
   *   CONFLICT (not waiting for a decision: never paused, or resumed or aborted meanwhile),
   *   VALIDATION_ERROR naming the decision at fault.
   */
  async resume(
    sessionId: string,
    runId: string,
    decisions: HitlDecision[],
    scope: Scope,
  ): Promise<ResumedRun> {
    const { storage } = this.o.ctx;
    const session = await requireSession(storage, sessionId, scope);
    const run = await this.runOf(session, runId);
    if (run.status !== 'requires_action' || !run.pendingAction) {
      throw new RuntimeError(
        'CONFLICT',
        `Run ${run.id} is ${run.status}, not waiting for a decision`,
      );
    }
    await this.validate(session, run.pendingAction, decisions);
    const resumed = await storage.runs.settlePaused(run.id, {
      status: 'queued',
      ...this.o.leases.resumeClaim(),
    });
    if (!resumed) {
      throw new RuntimeError(
        'CONFLICT',
        `Run ${run.id} is no longer waiting for a decision (resumed or aborted meanwhile)`,
      );
    }
    const message = await ensureInputMessage(storage, resumed);
    if (!message) {
      throw new RuntimeError('CONFLICT', `The message run ${run.id} answers is gone`);
    }
    const lastSeq = await this.lastSeq(run);
    // The claim the resumed execution writes under (run fencing); the resume carried this
    // node's claim, so only a node that took the run over since (lease expired) wins it.
    const claim = await this.o.leases.claim(run.id);
    if (!claim) {
      return { run: resumed, lastEventId: lastSeq > 0 ? eventId(run.id, lastSeq) : null };
    }
    const active = this.o.active.add(run.id, session.id, scope, lastSeq, claim.fence);
    executeInBackground(
      this.o.executor,
      active,
      { session, userMessage: message, callbackUrl: run.callbackUrl, resumed: true, decisions },
      { runs: this.o.active, logger: this.o.ctx.logger, what: 'resumed run' },
    );
    return { run: resumed, lastEventId: lastSeq > 0 ? eventId(run.id, lastSeq) : null };
  }

  /**
   * Ends a paused run `aborted`: its stream gets its terminal events and its callback is sent,
   * like any aborted run; with a `rolled_back` outcome it is removed instead (the finisher's
   * rollback). null when it was no longer paused (another caller settled it first).
   */
  async abort(
    session: Session,
    run: Run,
    scope: Scope,
    outcome: Extract<Outcome, { kind: 'aborted' | 'rolled_back' }> = { kind: 'aborted' },
  ): Promise<Run | null> {
    const { storage } = this.o.ctx;
    const aborted = await storage.runs.settlePaused(run.id, {
      status: 'aborted',
      error: { code: 'ABORTED', message: ABORTED_WHILE_PAUSED },
      finishedAt: new Date(),
    });
    if (!aborted) return null;
    const active = this.o.active.add(run.id, session.id, scope, await this.lastSeq(run));
    await this.o.finisher.finish(active, session, {
      outcome,
      meter: null,
      lastAssistantId: null,
      callbackUrl: run.callbackUrl,
      priorUsage: run.usage,
    });
    return storage.runs.get(run.id);
  }

  private async runOf(session: Session, runId: string): Promise<Run> {
    const run = await this.o.ctx.storage.runs.get(runId);
    if (!run || run.sessionId !== session.id) {
      throw new RuntimeError('RUN_NOT_FOUND', `Run not found: ${runId}`);
    }
    return run;
  }

  /**
   * Checks the decisions against the tools a run of the session's agent is offered (an edited
   * call must fit its tool's schema), MCP tools included: their schemas come from the servers.
   */
  private async validate(
    session: Session,
    action: PendingAction,
    decisions: HitlDecision[],
  ): Promise<void> {
    const { catalog, mcp } = this.o.ctx;
    const { agents } = await this.o.ctx.registry.current();
    const agent = agents.get(session.agentName);
    const builtin = agent ? catalog.forAgent(agent, agents.subagents()) : [];
    const edits = decisions.some((d) => d.type === 'edit');
    if (!agent || !edits || !action.tool_calls.some((c) => c.name.startsWith('mcp__'))) {
      validateDecisions(action, decisions, builtin);
      return;
    }
    const servers = await mcp.forRun(session.id, agent, {
      backend: sessionBackend(this.o.ctx, session),
      signal: new AbortController().signal,
    });
    try {
      validateDecisions(action, decisions, [...builtin, ...servers.tools]);
    } finally {
      servers.release();
    }
  }

  /** The sequence number of the run's last stored event: the resumed run continues after it. */
  private async lastSeq(run: Run): Promise<number> {
    const own = (await this.o.ctx.log.readAfter(run.sessionId, `${run.id}:`)).events.filter(
      (e) => e.runId === run.id,
    );
    return seqOfEventId(own[own.length - 1]?.id ?? '') ?? 0;
  }
}
