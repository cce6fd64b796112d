import { Callout, Flex, Text, TextArea, TextField } from '@radix-ui/themes';
import { errorMessage } from '../../trpc';
import { ErrorCallout, FieldProblem } from '../common/ui';

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

/**
 * A refused call's issues placed on a form's fields: `tools.2` or `interrupt_on.exec` belong to
 * their field (the path's first segment); the others go under the form.
 */
export function placeIssues<F extends string>(error: unknown, fields: readonly F[]) {
  const issues = fieldIssues(error);
  const head = (path: string) => path.split(/[.[]/)[0] ?? '';
  return {
    any: issues.length > 0,
    of: (field: F) => issues.filter((i) => head(i.path) === field).map((i) => i.message),
    unplaced: issues.filter((i) => !(fields as readonly string[]).includes(head(i.path))),
  };
}

/** A labelled input whose server-side problems show right under it (and mark it invalid). */
export function FormField(props: {
  id: string;
  label: string;
  value: string;
  problems: string[];
  onChange: (value: string) => void;
  multiline?: boolean;
  type?: 'text' | 'password' | 'number';
}) {
  const invalid = props.problems.length > 0;
  const common = {
    id: props.id,
    value: props.value,
    'aria-invalid': invalid,
    'aria-describedby': invalid ? `${props.id}-problem` : undefined,
  };
  return (
    <Flex direction="column" gap="1" className="field">
      <Text as="label" htmlFor={props.id} size="2" weight="medium">
        {props.label}
      </Text>
      {props.multiline ? (
        <TextArea
          {...common}
          rows={4}
          color={invalid ? 'red' : undefined}
          onChange={(e) => props.onChange(e.target.value)}
        />
      ) : (
        <TextField.Root
          {...common}
          type={props.type ?? 'text'}
          color={invalid ? 'red' : undefined}
          onChange={(e) => props.onChange(e.target.value)}
        />
      )}
      {invalid && (
        <FieldProblem id={`${props.id}-problem`}>{props.problems.join('; ')}</FieldProblem>
      )}
    </Flex>
  );
}

/** Under a form: the refusal (its text, or a pointer to the fields' messages) or the success. */
export function FormOutcome(props: {
  error: unknown;
  placed: { any: boolean; unplaced: unknown[] } | null;
  success: string | null;
}) {
  if (props.placed !== null) {
    return (
      <ErrorCallout>
        {props.placed.unplaced.length > 0 || !props.placed.any
          ? errorMessage(props.error)
          : 'Some fields were refused: see the messages next to them.'}
      </ErrorCallout>
    );
  }
  return props.success === null ? null : (
    <Callout.Root highContrast color="green" size="1" role="status" className="state">
      <Callout.Text>{props.success}</Callout.Text>
    </Callout.Root>
  );
}
