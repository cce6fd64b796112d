import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { MemorySaver } from '@langchain/langgraph';
import type { AgentGraphSteps } from './agent-graph';
import { createAgentGraph } from './agent-graph';

/**
 * Issue 31, found by the chaos run: a run aborted because another node took it over, right after
 * its tool step, ended the graph there (a stopped run goes to END), and that end was
 * checkpointed; the new owner resumed a finished thread and completed the run without ever
 * asking the model for the answer. A lost run's step now fails instead of ending the graph.
 */
describe('issue 31: a step of a run another node owns now is not checkpointed as its end', () => {
  it('fails the tool step instead of ending the run when the run is disowned', async () => {
    let lost = false;
    let modelCalls = 0;
    let toolSteps = 0;
    const steps: AgentGraphSteps = {
      callModel: () => {
        modelCalls += 1;
        return Promise.resolve({
          message:
            modelCalls === 1
              ? new AIMessage({
                  content: '',
                  tool_calls: [{ id: 'call_1', name: 'write_file', args: {} }],
                })
              : new AIMessage('the answer'),
        });
      },
      callsToDecide: () => [],
      runTools: () => {
        lost = toolSteps === 0; // the lease is lost while the first tool step runs
        toolSteps += 1;
        return Promise.resolve({
          messages: [new ToolMessage({ tool_call_id: 'call_1', content: 'done' })],
        });
      },
      stopped: () => lost,
      checkOwned: () => {
        if (lost) throw new Error('the run is executed by another node now');
      },
      eventMark: () => Promise.resolve(null),
    };
    const saver = new MemorySaver();
    const graph = createAgentGraph(steps, saver);
    const config = { configurable: { thread_id: 't' } };
    await expect(graph.invoke({ messages: [new HumanMessage('go')] }, config)).rejects.toThrow(
      /another node/,
    );
    // The new owner resumes from the last checkpoint: the run goes on to the answer instead of
    // finding it ended after the tool step (before the fix: one model call, no answer).
    lost = false;
    const resumed = await graph.invoke(null, config);
    expect(modelCalls).toBe(2);
    expect(resumed.messages.at(-1)?.content).toBe('the answer');
  });
});
