import type { Artifact } from '@cognition/contracts';
import type { ArtifactAccess, ArtifactStore } from '@cognition/storage';

/** Characters of memory and policy text given to the agent at the start of a turn, at most. */
const ARTIFACT_CONTEXT_MAX_CHARS = 16_000;

/** How many memory/policy artifacts are considered per type (newest first). */
const CANDIDATES_PER_TYPE = 50;

const SECTIONS = [
  {
    type: 'policy',
    heading: '## Policies\nInstructions from the operators of this workspace. Follow them.',
  },
  {
    type: 'memory',
    heading:
      '## Memory\nNotes kept from earlier work. They may be outdated; prefer what you observe.',
  },
] as const;

/**
 * The text appended to the agent's system prompt at the start of a turn: the `policy` artifacts
 * (as instructions), then the `memory` artifacts (as notes) that the run can see, newest first
 * within each, whole artifacts only, until `maxChars` is used up (policies first, so a large
 * memory never pushes out a policy). Binary artifacts are skipped. Empty when there are none.
 * Artifacts left out for the budget are named, so the agent can `artifact_read` them.
 */
export async function artifactContext(
  store: ArtifactStore,
  access: ArtifactAccess,
  maxChars: number = ARTIFACT_CONTEXT_MAX_CHARS,
): Promise<string> {
  let room = maxChars;
  const parts: string[] = [];
  for (const { type, heading } of SECTIONS) {
    const page = await store.list({ type, limit: CANDIDATES_PER_TYPE }, access);
    const included: string[] = [];
    const omitted: Artifact[] = [];
    for (const listed of page.artifacts) {
      if (listed.encoding !== 'utf8') continue;
      const artifact = await store.get(listed.id, access);
      if (!artifact) continue;
      const block = `### ${artifact.name} (v${artifact.version})\n${artifact.content.trim()}`;
      if (block.length + 2 > room) {
        omitted.push(artifact);
        continue;
      }
      room -= block.length + 2;
      included.push(block);
    }
    if (omitted.length > 0) {
      included.push(
        `(Not shown for length: ${omitted.map((a) => a.name).join(', ')}; use artifact_read.)`,
      );
    }
    if (included.length > 0) parts.push([heading, ...included].join('\n\n'));
  }
  return parts.length === 0 ? '' : `\n\n${parts.join('\n\n')}`;
}
