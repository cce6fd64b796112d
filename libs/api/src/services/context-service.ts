import type { ContextWindowView } from '@cognition/contracts';
import type { Scope } from '@cognition/storage';

/**
 * The context-window view of sessions (the runtime's `ContextInspector` satisfies it), declared
 * here for the same reason as `RunService`: the router's type must not reference LangChain.
 */
export interface ContextViewService {
  /**
   * What the session's next model call would be sent, in tokens per part.
   * @throws SESSION_NOT_FOUND for a missing session or one outside `scope`.
   */
  view(sessionId: string, scope: Scope): Promise<ContextWindowView>;
}
