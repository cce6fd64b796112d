import { parseLangGraphConfig } from './langgraph-config';

const parse = (store: unknown) =>
  parseLangGraphConfig(
    JSON.stringify({ graphs: { g: './g.ts:graph' }, store }),
    '/app/langgraph.json',
  );

describe("langgraph.json's store.index (issue 28)", () => {
  it('reads embed, dims and fields as LangGraph does; other store keys are ignored', () => {
    expect(parse(undefined).storeIndex).toBeNull();
    expect(parse({ ttl: { default_ttl: 5 } }).storeIndex).toBeNull();
    expect(
      parse({ index: { embed: 'openai:text-embedding-3-small', dims: 1536, fields: ['$'] } })
        .storeIndex,
    ).toEqual({ embed: 'openai:text-embedding-3-small', dims: 1536, fields: ['$'] });
    expect(parse({ index: { embed: 'local:m', dims: 8 } }).storeIndex).toEqual({
      embed: 'local:m',
      dims: 8,
    });
  });

  it('names the file and each bad key', () => {
    expect(() => parse({ index: { embed: 'text-embedding-3-small', dims: 0 } })).toThrow(
      /\/app\/langgraph\.json: store\.index\.embed: expected "<provider>:<model>".*; store\.index\.dims: /,
    );
    expect(() => parse({ index: { embed: 'openai:x', dims: 8, fields: [] } })).toThrow(
      /store\.index\.fields: /,
    );
  });
});
