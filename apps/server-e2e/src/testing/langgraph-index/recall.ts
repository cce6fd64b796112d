// The user graph of the store's semantic index spec (issue 28), loaded by the built server from
// the langgraph.json beside this file (which configures `store.index`).
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { LangGraphRunnableConfig } from '@langchain/langgraph';

const State = Annotation.Root({
  text: Annotation<string>,
  found: Annotation<string | null>,
  score: Annotation<number | null>,
});

/**
 * Semantic recall through the run's store: answers the note under `["memories"]` closest to the
 * input (`config.store.search(ns, { query })`), with its score.
 */
export const recall = new StateGraph(State)
  .addNode('recall', async (state: typeof State.State, config: LangGraphRunnableConfig) => {
    const store = config.store;
    if (!store) throw new Error('the run has no store');
    const [best] = await store.search(['memories'], { query: state.text, limit: 1 });
    return {
      found: best ? String(best.value['text']) : null,
      score: best?.score ?? null,
    };
  })
  .addEdge(START, 'recall')
  .addEdge('recall', END)
  .compile();
