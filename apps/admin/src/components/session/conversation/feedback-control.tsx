import type { MessageFeedback } from '@cognition/client';
import { useState } from 'react';

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
    <div className="feedback" role="group" aria-label="Feedback on this answer">
      <button
        type="button"
        aria-pressed={chosen === 'up'}
        disabled={pending}
        onClick={() => press('up')}
      >
        <span aria-hidden="true">✓</span> Good answer
      </button>
      <button
        type="button"
        aria-pressed={chosen === 'down'}
        disabled={pending}
        onClick={() => press('down')}
      >
        <span aria-hidden="true">✗</span> Bad answer
      </button>
      {feedback && chosen === null && <span>rated {feedback.score}/5</span>}
      <details>
        <summary>{feedback?.text ? 'Comment' : 'Add a comment'}</summary>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            if (feedback) onSave({ score: feedback.score, text });
          }}
        >
          <label>
            Comment on this answer
            <textarea
              rows={2}
              maxLength={4000}
              value={comment}
              onChange={(event) => setComment(event.target.value)}
            />
          </label>
          <button type="submit" disabled={pending || !feedback}>
            Save comment
          </button>
          {!feedback && <span> (rate the answer first)</span>}
        </form>
      </details>
      {feedback?.text && <q className="comment">{feedback.text}</q>}
      {error && (
        <p className="state error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
