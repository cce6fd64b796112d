import { Button, Flex, Heading, Text } from '@radix-ui/themes';
import type { Session } from '@cognition/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { errorCode, errorMessage, useTRPC } from '../../../trpc';
import { ErrorCallout } from '../../common/ui';

/**
 * The lifecycle actions a session's status allows (suspend, resume, complete), each carrying
 * the version the page shows, so an action on a session someone else just changed is a clear
 * conflict instead of acting on a state nobody saw.
 */
export function SessionActions({ session }: { session: Session }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const done = { onSuccess: () => queryClient.invalidateQueries() };
  const suspend = useMutation(trpc.sessions.suspend.mutationOptions(done));
  const resume = useMutation(trpc.sessions.resume.mutationOptions(done));
  const complete = useMutation(trpc.sessions.complete.mutationOptions(done));
  const input = { id: session.id, expectedVersion: session.version };
  const failed = [suspend, resume, complete].find((m) => m.isError)?.error;
  const busy = suspend.isPending || resume.isPending || complete.isPending;
  const canSuspend = session.status === 'active' || session.status === 'abandoned';
  return (
    <section aria-labelledby="actions-title">
      <Heading as="h2" id="actions-title" size="4">
        Lifecycle
      </Heading>
      <Flex gap="2" wrap="wrap" align="center">
        {canSuspend && (
          <Button
            type="button"
            variant="soft"
            disabled={busy}
            onClick={() => suspend.mutate(input)}
          >
            Suspend
          </Button>
        )}
        {session.status === 'suspended' && (
          <Button type="button" disabled={busy} onClick={() => resume.mutate(input)}>
            Resume
          </Button>
        )}
        {(canSuspend || session.status === 'suspended') && (
          <Button
            type="button"
            variant="soft"
            color="gray"
            disabled={busy}
            onClick={() => complete.mutate(input)}
          >
            Complete
          </Button>
        )}
        {!canSuspend && session.status !== 'suspended' && (
          <Text size="2">The session is {session.status}: it takes no more messages.</Text>
        )}
      </Flex>
      {failed && (
        <ErrorCallout>
          {errorCode(failed) === 'VERSION_CONFLICT'
            ? 'Someone changed this session meanwhile: reload it before acting on it.'
            : errorMessage(failed)}
        </ErrorCallout>
      )}
    </section>
  );
}
