import { Button, Code, Flex, Heading, Text, TextArea } from '@radix-ui/themes';
import type { Session } from '@cognition/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { errorCode, errorMessage, useTRPC } from '../../../trpc';
import { formatMetadata, parseMetadata } from '../../common/metadata-text';
import { ErrorCallout } from '../../common/ui';

/**
 * Edits a session's metadata as `key=value` lines. The write carries the version the editor was
 * opened on, so a concurrent change by someone else is a clear conflict, never a silent overwrite.
 */
export function MetadataEditor({ session }: { session: Session }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [text, setText] = useState(() => formatMetadata(session.metadata));
  const [editing, setEditing] = useState(false);
  const update = useMutation(
    trpc.sessions.update.mutationOptions({
      onSuccess: async () => {
        setEditing(false);
        await queryClient.invalidateQueries();
      },
    }),
  );
  const parsed = parseMetadata(text);
  if (!editing) {
    return (
      <section aria-labelledby="metadata-title">
        <Heading as="h2" id="metadata-title" size="4">
          Metadata
        </Heading>
        <Text as="p" size="2" className="meta" mb="2">
          {Object.entries(session.metadata).length === 0
            ? 'none'
            : Object.entries(session.metadata).map(([k, v]) => (
                <Code key={k} variant="soft" color="gray">
                  {k}={v}
                </Code>
              ))}
        </Text>
        <Button
          type="button"
          variant="soft"
          onClick={() => {
            setText(formatMetadata(session.metadata));
            update.reset();
            setEditing(true);
          }}
        >
          Edit metadata
        </Button>
      </section>
    );
  }
  return (
    <form
      aria-labelledby="metadata-title"
      onSubmit={(event) => {
        event.preventDefault();
        if (parsed.ok)
          update.mutate({
            id: session.id,
            metadata: parsed.metadata,
            expectedVersion: session.version,
          });
      }}
    >
      <Heading as="h2" id="metadata-title" size="4">
        Metadata
      </Heading>
      <Flex direction="column" gap="1" mb="2" style={{ maxWidth: '40rem' }}>
        <Text as="label" htmlFor="metadata-text" size="2" weight="medium">
          One <Code>key=value</Code> per line
        </Text>
        <TextArea
          id="metadata-text"
          name="metadata"
          rows={4}
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
      </Flex>
      {!parsed.ok && <ErrorCallout>{parsed.problem}</ErrorCallout>}
      {update.isError && (
        <ErrorCallout>
          {errorCode(update.error) === 'VERSION_CONFLICT'
            ? 'Someone changed this session since you opened it. Cancel to see the current version, then edit again.'
            : errorMessage(update.error)}
        </ErrorCallout>
      )}
      <Flex gap="2" mt="2">
        <Button type="submit" disabled={!parsed.ok || update.isPending}>
          Save (version {session.version})
        </Button>
        <Button type="button" variant="soft" color="gray" onClick={() => setEditing(false)}>
          Cancel
        </Button>
      </Flex>
    </form>
  );
}
