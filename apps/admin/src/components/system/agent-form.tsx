import { Button, Card, Flex, Text } from '@radix-ui/themes';
import type { AgentView } from '@cognition/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '../../trpc';
import { SelectField } from '../common/ui';
import { FormField, FormOutcome, placeIssues } from './form-field';

const FIELDS = ['name', 'description', 'model', 'tools', 'interrupt_on', 'system_prompt'] as const;
type Field = (typeof FIELDS)[number];
type Values = Record<Field, string>;

/** A comma-separated list as the definition's array (blanks dropped). */
export const list = (text: string) =>
  text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

const EMPTY: Values = {
  name: '',
  description: '',
  model: '',
  tools: '',
  interrupt_on: '',
  system_prompt: '',
};

const valuesOf = (agent: AgentView): Values => ({
  name: agent.name,
  description: agent.description,
  model: agent.model ?? '',
  tools: agent.tools.join(', '),
  interrupt_on: Object.keys(agent.interrupt_on).join(', '),
  system_prompt: agent.system_prompt,
});

/** What an answer shows of an MCP server but a definition does not hold (secrets are kept). */
const VIEW_ONLY = new Set(['env_set', 'env_names', 'headers_set', 'header_names']);

/**
 * The definition the form sends. An update replaces the whole definition, so what the form does
 * not show is carried over from the stored agent: mode, temperature, context, skills, exposure,
 * MCP servers (without `env`/`headers`, which the server then keeps) and the decisions of the
 * tools it still asks before; a tool newly asked before allows every decision.
 */
export function definitionOf(values: Values, stored: AgentView | null): Record<string, unknown> {
  const definition: Record<string, unknown> = {};
  if (stored) {
    definition['mode'] = stored.mode;
    definition['expose'] = stored.expose;
    definition['mcp_servers'] = stored.mcp_servers.map((server) =>
      Object.fromEntries(Object.entries(server).filter(([key]) => !VIEW_ONLY.has(key))),
    );
    if (stored.temperature !== null) definition['temperature'] = stored.temperature;
    if (stored.context !== null) definition['context'] = stored.context;
    if (stored.skills !== null) definition['skills'] = stored.skills;
  }
  definition['name'] = values.name.trim();
  definition['description'] = values.description.trim();
  definition['tools'] = list(values.tools);
  definition['system_prompt'] = values.system_prompt;
  if (values.model.trim() !== '') definition['model'] = values.model.trim();
  const asked = list(values.interrupt_on);
  if (asked.length > 0) {
    definition['interrupt_on'] = Object.fromEntries(
      asked.map((tool) => [tool, stored?.interrupt_on[tool] ?? true]),
    );
  }
  return definition;
}

/** The form for one agent: a new one (`agents.create`) or a registry one (`agents.update`). */
function AgentFields({ stored }: { stored: AgentView | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [values, setValues] = useState<Values>(stored ? valuesOf(stored) : EMPTY);
  const saved = { onSuccess: () => queryClient.invalidateQueries(trpc.agents.list.queryFilter()) };
  const create = useMutation(trpc.agents.create.mutationOptions(saved));
  const update = useMutation(trpc.agents.update.mutationOptions(saved));
  const save = stored ? update : create;
  const placed = save.isError ? placeIssues(save.error, FIELDS) : null;
  const field = (name: Field, label: string, multiline = false) => (
    <FormField
      id={`agent-${name}`}
      label={label}
      value={values[name]}
      problems={placed?.of(name) ?? []}
      onChange={(value) => setValues({ ...values, [name]: value })}
      multiline={multiline}
    />
  );
  const submit = () => {
    const definition = definitionOf(values, stored);
    if (stored) {
      const expected = stored.version === null ? {} : { expected_version: stored.version };
      update.mutate({ ...definition, name: stored.name, ...expected });
    } else create.mutate(definition);
  };
  return (
    <form
      aria-label={stored ? `Edit agent ${stored.name}` : 'Add an agent'}
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <Flex direction="column" gap="3" mt="3" style={{ maxWidth: '40rem' }}>
        {stored === null && field('name', 'Name')}
        {field('description', 'Description')}
        {field('model', 'Model (empty: the default provider’s)')}
        {field('tools', 'Tools (comma-separated)')}
        {field('interrupt_on', 'Ask a person before (tools, comma-separated)')}
        {field('system_prompt', 'System prompt', true)}
        <Flex>
          <Button type="submit" disabled={save.isPending}>
            {stored ? 'Save agent' : 'Add agent'}
          </Button>
        </Flex>
        <FormOutcome
          error={save.error}
          placed={placed}
          success={
            save.data
              ? `${stored ? 'Saved' : 'Added'} ${save.data.name} (version ${save.data.version}).`
              : null
          }
        />
      </Flex>
    </form>
  );
}

/**
 * Adds an agent to the registry or edits one of it (an admin key): name, description, model,
 * tools, the tools it asks a person before and its system prompt. The server validates it like an
 * agent file; each refused field's message shows next to the field, anything else (no admin key,
 * a name taken, a version changed meanwhile) under the form. Built-in and file agents are the
 * server's own: only registry (`api`) agents can be edited.
 */
export function AgentForm() {
  const trpc = useTRPC();
  const agents = useQuery(trpc.agents.list.queryOptions());
  const editable = (agents.data ?? []).filter((agent) => !agent.read_only);
  const [chosen, setChosen] = useState('');
  const stored = editable.find((agent) => agent.name === chosen) ?? null;
  return (
    <Card asChild mt="4">
      <details className="agent-form">
        <summary>
          <Text weight="bold">Add or edit an agent (admin key)</Text>
        </summary>
        <Flex mt="3" style={{ maxWidth: '40rem' }} direction="column">
          <SelectField
            id="agent-choice"
            label="Agent"
            value={chosen}
            options={[
              { value: '', label: 'A new agent' },
              ...editable.map((agent) => ({
                value: agent.name,
                label: `${agent.name} (api v${agent.version})`,
              })),
            ]}
            onChange={setChosen}
          />
        </Flex>
        {/* Keyed by the entry, not its version: a save bumps it, and the saved form stays. */}
        <AgentFields key={stored?.name ?? ''} stored={stored} />
      </details>
    </Card>
  );
}
