import { Button, Flex, Text, TextArea } from '@radix-ui/themes';
import type { MessageFeedback } from '@cognition/client';
import { useState } from 'react';
import { ErrorCallout } from '../../common/ui';

export type Thumb = 'up' | 'down';

/** The score a thumb stores (the API rates 1..5): up is the best, down the worst. */
const SCORE_OF: Record<Thumb, number> = { up: 5, down: 1 };

/** The thumb a stored rating reads as; a middle score (3, set by another client) is neither. */
export function thumbOf(feedback: Pick<MessageFeedback, 'score'> | null | undefined): Thumb | null {
  if (!feedback) return null;
  if (feedback.score >= 4) return 'up';
  if (feedback.score <= 2) return 'down';
  return null;
}

export interface FeedbackControlProps {
  feedback: MessageFeedback | null;
  pending: boolean;
  /** What went wrong with the last save or removal, for the person to read. */
  error: string | null;
  onSave: (input: { score: number; text: string | null }) => void;
  onClear: () => void;
}

/**
 * Thumbs up/down on an answer, with an optional comment. Pressing the thumb already chosen takes
 * the rating back; a comment is saved with the chosen thumb (the API stores it with a score).
 */
export function FeedbackControl({
  feedback,
  pending,
  error,
  onSave,
  onClear,
}: FeedbackControlProps) {
  const chosen = thumbOf(feedback);
  const [comment, setComment] = useState(feedback?.text ?? '');
  const text = comment.trim() === '' ? null : comment.trim();
  const press = (thumb: Thumb) =>
    chosen === thumb ? onClear() : onSave({ score: SCORE_OF[thumb], text });
  return (
    <Flex
      className="feedback"
      role="group"
      aria-label="Feedback on this answer"
      gap="2"
      wrap="wrap"
      align="center"
      mt="2"
    >
      <Button
        type="button"
        size="1"
        variant={chosen === 'up' ? 'solid' : 'soft'}
        color="green"
        highContrast
        aria-pressed={chosen === 'up'}
        disabled={pending}
        onClick={() => press('up')}
      >
        <span aria-hidden="true">✓</span> Good answer
      </Button>
      <Button
        type="button"
        size="1"
        variant={chosen === 'down' ? 'solid' : 'soft'}
        color="red"
        highContrast
        aria-pressed={chosen === 'down'}
        disabled={pending}
        onClick={() => press('down')}
      >
        <span aria-hidden="true">✗</span> Bad answer
      </Button>
      {feedback && chosen === null && <Text size="1">rated {feedback.score}/5</Text>}
      <details>
        <summary>
          <Text size="1">{feedback?.text ? 'Comment' : 'Add a comment'}</Text>
        </summary>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            if (feedback) onSave({ score: feedback.score, text });
          }}
        >
          <Flex direction="column" gap="1" mt="1">
            <Text as="label" size="1" weight="medium">
              Comment on this answer
              <TextArea
                rows={2}
                maxLength={4000}
                value={comment}
                onChange={(event) => setComment(event.target.value)}
              />
            </Text>
            <Flex gap="2" align="center">
              <Button type="submit" size="1" disabled={pending || !feedback}>
                Save comment
              </Button>
              {!feedback && <Text size="1"> (rate the answer first)</Text>}
            </Flex>
          </Flex>
        </form>
      </details>
      {feedback?.text && (
        <Text size="1" color="gray">
          <q className="comment">{feedback.text}</q>
        </Text>
      )}
      {error && <ErrorCallout>{error}</ErrorCallout>}
    </Flex>
  );
}
