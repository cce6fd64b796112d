import { createCognitionClient, streamMessage } from '@cognition/client';
import type { AgentEvent } from '@cognition/client';
import type { FormEvent } from 'react';
import { useRef, useState } from 'react';

// The page talks to its own origin; Vite's dev and preview servers proxy /trpc to the Cognition
// server (vite.config.ts). Served otherwise, point this at the server and list the page's origin
// in the server's COGNITION_CORS_ORIGINS.
const cognition = createCognitionClient({ url: new URL('/trpc', window.location.href).href });

interface ToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  output?: string;
}

interface Turn {
  role: 'user' | 'assistant';
  text: string;
  tools: ToolCall[];
  /** For the assistant: streaming until the run's terminal event. */
  state: 'streaming' | 'done' | 'error';
  note?: string;
}

/** The assistant turn after one more event of its run. */
function apply(turn: Turn, event: AgentEvent): Turn {
  switch (event.type) {
    case 'token':
      return { ...turn, text: turn.text + event.content };
    case 'tool_call':
      return {
        ...turn,
        tools: [...turn.tools, { id: event.id, name: event.name, args: event.args }],
      };
    case 'tool_result':
      return {
        ...turn,
        tools: turn.tools.map((tool) =>
          tool.id === event.tool_call_id ? { ...tool, output: event.output } : tool,
        ),
      };
    case 'interrupt':
      return { ...turn, state: 'done', note: 'Paused: the agent waits for a tool approval.' };
    case 'error':
      return { ...turn, state: 'error', note: `${event.code}: ${event.message}` };
    case 'done':
      return { ...turn, state: 'done' };
    default:
      return turn;
  }
}

export function App() {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [draft, setDraft] = useState('');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const sessionId = useRef<string | null>(null);

  const updateLast = (change: (turn: Turn) => Turn) =>
    setTurns((all) => [...all.slice(0, -1), change(all[all.length - 1]!)]);

  async function send(event: FormEvent) {
    event.preventDefault();
    const content = draft.trim();
    if (!content || busy) return;
    setDraft('');
    setBusy(true);
    setFailure(null);
    setTurns((all) => [
      ...all,
      { role: 'user', text: content, tools: [], state: 'done' },
      { role: 'assistant', text: '', tools: [], state: 'streaming' },
    ]);
    try {
      sessionId.current ??= (
        await cognition.sessions.create.mutate({ title: 'React chat example' })
      ).id;
      for await (const { event: agentEvent } of streamMessage(cognition, {
        sessionId: sessionId.current,
        content,
      })) {
        updateLast((turn) => apply(turn, agentEvent));
      }
    } catch (error) {
      setFailure(error instanceof Error ? error.message : String(error));
      updateLast((turn) => ({ ...turn, state: 'error' }));
    } finally {
      setBusy(false);
    }
  }

  async function stop() {
    if (sessionId.current) await cognition.runs.abort.mutate({ sessionId: sessionId.current });
  }

  return (
    <main>
      <h1>Cognition chat</h1>
      <ol className="conversation" aria-label="Conversation" aria-live="polite">
        {turns.map((turn, index) => (
          <li key={index} className={turn.role} data-state={turn.state}>
            {turn.tools.map((tool) => (
              <details key={tool.id}>
                <summary>Tool: {tool.name}</summary>
                <pre>{JSON.stringify(tool.args, null, 2)}</pre>
                {tool.output !== undefined && <pre>{tool.output}</pre>}
              </details>
            ))}
            <p className="text">{turn.text || (turn.state === 'streaming' ? '…' : '')}</p>
            {turn.note && <p className="note">{turn.note}</p>}
          </li>
        ))}
      </ol>
      {failure && <p role="alert">{failure}</p>}
      <form onSubmit={(event) => void send(event)}>
        <label htmlFor="message">Message</label>
        <input
          id="message"
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
          placeholder="Ask the agent something"
          autoComplete="off"
        />
        {busy ? (
          <button type="button" onClick={() => void stop()}>
            Stop
          </button>
        ) : (
          <button type="submit">Send</button>
        )}
      </form>
    </main>
  );
}
