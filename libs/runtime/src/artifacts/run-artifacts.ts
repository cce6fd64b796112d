import type { Session } from '@cognition/contracts';
import type { ArtifactStore } from '@cognition/storage';
import type { ArtifactToolContext } from '../tools/types';

/**
 * A run's access to the artifact store: the scope of its session (artifacts of another scope
 * never show), its session (private artifacts) and itself (run artifacts). Subagents share
 * their parent's run.
 */
export function runArtifacts(
  store: ArtifactStore,
  session: Pick<Session, 'id' | 'scopes'>,
  runId: string,
): ArtifactToolContext {
  return { store, access: { scope: session.scopes, agent: { sessionId: session.id, runId } } };
}
