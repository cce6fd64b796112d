import { AIMessageChunk, HumanMessage } from '@langchain/core/messages';
import { chunkJson, toJson } from './graph-json';

describe('a graph chunk as JSON', () => {
  it('writes a message chunk in its dict form with its class as type', () => {
    const chunk = new AIMessageChunk({ content: 'Hel', id: 'm1', tool_call_chunks: [] });
    expect(JSON.stringify(toJson(chunk))).toBe(
      '{"content":"Hel","id":"m1","tool_call_chunks":[],"tool_calls":[],"invalid_tool_calls":[],' +
        '"additional_kwargs":{},"response_metadata":{},"type":"AIMessageChunk"}',
    );
    expect(toJson(new HumanMessage({ content: 'hi', id: 'h1' }))).toMatchObject({
      content: 'hi',
      id: 'h1',
      type: 'human',
    });
  });

  it('leaves out undefined and functions in objects, nulls them in arrays, dates as ISO', () => {
    const at = new Date('2026-11-28T10:00:00.000Z');
    const value = { a: undefined, f: () => 1, d: at, list: [undefined, () => 1, 2], n: null };
    expect(JSON.stringify(toJson(value))).toBe(
      '{"d":"2026-11-28T10:00:00.000Z","list":[null,null,2],"n":null}',
    );
  });

  it('keeps an own __proto__ key as a key', () => {
    const value = JSON.parse('{"__proto__":{"x":1},"y":2}') as unknown;
    const json = toJson(value) as Record<string, unknown>;
    expect(JSON.stringify(json)).toBe('{"__proto__":{"x":1},"y":2}');
    expect(Object.getPrototypeOf(json)).toBe(Object.prototype);
  });

  it("makes the JSON of a messages chunk's metadata once per metadata object", () => {
    const metadata = { langgraph_node: 'agent', ls_temperature: undefined, tags: [] };
    const first = chunkJson('messages', [new AIMessageChunk({ content: 'a', id: 'm' }), metadata]);
    const second = chunkJson('messages', [new AIMessageChunk({ content: 'b', id: 'm' }), metadata]);
    const [, firstMeta] = first as [unknown, unknown];
    const [secondChunk, secondMeta] = second as [Record<string, unknown>, unknown];
    expect(secondMeta).toBe(firstMeta);
    expect(secondMeta).toEqual({ langgraph_node: 'agent', tags: [] });
    expect(secondChunk['content']).toBe('b');
    // Another metadata object (another model call) is its own.
    const other = chunkJson('messages', [new AIMessageChunk({ content: 'c' }), { ...metadata }]);
    expect((other as unknown[])[1]).not.toBe(firstMeta);
    // Other modes are converted as they are.
    expect(chunkJson('values', [1, metadata])).toEqual([1, { langgraph_node: 'agent', tags: [] }]);
  });
});
