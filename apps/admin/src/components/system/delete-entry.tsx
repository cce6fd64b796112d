import { AlertDialog, Button, Flex } from '@radix-ui/themes';
import { useState } from 'react';
import { errorCode, errorMessage } from '../../trpc';
import { ErrorCallout } from '../common/ui';

/** What a refused delete says: a version conflict in words, anything else as the server said. */
export function deleteErrorText(what: string, error: unknown): string {
  if (errorCode(error) === 'VERSION_CONFLICT')
    return `Someone changed this ${what} since the page showed it: the list now shows its current version; look at it before deleting it.`;
  return errorMessage(error);
}

/**
 * Deletes a registry entry (agent or provider) after a confirmation: a Delete button opens an
 * alert dialog naming the entry and its version; confirming calls `onDelete` (which carries that
 * version, so a change made meanwhile is refused, not deleted unseen). The dialog stays open on a
 * refusal and shows the server's message; it closes once the entry is gone.
 */
export function DeleteEntry(props: {
  what: 'agent' | 'provider';
  name: string;
  version: number | null;
  pending: boolean;
  error: unknown;
  onDelete: () => Promise<unknown>;
  onReset: () => void;
}) {
  const [open, setOpen] = useState(false);
  const label = `${props.what} ${props.name}`;
  return (
    <AlertDialog.Root
      open={open}
      onOpenChange={(next) => {
        setOpen(next);
        if (!next) props.onReset();
      }}
    >
      <AlertDialog.Trigger>
        <Button
          type="button"
          size="1"
          color="red"
          variant="soft"
          highContrast
          aria-label={`Delete ${label}`}
        >
          Delete
        </Button>
      </AlertDialog.Trigger>
      <AlertDialog.Content maxWidth="30rem">
        <AlertDialog.Title>Delete {label}?</AlertDialog.Title>
        <AlertDialog.Description size="2">
          It is removed from the registry
          {props.version !== null ? ` (version ${props.version})` : ''}. This cannot be undone.
        </AlertDialog.Description>
        {props.error !== null && props.error !== undefined && (
          <Flex mt="3">
            <ErrorCallout>{deleteErrorText(props.what, props.error)}</ErrorCallout>
          </Flex>
        )}
        <Flex gap="3" mt="4" justify="end">
          <AlertDialog.Cancel>
            <Button type="button" variant="soft" color="gray">
              Cancel
            </Button>
          </AlertDialog.Cancel>
          {/* High contrast: white on Radix's red 9 misses WCAG AA. */}
          <Button
            type="button"
            color="red"
            highContrast
            disabled={props.pending}
            onClick={() => {
              props
                .onDelete()
                .then(() => setOpen(false))
                .catch(() => undefined);
            }}
          >
            Delete
          </Button>
        </Flex>
      </AlertDialog.Content>
    </AlertDialog.Root>
  );
}
