import type { AgentEventEnvelope } from '@cognition/contracts';
import { eventData } from '@cognition/contracts';

/**
 * One Server-Sent Events frame for an envelope: `id:` the event id (what a client sends back as
 * `Last-Event-ID`), `event:` the event type, `data:` the snake_case payload as one JSON line,
 * with `at`, when the event was emitted, last (SSE has no field of its own for a time, and a
 * replayed frame must carry it as well as a live one).
 */
export function formatSseFrame(envelope: AgentEventEnvelope): string {
  const data = { ...eventData(envelope.event), at: envelope.at };
  return `id: ${envelope.id}\nevent: ${envelope.event.type}\ndata: ${JSON.stringify(data)}\n\n`;
}
