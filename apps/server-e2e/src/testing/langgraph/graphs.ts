// The user graphs of the LangGraph API specs (issue 28), loaded by the built server from the
// langgraph.json beside this file.
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';

const State = Annotation.Root({ text: Annotation<string> });

/** One node that echoes its input. */
export const echo = new StateGraph(State)
  .addNode('echo', (state: typeof State.State) => ({ text: `echo: ${state.text}` }))
  .addEdge(START, 'echo')
  .addEdge('echo', END)
  .compile();
