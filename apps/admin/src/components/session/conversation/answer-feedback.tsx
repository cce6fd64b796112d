import type { Message } from '@cognition/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { errorMessage, useTRPC } from '../../../trpc';
import { FeedbackControl } from './feedback-control';

/** The feedback of one assistant message, saved through `messages.setFeedback` / `deleteFeedback`. */
export function AnswerFeedback({ message }: { message: Message }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const refresh = { onSuccess: () => queryClient.invalidateQueries(trpc.messages.pathFilter()) };
  const save = useMutation(trpc.messages.setFeedback.mutationOptions(refresh));
  const clear = useMutation(trpc.messages.deleteFeedback.mutationOptions(refresh));
  const ids = { sessionId: message.sessionId, messageId: message.id };
  const failed = save.error ?? clear.error;
  return (
    <FeedbackControl
      feedback={message.feedback ?? null}
      pending={save.isPending || clear.isPending}
      error={failed ? errorMessage(failed) : null}
      onSave={(input) => {
        clear.reset();
        save.mutate({ ...ids, ...input });
      }}
      onClear={() => {
        save.reset();
        clear.mutate(ids);
      }}
    />
  );
}
