// The LangGraph peer's graph (loaded by the LangGraph API server from this file, as
// `langgraph.json` would name it): the benchmark turn of our agent — the model (ChatOpenAI on the
// fake OpenAI-compatible server, streaming) may call `ls`, the tool node runs it, the model
// answers. Settings come from the environment the bench sets for the server process.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { tool } from '@langchain/core/tools';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';

const workspace = process.env.BENCH_PEER_WORKSPACE;
const baseURL = process.env.BENCH_PEER_MODEL_URL;
if (!workspace || !baseURL)
  throw new Error('BENCH_PEER_WORKSPACE and BENCH_PEER_MODEL_URL must be set');

const ls = tool(
  async ({ path: dir }) => (await readdir(path.resolve(workspace, dir ?? '.'))).join('\n'),
  {
    name: 'ls',
    description: 'List the entries of a directory of the workspace.',
    schema: z.object({ path: z.string().optional() }),
  },
);

const model = new ChatOpenAI({
  model: process.env.BENCH_PEER_MODEL ?? 'bench-model',
  apiKey: 'bench',
  streaming: true,
  configuration: { baseURL },
}).bindTools([ls]);

export const graph = new StateGraph(MessagesAnnotation)
  .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addNode('tools', new ToolNode([ls]))
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', toolsCondition, ['tools', END])
  .addEdge('tools', 'agent')
  .compile();
