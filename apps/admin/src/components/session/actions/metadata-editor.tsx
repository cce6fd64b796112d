import type { Session } from '@cognition/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { errorCode, errorMessage, useTRPC } from '../../../trpc';
import { formatMetadata, parseMetadata } from '../../common/metadata-text';

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
        <h2 id="metadata-title">Metadata</h2>
        <p className="meta">
          {Object.entries(session.metadata).length === 0
            ? 'none'
            : Object.entries(session.metadata).map(([k, v]) => (
                <code key={k}>
                  {k}={v}
                </code>
              ))}
        </p>
        <button
          type="button"
          onClick={() => {
            setText(formatMetadata(session.metadata));
            update.reset();
            setEditing(true);
          }}
        >
          Edit metadata
        </button>
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
      <h2 id="metadata-title">Metadata</h2>
      <label>
        One <code>key=value</code> per line
        <textarea name="metadata" rows={4} value={text} onChange={(e) => setText(e.target.value)} />
      </label>
      {!parsed.ok && (
        <p className="state error" role="alert">
          {parsed.problem}
        </p>
      )}
      {update.isError && (
        <p className="state error" role="alert">
          {errorCode(update.error) === 'VERSION_CONFLICT'
            ? 'Someone changed this session since you opened it. Cancel to see the current version, then edit again.'
            : errorMessage(update.error)}
        </p>
      )}
      <button type="submit" disabled={!parsed.ok || update.isPending}>
        Save (version {session.version})
      </button>
      <button type="button" onClick={() => setEditing(false)}>
        Cancel
      </button>
    </form>
  );
}
