import type { AgentEventOf, HitlDecision } from '@cognition/client';
import { useState } from 'react';

type Choice = 'approve' | 'edit' | 'reject';
interface Draft {
  choice: Choice;
  args: string;
  message: string;
}

/** The arguments an edit sends, or why the text is not a JSON object. */
export function parseArgs(text: string): { args: Record<string, unknown> } | { problem: string } {
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      return { problem: 'must be a JSON object' };
    return { args: value as Record<string, unknown> };
  } catch (error) {
    return { problem: `not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/**
 * A person's decision on each tool call a paused run waits for (human in the loop): approve it
 * as written, edit its arguments (JSON), or reject it with a message for the model. Only the
 * decisions the agent's `interrupt_on` allows are offered. `problem` is the server's refusal,
 * shown under the form.
 */
export function DecisionForm(props: {
  interrupt: AgentEventOf<'interrupt'>;
  pending: boolean;
  problem: string | null;
  onDecide: (decisions: HitlDecision[]) => void;
}) {
  const calls = props.interrupt.tool_calls;
  const [drafts, setDrafts] = useState<Record<string, Draft>>(() =>
    Object.fromEntries(
      calls.map((c) => [
        c.id,
        { choice: 'approve', args: JSON.stringify(c.args, null, 2), message: '' },
      ]),
    ),
  );
  const [argProblems, setArgProblems] = useState<Record<string, string>>({});
  const update = (id: string, patch: Partial<Draft>) =>
    setDrafts((d) => ({ ...d, [id]: { ...(d[id] as Draft), ...patch } }));

  const submit = () => {
    const decisions: HitlDecision[] = [];
    const problems: Record<string, string> = {};
    for (const call of calls) {
      const draft = drafts[call.id] as Draft;
      if (draft.choice === 'approve') decisions.push({ tool_call_id: call.id, type: 'approve' });
      if (draft.choice === 'reject')
        decisions.push({
          tool_call_id: call.id,
          type: 'reject',
          ...(draft.message.trim() !== '' ? { message: draft.message.trim() } : {}),
        });
      if (draft.choice === 'edit') {
        const parsed = parseArgs(draft.args);
        if ('problem' in parsed) problems[call.id] = parsed.problem;
        else decisions.push({ tool_call_id: call.id, type: 'edit', args: parsed.args });
      }
    }
    setArgProblems(problems);
    if (Object.keys(problems).length === 0) props.onDecide(decisions);
  };

  return (
    <form
      className="decision"
      aria-label="Decision"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      {calls.map((call) => {
        const draft = drafts[call.id] as Draft;
        const allowed = (['approve', 'edit', 'reject'] as const).filter((c) =>
          call.allowed.includes(c),
        );
        const argsId = `args-${call.id}`;
        return (
          <fieldset key={call.id}>
            <legend>
              The agent wants to run <code>{call.name}</code>
            </legend>
            <div role="radiogroup" aria-label={`Decision on ${call.name}`} className="choices">
              {allowed.map((choice) => (
                <label key={choice}>
                  <input
                    type="radio"
                    name={`choice-${call.id}`}
                    value={choice}
                    checked={draft.choice === choice}
                    onChange={() => update(call.id, { choice })}
                  />
                  {choice === 'approve' ? 'Approve' : choice === 'edit' ? 'Edit' : 'Reject'}
                </label>
              ))}
            </div>
            <label htmlFor={argsId}>Arguments (JSON)</label>
            <textarea
              id={argsId}
              rows={4}
              value={draft.args}
              readOnly={draft.choice !== 'edit'}
              aria-invalid={argProblems[call.id] !== undefined}
              aria-describedby={argProblems[call.id] ? `${argsId}-problem` : undefined}
              onChange={(e) => update(call.id, { args: e.target.value })}
            />
            {argProblems[call.id] && (
              <p id={`${argsId}-problem`} className="error-text" role="alert">
                Arguments {argProblems[call.id]}
              </p>
            )}
            {draft.choice === 'reject' && (
              <label>
                Message to the model (optional)
                <input
                  value={draft.message}
                  onChange={(e) => update(call.id, { message: e.target.value })}
                />
              </label>
            )}
          </fieldset>
        );
      })}
      <button type="submit" disabled={props.pending}>
        Send decision
      </button>
      {props.problem && (
        <p className="state error" role="alert">
          {props.problem}
        </p>
      )}
    </form>
  );
}
