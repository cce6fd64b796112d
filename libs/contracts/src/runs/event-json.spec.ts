import type { AgentEvent } from './events';
import { eventJson, jsonOf } from './event-json';

describe('event JSON', () => {
  const graph = (data: unknown): AgentEvent => ({
    type: 'graph',
    mode: 'messages|sub:1',
    namespace: ['sub:1', 'a"b'],
    data,
  });

  it('is JSON.stringify of the event for every kind', () => {
    const events: AgentEvent[] = [
      graph([
        { content: 'Hé "x"\n', type: 'AIMessageChunk' },
        { tags: [], step: 1 },
      ]),
      graph({ messages: [] }),
      graph(null),
      graph('text'),
      { type: 'token', content: 'hi' },
      // Keys in another order than the schema's: still JSON.stringify's text.
      { data: { a: 1 }, namespace: [], mode: 'values', type: 'graph' },
    ];
    for (const event of events) expect(eventJson(event)).toBe(JSON.stringify(event));
  });

  it("hands a graph event's data text to the part that sends that data", () => {
    const data = [{ content: 'tok' }, { langgraph_node: 'agent' }];
    const event = graph(data);
    const stored = eventJson(event);
    const sent = jsonOf(data);
    expect(sent).toBe(JSON.stringify(data));
    expect(stored.endsWith(`"data":${sent}}`)).toBe(true);
    // The kept text, not a new one (the data is never changed once emitted).
    (data[0] as { content: string }).content = 'changed';
    expect(jsonOf(data)).toBe(sent);
    // Other values are serialized as they are.
    expect(jsonOf({ content: 'tok' })).toBe('{"content":"tok"}');
    expect(jsonOf(undefined)).toBeUndefined();
    expect(jsonOf(3)).toBe('3');
  });
});
