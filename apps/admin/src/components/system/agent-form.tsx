import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { errorMessage, useTRPC } from '../../trpc';

/** The server's field issues of a refused call (`data.errors`: `{path, message}`), if any. */
export function fieldIssues(error: unknown): { path: string; message: string }[] {
  const errors = (error as { data?: { errors?: unknown } } | null)?.data?.errors;
  return Array.isArray(errors)
    ? errors.filter(
        (e): e is { path: string; message: string } =>
          typeof e === 'object' &&
          e !== null &&
          typeof (e as { path?: unknown }).path === 'string' &&
          typeof (e as { message?: unknown }).message === 'string',
      )
    : [];
}

const FIELDS = ['name', 'description', 'model', 'tools', 'interrupt_on', 'system_prompt'] as const;
type Field = (typeof FIELDS)[number];

/** A comma-separated list as the definition's array (blanks dropped). */
const list = (text: string) =>
  text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

/**
 * Adds an agent to the registry (`agents.create`, an admin key): name, description, model,
 * tools, the tools it asks a person before (every decision allowed) and its system prompt.
 * The server validates it like an agent file; each refused field's message shows next to the
 * field, anything else (no admin key, a name taken) under the form.
 */
export function AgentForm() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [values, setValues] = useState<Record<Field, string>>({
    name: '',
    description: '',
    model: '',
    tools: '',
    interrupt_on: '',
    system_prompt: '',
  });
  const create = useMutation(
    trpc.agents.create.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries(trpc.agents.list.queryFilter()),
    }),
  );
  const issues = create.isError ? fieldIssues(create.error) : [];
  // `tools.2` or `interrupt_on.exec` belong to their field; other paths go under the form.
  const issueOf = (field: Field) =>
    issues.filter((i) => i.path.split(/[.[]/)[0] === field).map((i) => i.message);
  const unplaced = issues.filter((i) => !FIELDS.includes(i.path.split(/[.[]/)[0] as Field));

  const submit = () => {
    const definition: Record<string, unknown> = {
      name: values.name.trim(),
      description: values.description.trim(),
      tools: list(values.tools),
      system_prompt: values.system_prompt,
    };
    if (values.model.trim() !== '') definition['model'] = values.model.trim();
    const asked = list(values.interrupt_on);
    if (asked.length > 0)
      definition['interrupt_on'] = Object.fromEntries(asked.map((t) => [t, true]));
    create.mutate(definition);
  };

  const input = (field: Field, label: string, multiline = false) => {
    const id = `agent-${field}`;
    const problems = issueOf(field);
    const common = {
      id,
      value: values[field],
      'aria-invalid': problems.length > 0,
      'aria-describedby': problems.length > 0 ? `${id}-problem` : undefined,
    };
    return (
      <div className="field">
        <label htmlFor={id}>{label}</label>
        {multiline ? (
          <textarea
            {...common}
            rows={4}
            onChange={(e) => setValues({ ...values, [field]: e.target.value })}
          />
        ) : (
          <input {...common} onChange={(e) => setValues({ ...values, [field]: e.target.value })} />
        )}
        {problems.length > 0 && (
          <p id={`${id}-problem`} className="error-text">
            {problems.join('; ')}
          </p>
        )}
      </div>
    );
  };

  return (
    <details className="agent-form">
      <summary>Add an agent (admin key)</summary>
      <form
        aria-label="Add an agent"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        {input('name', 'Name')}
        {input('description', 'Description')}
        {input('model', 'Model (empty: the default provider’s)')}
        {input('tools', 'Tools (comma-separated)')}
        {input('interrupt_on', 'Ask a person before (tools, comma-separated)')}
        {input('system_prompt', 'System prompt', true)}
        <button type="submit" disabled={create.isPending}>
          Add agent
        </button>
        {create.isError && (
          <p className="state error" role="alert">
            {unplaced.length > 0 || issues.length === 0
              ? errorMessage(create.error)
              : 'Some fields were refused: see the messages next to them.'}
          </p>
        )}
        {create.isSuccess && (
          <p className="state" role="status">
            Added {create.data.name} (version {create.data.version}).
          </p>
        )}
      </form>
    </details>
  );
}
