import type { Session } from '@cognition/contracts';
import type { ApiContext } from './context';
import { ApiError } from './errors';

/**
 * The session if the caller's scope covers it. A session outside the scope is reported exactly
 * like a missing one (`SESSION_NOT_FOUND`), so its existence never leaks across tenants.
 */
export async function requireSession(ctx: ApiContext, sessionId: string): Promise<Session> {
  const session = await ctx.services.storage.sessions.get(sessionId, ctx.caller.scope);
  if (!session) throw new ApiError('SESSION_NOT_FOUND', `Session not found: ${sessionId}`);
  return session;
}
