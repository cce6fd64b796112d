import type { Session } from '@cognition/contracts';

/**
 * The system prompt of a session's turn: the session's own (PATCH `system_prompt`) instead of
 * its agent's, then the session's task, when it has one, as `<task>…</task>`.
 */
export function sessionSystemPrompt(
  session: Pick<Session, 'systemPrompt' | 'task'>,
  agentPrompt: string,
): string {
  const base = session.systemPrompt ?? agentPrompt;
  return session.task ? `${base}\n\n<task>\n${session.task}\n</task>` : base;
}
