import { Button, Card, Flex, Heading, Text, TextArea } from '@radix-ui/themes';
import type { AgentEventEnvelope, HitlDecision } from '@cognition/client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useSubscription } from '@trpc/tanstack-react-query';
import { useEffect, useReducer, useState } from 'react';
import { QueryView } from '../components/common/states';
import { ErrorCallout, SelectField } from '../components/common/ui';
import { DecisionForm } from '../components/playground/decision-form';
import { newTurn, turnReducer } from '../components/playground/turn-state';
import type { TurnState } from '../components/playground/turn-state';
import { TurnView } from '../components/playground/turn-view';
import { hrefOf } from '../route';
import { errorMessage, useTRPC } from '../trpc';

type Action =
  | { type: 'start'; runId: string; content: string }
  | { type: 'event'; envelope: AgentEventEnvelope }
  | { type: 'reset' };

function turnsReducer(turns: TurnState[], action: Action): TurnState[] {
  switch (action.type) {
    case 'start':
      return [...turns, newTurn(action.runId, action.content)];
    case 'event':
      return turns.map((t) =>
        t.runId === action.envelope.runId ? turnReducer(t, action.envelope) : t,
      );
    case 'reset':
      return [];
  }
}

/** Where the page follows a run's events from: its start, or after a decision's `interrupt`. */
interface Follow {
  runId: string;
  lastEventId: string | null;
}

/** The run's events as they happen (`runs.events`); resumes a dropped connection by itself. */
function RunFollower(props: { sessionId: string; follow: Follow; onEvent: (a: Action) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  useSubscription(
    trpc.runs.events.subscriptionOptions(
      {
        sessionId: props.sessionId,
        runId: props.follow.runId,
        ...(props.follow.lastEventId ? { lastEventId: props.follow.lastEventId } : {}),
      },
      {
        onData: (tracked) => {
          props.onEvent({ type: 'event', envelope: tracked.data });
          const { type } = tracked.data.event;
          if (type === 'done' || type === 'error') void queryClient.invalidateQueries();
        },
      },
    ),
  );
  return null;
}

/**
 * The clock open timeline spans grow to, ticking while `ticking`: epoch milliseconds, like the
 * events' `at` (a browser clock off the server's shifts only the still open span's end).
 */
function useNow(ticking: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!ticking) return;
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [ticking]);
  return ticking ? now : Date.now();
}

/**
 * Chat with any agent in force (built-in, file or registry): the first message creates a
 * session for it, each turn streams its answer and tool calls, a run paused for a decision is
 * approved, edited or rejected here, a running or paused run can be aborted, and each turn has
 * its run timeline.
 */
export function PlaygroundPage() {
  const trpc = useTRPC();
  const agents = useQuery(trpc.agents.list.queryOptions());
  const [agentName, setAgentName] = useState<string | null>(null);
  const [sessionId, setSessionId] = useState<string | null>(null);
  const [turns, dispatch] = useReducer(turnsReducer, []);
  const [follow, setFollow] = useState<Follow | null>(null);
  const [draft, setDraft] = useState('');
  const createSession = useMutation(trpc.sessions.create.mutationOptions());
  const send = useMutation(trpc.messages.send.mutationOptions());
  const resume = useMutation(trpc.runs.resume.mutationOptions());
  const abort = useMutation(trpc.runs.abort.mutationOptions());

  const current = turns.at(-1) ?? null;
  const running = current !== null && current.outcome === null;
  const paused = current?.interrupt ? current : null;
  // Open spans (a call, the wait for a decision) grow while the run goes on or waits.
  const now = useNow(running || paused !== null);
  const chosen = agentName ?? agents.data?.[0]?.name ?? null;

  const submit = async () => {
    const content = draft.trim();
    if (content === '' || chosen === null) return;
    const id =
      sessionId ??
      (await createSession.mutateAsync({ agentName: chosen, title: `Playground: ${chosen}` })).id;
    setSessionId(id);
    const { run } = await send.mutateAsync({ sessionId: id, content });
    setDraft('');
    dispatch({ type: 'start', runId: run.id, content });
    setFollow({ runId: run.id, lastEventId: null });
  };
  const decide = async (decisions: HitlDecision[]) => {
    if (!paused || sessionId === null) return;
    const result = await resume.mutateAsync({ sessionId, runId: paused.runId, decisions });
    // Its events go on after the `interrupt` (the resume's `lastEventId`).
    setFollow({
      runId: paused.runId,
      lastEventId: result.lastEventId ?? paused.interrupt?.eventId ?? null,
    });
  };
  const stop = async () => {
    if (sessionId === null || current === null) return;
    await abort.mutateAsync({ sessionId });
    // A paused run's stream ended at its `interrupt`: follow it again for the abort's events.
    if (current.interrupt)
      setFollow({ runId: current.runId, lastEventId: current.interrupt.eventId });
  };
  const newConversation = (name: string | null) => {
    setAgentName(name);
    setSessionId(null);
    setFollow(null);
    dispatch({ type: 'reset' });
  };
  const failure = [createSession, send].find((m) => m.isError)?.error;

  return (
    <section aria-labelledby="playground-title" className="playground">
      <Heading as="h1" id="playground-title" size="6">
        Playground
      </Heading>
      <QueryView
        query={agents}
        loading="Loading agents"
        isEmpty={(d) => d.length === 0}
        empty="No agent is configured."
      >
        {(list) => (
          <Flex className="filters" gap="3" wrap="wrap" align="end" mb="3">
            <SelectField
              id="playground-agent"
              label="Agent"
              value={chosen ?? ''}
              options={list.map((a) => ({
                value: a.name,
                label: `${a.name} (${a.source}${a.version !== null ? ` v${a.version}` : ''})`,
              }))}
              onChange={(name) => newConversation(name)}
            />
            {sessionId && (
              <>
                <Button asChild variant="soft">
                  <a href={hrefOf({ page: 'session', id: sessionId })}>Open the session</a>
                </Button>
                <Button
                  type="button"
                  variant="soft"
                  color="gray"
                  onClick={() => newConversation(chosen)}
                  disabled={running}
                >
                  New conversation
                </Button>
              </>
            )}
          </Flex>
        )}
      </QueryView>
      {sessionId && follow && (
        <RunFollower
          key={`${follow.runId}:${follow.lastEventId ?? ''}`}
          sessionId={sessionId}
          follow={follow}
          onEvent={dispatch}
        />
      )}
      <ol className="turns" aria-label="Conversation">
        {turns.map((turn) => (
          <TurnView key={turn.runId} turn={turn} now={now}>
            {turn === paused && paused.interrupt && (
              <DecisionForm
                key={paused.interrupt.eventId}
                interrupt={paused.interrupt.event}
                pending={resume.isPending}
                problem={resume.isError ? errorMessage(resume.error) : null}
                onDecide={(d) => void decide(d).catch(() => undefined)}
              />
            )}
            {turn === current && (running || paused) && (
              <Button
                type="button"
                color="red"
                variant="soft"
                mt="2"
                onClick={() => void stop().catch(() => undefined)}
                disabled={abort.isPending}
              >
                Abort run
              </Button>
            )}
          </TurnView>
        ))}
      </ol>
      {abort.isError && <ErrorCallout>{errorMessage(abort.error)}</ErrorCallout>}
      <Card asChild className="composer">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void submit().catch(() => undefined);
          }}
        >
          <Flex direction="column" gap="2">
            <Text as="label" htmlFor="playground-message" size="2" weight="medium">
              Message
            </Text>
            <TextArea
              id="playground-message"
              placeholder="Ask the agent something"
              rows={3}
              value={draft}
              onChange={(e) => setDraft(e.target.value)}
              aria-invalid={failure !== undefined}
              aria-describedby={failure ? 'playground-problem' : undefined}
            />
            <Flex>
              <Button
                type="submit"
                disabled={running || paused !== null || send.isPending || chosen === null}
              >
                Send
              </Button>
            </Flex>
            {failure && (
              <ErrorCallout id="playground-problem">{errorMessage(failure)}</ErrorCallout>
            )}
          </Flex>
        </form>
      </Card>
    </section>
  );
}
