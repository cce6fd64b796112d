import type {
  CostByModelRow,
  Message,
  QaEntry,
  Session,
  SessionPage,
  SessionUsageReport,
  SessionWithUsage,
  UsageStats,
} from '@cognition/contracts';
import { EMPTY_SESSION_USAGE, PAGE_LIMIT_MAX } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import { ApiError } from '../../errors';
import type { SessionIdInput } from './schemas';
import type { CostByModelApiInput, QaApiInput, StatsApiInput } from './usage.schemas';

/** Sessions with their usage totals (one read for the whole page). */
export async function withUsage(ctx: ApiContext, sessions: Session[]): Promise<SessionWithUsage[]> {
  if (sessions.length === 0) return [];
  const totals = await ctx.services.storage.usage.totals(sessions.map((s) => s.id));
  return sessions.map((session) => ({
    ...session,
    usage: totals.get(session.id) ?? { ...EMPTY_SESSION_USAGE },
  }));
}

export type SessionPageWithUsage = Omit<SessionPage, 'sessions'> & { sessions: SessionWithUsage[] };

/** `sessions.usage`: totals and the per-model breakdown of one session. */
export async function sessionUsageHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: SessionIdInput;
}): Promise<SessionUsageReport> {
  const report = await ctx.services.storage.usage.get(input.id, ctx.caller.scope);
  if (!report) throw new ApiError('SESSION_NOT_FOUND', `Session not found: ${input.id}`);
  return report;
}

/** `sessions.stats`: figures over the caller's sessions matching the filters. */
export function sessionStatsHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: StatsApiInput;
}): Promise<UsageStats> {
  return ctx.services.storage.usage.stats(input, ctx.caller.scope);
}

/** `sessions.costByModel`: one row per provider/model, most expensive first. */
export function costByModelHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: CostByModelApiInput;
}): Promise<CostByModelRow[]> {
  return ctx.services.storage.usage.costByModel(input, ctx.caller.scope);
}

/**
 * `sessions.qa`: one entry per completed turn, newest first. A turn is a user message and what
 * followed it up to the next user message; it is completed when it holds an assistant answer
 * (an assistant message with text and no pending tool calls), the last such message being the
 * entry's answer and the turn's tool results its context.
 */
export async function sessionQaHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: QaApiInput;
}): Promise<QaEntry[]> {
  const { storage } = ctx.services;
  const session = await storage.sessions.get(input.sessionId, ctx.caller.scope);
  if (!session) throw new ApiError('SESSION_NOT_FOUND', `Session not found: ${input.sessionId}`);
  const entries = (await lastTurns(ctx, input.sessionId, input.lastN)).reverse();
  const feedback = await storage.feedback.forMessages(
    input.sessionId,
    entries.map((entry) => entry.qaId),
  );
  return entries.map((entry) => {
    const rating = feedback.get(entry.qaId);
    return { ...entry, feedbackScore: rating?.score ?? null, feedbackText: rating?.text ?? null };
  });
}

/**
 * The last `n` completed turns, oldest first, read from the end of the thread in growing
 * windows (a long thread is not read whole for ten entries). A turn whose question lies before
 * the window is left out until a wider window holds it.
 */
async function lastTurns(ctx: ApiContext, sessionId: string, n: number): Promise<QaEntry[]> {
  const { messages } = ctx.services.storage;
  const { total } = await messages.page(sessionId, { limit: 1 }, ctx.caller.scope);
  for (let window = Math.max(n * 8, 200); ; window *= 4) {
    const offset = Math.max(0, total - window);
    const rows: Message[] = [];
    for (let at = offset; at < total; at += PAGE_LIMIT_MAX) {
      const page = await messages.page(
        sessionId,
        { offset: at, limit: PAGE_LIMIT_MAX },
        ctx.caller.scope,
      );
      rows.push(...page.messages);
    }
    const entries = qaEntries(rows);
    if (entries.length >= n || offset === 0) return entries.slice(-n);
  }
}

/** The completed turns of a thread, oldest first, without feedback. */
function qaEntries(messages: readonly Message[]): QaEntry[] {
  const entries: QaEntry[] = [];
  let question: Message | null = null;
  let answer: Message | null = null;
  let context: QaEntry['context'] = [];
  const close = (): void => {
    if (question && answer) {
      entries.push({
        qaId: answer.id,
        time: answer.createdAt,
        question: question.content,
        answer: answer.content,
        context,
        feedbackScore: null,
        feedbackText: null,
      });
    }
  };
  for (const message of messages) {
    if (message.role === 'user') {
      close();
      question = message;
      answer = null;
      context = [];
    } else if (question && message.role === 'tool') {
      context.push({ toolCallId: message.toolCallId, content: message.content });
    } else if (
      question &&
      message.role === 'assistant' &&
      message.toolCalls.length === 0 &&
      message.content.trim() !== ''
    ) {
      answer = message;
    }
  }
  close();
  return entries;
}
