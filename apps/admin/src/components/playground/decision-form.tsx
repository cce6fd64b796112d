import { Button, Card, Code, Flex, Radio, Text, TextArea, TextField } from '@radix-ui/themes';
import type { AgentEventOf, HitlDecision } from '@cognition/client';
import { useState } from 'react';
import { ErrorCallout } from '../common/ui';

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
          <Card asChild key={call.id} my="2">
            <fieldset>
              <legend>
                <Text size="2" weight="bold">
                  The agent wants to run <Code>{call.name}</Code>
                </Text>
              </legend>
              <Flex direction="column" gap="2">
                <Flex
                  role="radiogroup"
                  aria-label={`Decision on ${call.name}`}
                  className="choices"
                  gap="4"
                  wrap="wrap"
                >
                  {allowed.map((choice) => (
                    <Text as="label" size="2" key={choice}>
                      <Flex gap="1" align="center">
                        <Radio
                          name={`choice-${call.id}`}
                          value={choice}
                          checked={draft.choice === choice}
                          onChange={() => update(call.id, { choice })}
                        />
                        {choice === 'approve' ? 'Approve' : choice === 'edit' ? 'Edit' : 'Reject'}
                      </Flex>
                    </Text>
                  ))}
                </Flex>
                <Text as="label" htmlFor={argsId} size="2" weight="medium">
                  Arguments (JSON)
                </Text>
                <TextArea
                  id={argsId}
                  rows={4}
                  value={draft.args}
                  readOnly={draft.choice !== 'edit'}
                  variant={draft.choice === 'edit' ? 'surface' : 'soft'}
                  color={draft.choice === 'edit' ? undefined : 'gray'}
                  aria-invalid={argProblems[call.id] !== undefined}
                  aria-describedby={argProblems[call.id] ? `${argsId}-problem` : undefined}
                  onChange={(e) => update(call.id, { args: e.target.value })}
                />
                {argProblems[call.id] && (
                  <Text
                    as="p"
                    id={`${argsId}-problem`}
                    size="2"
                    color="red"
                    className="error-text"
                    role="alert"
                  >
                    Arguments {argProblems[call.id]}
                  </Text>
                )}
                {draft.choice === 'reject' && (
                  <Text as="label" size="2" weight="medium">
                    Message to the model (optional)
                    <TextField.Root
                      value={draft.message}
                      onChange={(e) => update(call.id, { message: e.target.value })}
                    />
                  </Text>
                )}
              </Flex>
            </fieldset>
          </Card>
        );
      })}
      <Button type="submit" disabled={props.pending}>
        Send decision
      </Button>
      {props.problem && <ErrorCallout>{props.problem}</ErrorCallout>}
    </form>
  );
}
