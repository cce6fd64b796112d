import type { AgentEventEnvelope } from '@cognition/contracts';
import { eventData } from '@cognition/contracts';

/**
 * One Server-Sent Events frame for an envelope: `id:` is the event id (what a client sends back
 * as `Last-Event-ID`), `event:` the event type, `data:` the snake_case payload as one JSON line.
 */
export function formatSseFrame(envelope: AgentEventEnvelope): string {
  return `id: ${envelope.id}\nevent: ${envelope.event.type}\ndata: ${JSON.stringify(eventData(envelope.event))}\n\n`;
}
