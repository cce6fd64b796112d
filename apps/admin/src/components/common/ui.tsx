import { Badge, Button, Callout, Flex, Select, Table, Text, TextField } from '@radix-ui/themes';
import type { ReactNode } from 'react';
import { useEffect, useState } from 'react';

/**
 * The dashboard's building blocks on Radix Themes (`@radix-ui/themes`): a status badge, a table,
 * a labelled select, a labelled field with the server's message under it, and the error callout.
 * Class names the browser tests look for (`badge <status>`, `error-text`) are kept on them.
 */

type BadgeColor = 'green' | 'red' | 'amber' | 'blue' | 'gray';

const GOOD = new Set(['active', 'completed', 'healthy', 'CLOSED', 'ok', 'enabled']);
const BAD = new Set(['failed', 'error', 'degraded', 'OPEN', 'aborted', 'interrupted', 'down']);
const WAITING = new Set([
  'suspended',
  'abandoned',
  'waiting for a decision',
  'HALF_OPEN',
  'disabled',
]);
const MOVING = new Set(['running', 'queued', 'streaming', 'thinking', 'calling a tool']);

/** The color a status reads in, the same on every page. */
export function statusColor(status: string): BadgeColor {
  if (GOOD.has(status)) return 'green';
  if (BAD.has(status)) return 'red';
  if (WAITING.has(status) || status.startsWith('⏸')) return 'amber';
  if (MOVING.has(status)) return 'blue';
  return 'gray';
}

/** A status as a colored badge (`.badge.<status>`, which the browser tests find). */
export function StatusBadge({ status, label }: { status: string; label?: string }) {
  return (
    // High contrast: the soft variant's own text color misses WCAG AA on the light green and blue.
    <Badge
      className={`badge ${status}`}
      color={statusColor(status)}
      variant="soft"
      radius="full"
      highContrast
    >
      {label ?? status}
    </Badge>
  );
}

/**
 * Makes a table's scroll box (Radix's scroll area viewport) reachable with the keyboard while
 * its table is wider than the box, so a keyboard user can scroll it (axe:
 * scrollable-region-focusable); a table that fits is no extra tab stop.
 */
function useKeyboardScroll(root: HTMLDivElement | null) {
  useEffect(() => {
    const viewport = root?.querySelector<HTMLElement>('.rt-ScrollAreaViewport');
    if (!viewport) return;
    const update = () => {
      if (viewport.scrollWidth > viewport.clientWidth) viewport.tabIndex = 0;
      else viewport.removeAttribute('tabindex');
    };
    update();
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(update);
    observer.observe(viewport);
    const table = viewport.querySelector('table');
    if (table) observer.observe(table);
    return () => observer.disconnect();
  }, [root]);
}

/** A table in its own horizontally scrolling box, with one column header per name. */
export function DataTable(props: {
  columns: string[];
  children: ReactNode;
  label?: string;
  size?: '1' | '2';
}) {
  const [root, setRoot] = useState<HTMLDivElement | null>(null);
  useKeyboardScroll(root);
  return (
    <Table.Root
      ref={setRoot}
      variant="surface"
      size={props.size ?? '1'}
      className="data-table"
      {...(props.label ? { 'aria-label': props.label } : {})}
    >
      <Table.Header>
        <Table.Row>
          {props.columns.map((name) => (
            <Table.ColumnHeaderCell key={name} scope="col">
              {name}
            </Table.ColumnHeaderCell>
          ))}
        </Table.Row>
      </Table.Header>
      <Table.Body>{props.children}</Table.Body>
    </Table.Root>
  );
}

/** Radix Select items cannot have an empty value: '' (any, new) travels as this one. */
const NONE = '__none__';

/**
 * A labelled select (Radix Select: a button with the `combobox` role, named by its label, and a
 * listbox of options). `''` is a valid value (an "any" or "new" choice).
 */
export function SelectField<V extends string>(props: {
  id: string;
  label: ReactNode;
  value: V;
  options: readonly { value: V; label: string }[];
  onChange: (value: V) => void;
  name?: string;
  invalid?: boolean;
  describedBy?: string;
}) {
  return (
    <Flex direction="column" gap="1" className="field">
      <Text as="label" htmlFor={props.id} size="2" weight="medium">
        {props.label}
      </Text>
      <Select.Root
        value={props.value === '' ? NONE : props.value}
        onValueChange={(value) => props.onChange((value === NONE ? '' : value) as V)}
        {...(props.name ? { name: props.name } : {})}
      >
        <Select.Trigger
          id={props.id}
          aria-invalid={props.invalid || undefined}
          aria-describedby={props.describedBy}
        />
        <Select.Content position="popper">
          {props.options.map((option) => (
            <Select.Item key={option.value} value={option.value === '' ? NONE : option.value}>
              {option.label}
            </Select.Item>
          ))}
        </Select.Content>
      </Select.Root>
    </Flex>
  );
}

/** A refused call or a failed load: a red callout the screen reader announces. */
export function ErrorCallout({ children, id }: { children: ReactNode; id?: string }) {
  return (
    <Callout.Root color="red" role="alert" size="1" className="state error" id={id}>
      <Callout.Text>{children}</Callout.Text>
    </Callout.Root>
  );
}

/** A field's own problem, right under it (referenced by the field's `aria-describedby`). */
export function FieldProblem({ id, children }: { id: string; children: ReactNode }) {
  return (
    <Text as="p" id={id} size="2" color="red" className="error-text">
      {children}
    </Text>
  );
}

/** A labelled one-line text field (Radix TextField; the label names the input). */
export function InputField(props: {
  id: string;
  label: ReactNode;
  value: string;
  onChange: (value: string) => void;
  name?: string;
  placeholder?: string;
}) {
  return (
    <Flex direction="column" gap="1" className="field">
      <Text as="label" htmlFor={props.id} size="2" weight="medium">
        {props.label}
      </Text>
      <TextField.Root
        id={props.id}
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
        {...(props.name ? { name: props.name } : {})}
        {...(props.placeholder ? { placeholder: props.placeholder } : {})}
      />
    </Flex>
  );
}

/** Previous / Next over a server-paged list, with where the page is. */
export function Pager(props: {
  label: string;
  offset: number;
  shown: number;
  total: number;
  pageSize: number;
  onOffset: (offset: number) => void;
}) {
  return (
    <Flex asChild align="center" gap="3" mt="3">
      <nav aria-label={props.label}>
        <Button
          type="button"
          variant="soft"
          disabled={props.offset === 0}
          onClick={() => props.onOffset(Math.max(0, props.offset - props.pageSize))}
        >
          Previous
        </Button>
        <Text size="2">
          {props.offset + 1}–{props.offset + props.shown} of {props.total}
        </Text>
        <Button
          type="button"
          variant="soft"
          disabled={props.offset + props.pageSize >= props.total}
          onClick={() => props.onOffset(props.offset + props.pageSize)}
        >
          Next
        </Button>
      </nav>
    </Flex>
  );
}
