import { Button, Card, Checkbox, Flex, Text } from '@radix-ui/themes';
import type { ProviderView } from '@cognition/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '../../trpc';
import { FieldProblem, SelectField } from '../common/ui';
import { list } from './agent-form';
import { FormField, FormOutcome, placeIssues } from './form-field';

const KINDS = ['openai', 'anthropic', 'openai_compatible'] as const;
const FIELDS = ['id', 'kind', 'model', 'models', 'baseUrl', 'apiKey', 'priority'] as const;
type Field = (typeof FIELDS)[number];
type Values = Record<Field, string> & { enabled: boolean };

const EMPTY: Values = {
  id: '',
  kind: 'openai_compatible',
  model: '',
  models: '',
  baseUrl: '',
  apiKey: '',
  priority: '',
  enabled: true,
};

const valuesOf = (p: ProviderView): Values => ({
  id: p.id,
  kind: p.kind,
  model: p.model,
  models: p.models.filter((m) => m !== p.model).join(', '),
  baseUrl: p.baseUrl ?? '',
  apiKey: '',
  priority: String(p.priority),
  enabled: p.enabled,
});

/**
 * The provider document the form sends (camelCase, as in the providers file). An update replaces
 * the document, so the settings the form does not show come from the stored provider; an empty
 * API key is left out, which keeps the stored one (the key is write-only: the page never has it).
 * A priority that is not a number is sent as typed, for the server to refuse on its field.
 */
export function providerDocument(
  values: Values,
  stored: ProviderView | null,
): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  if (stored) {
    doc['maxRetries'] = stored.maxRetries;
    doc['timeoutMs'] = stored.timeoutMs;
    if (stored.temperature !== null) doc['temperature'] = stored.temperature;
    if (stored.maxTokens !== null) doc['maxTokens'] = stored.maxTokens;
  }
  doc['id'] = values.id.trim();
  doc['kind'] = values.kind;
  doc['model'] = values.model.trim();
  doc['enabled'] = values.enabled;
  const models = list(values.models);
  if (models.length > 0) doc['models'] = models;
  if (values.baseUrl.trim() !== '') doc['baseUrl'] = values.baseUrl.trim();
  if (values.apiKey !== '') doc['apiKey'] = values.apiKey;
  const priority = values.priority.trim();
  if (priority !== '') doc['priority'] = /^-?\d+$/.test(priority) ? Number(priority) : priority;
  return doc;
}

/** The form for one provider: a new one (`providers.create`) or a registry one (`.update`). */
function ProviderFields({ stored }: { stored: ProviderView | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [values, setValues] = useState<Values>(stored ? valuesOf(stored) : EMPTY);
  const saved = {
    onSuccess: () => queryClient.invalidateQueries(trpc.providers.list.queryFilter()),
  };
  const create = useMutation(trpc.providers.create.mutationOptions(saved));
  const update = useMutation(trpc.providers.update.mutationOptions(saved));
  const save = stored ? update : create;
  const placed = save.isError ? placeIssues(save.error, FIELDS) : null;
  const field = (name: Field, label: string, type?: 'password') => (
    <FormField
      id={`provider-${name}`}
      label={label}
      value={values[name]}
      problems={placed?.of(name) ?? []}
      onChange={(value) => setValues({ ...values, [name]: value })}
      {...(type ? { type } : {})}
    />
  );
  const kindProblems = placed?.of('kind') ?? [];
  const submit = () => {
    const doc = providerDocument(values, stored);
    if (stored) {
      const expected = stored.version === null ? {} : { expectedVersion: stored.version };
      update.mutate({ ...doc, id: stored.id, ...expected });
    } else create.mutate(doc);
  };
  return (
    <form
      aria-label={stored ? `Edit provider ${stored.id}` : 'Add a provider'}
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <Flex direction="column" gap="3" mt="3" style={{ maxWidth: '40rem' }}>
        {stored === null && field('id', 'Id')}
        <SelectField
          id="provider-kind"
          label="Kind"
          value={values.kind}
          options={KINDS.map((kind) => ({ value: kind, label: kind }))}
          invalid={kindProblems.length > 0}
          {...(kindProblems.length > 0 ? { describedBy: 'provider-kind-problem' } : {})}
          onChange={(kind) => setValues({ ...values, kind })}
        />
        {kindProblems.length > 0 && (
          <FieldProblem id="provider-kind-problem">{kindProblems.join('; ')}</FieldProblem>
        )}
        {field('model', 'Default model')}
        {field('models', 'Other models (comma-separated)')}
        {field('baseUrl', 'Base URL (required for openai_compatible)')}
        {field(
          'apiKey',
          stored?.apiKeySet ? 'API key (empty: keep the stored one)' : 'API key',
          'password',
        )}
        {field('priority', 'Priority (lower wins; empty: 100)')}
        <Text as="label" size="2">
          <Flex gap="2" align="center">
            <Checkbox
              checked={values.enabled}
              onCheckedChange={(checked) => setValues({ ...values, enabled: checked === true })}
            />
            Enabled
          </Flex>
        </Text>
        <Flex>
          <Button type="submit" disabled={save.isPending}>
            {stored ? 'Save provider' : 'Add provider'}
          </Button>
        </Flex>
        <FormOutcome
          error={save.error}
          placed={placed}
          success={
            save.data
              ? `${stored ? 'Saved' : 'Added'} ${save.data.id} (version ${save.data.version}).`
              : null
          }
        />
      </Flex>
    </form>
  );
}

/**
 * Adds an LLM provider to the registry or edits one of it (an admin key). The server validates it
 * with the providers file's schema (an `openai_compatible` one needs a base URL, the others an
 * API key); each refused field's message shows next to the field. Providers of the server's file
 * or environment are its own: only registry (`api`) providers can be edited.
 */
export function ProviderForm() {
  const trpc = useTRPC();
  const providers = useQuery(trpc.providers.list.queryOptions());
  const editable = (providers.data ?? []).filter((p) => !p.readOnly);
  const [chosen, setChosen] = useState('');
  const stored = editable.find((p) => p.id === chosen) ?? null;
  return (
    <Card asChild mt="4">
      <details className="agent-form">
        <summary>
          <Text weight="bold">Add or edit a provider (admin key)</Text>
        </summary>
        <Flex mt="3" style={{ maxWidth: '40rem' }} direction="column">
          <SelectField
            id="provider-choice"
            label="Provider"
            value={chosen}
            options={[
              { value: '', label: 'A new provider' },
              ...editable.map((p) => ({ value: p.id, label: `${p.id} (api v${p.version})` })),
            ]}
            onChange={setChosen}
          />
        </Flex>
        {/* Keyed by the entry, not its version: a save bumps it, and the saved form stays. */}
        <ProviderFields key={stored?.id ?? ''} stored={stored} />
      </details>
    </Card>
  );
}
