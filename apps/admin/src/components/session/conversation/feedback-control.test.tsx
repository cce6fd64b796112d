// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { MessageFeedback } from '@cognition/client';
import { FeedbackControl, thumbOf } from './feedback-control';

afterEach(cleanup);

const rated = (score: number, text: string | null = null): MessageFeedback => ({
  score,
  text,
  createdAt: new Date('2026-11-25T10:00:00Z'),
  updatedAt: new Date('2026-11-25T10:00:00Z'),
});

function renderControl(feedback: MessageFeedback | null) {
  const onSave = vi.fn();
  const onClear = vi.fn();
  render(
    <FeedbackControl
      feedback={feedback}
      pending={false}
      error={null}
      onSave={onSave}
      onClear={onClear}
    />,
  );
  return { onSave, onClear };
}

const button = (name: RegExp) => screen.getByRole('button', { name });

describe('FeedbackControl', () => {
  it('reads a stored score as a thumb (a middle score is neither)', () => {
    expect([thumbOf(null), thumbOf(rated(5)), thumbOf(rated(4)), thumbOf(rated(1))]).toEqual([
      null,
      'up',
      'up',
      'down',
    ]);
    expect(thumbOf(rated(3))).toBeNull();
  });

  it('rates an unrated answer up or down, and asks for a rating before a comment', () => {
    const { onSave, onClear } = renderControl(null);
    expect(button(/Good answer/).getAttribute('aria-pressed')).toBe('false');
    expect((button(/Save comment/) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(button(/Bad answer/));
    expect(onSave).toHaveBeenCalledWith({ score: 1, text: null });
    expect(onClear).not.toHaveBeenCalled();
  });

  it('shows the chosen thumb pressed; pressing it again takes the rating back', () => {
    const { onSave, onClear } = renderControl(rated(5, 'Spot on'));
    expect(button(/Good answer/).getAttribute('aria-pressed')).toBe('true');
    expect(button(/Bad answer/).getAttribute('aria-pressed')).toBe('false');
    expect(document.querySelector('q.comment')?.textContent).toBe('Spot on');
    fireEvent.click(button(/Good answer/));
    expect(onClear).toHaveBeenCalledTimes(1);
    expect(onSave).not.toHaveBeenCalled();
  });

  it('saves a comment with the stored score, and keeps it when the thumb changes', () => {
    const { onSave } = renderControl(rated(5, 'Spot on'));
    fireEvent.change(screen.getByLabelText('Comment on this answer'), {
      target: { value: '  Missed the edge case  ' },
    });
    fireEvent.click(button(/Save comment/));
    expect(onSave).toHaveBeenLastCalledWith({ score: 5, text: 'Missed the edge case' });
    fireEvent.click(button(/Bad answer/));
    expect(onSave).toHaveBeenLastCalledWith({ score: 1, text: 'Missed the edge case' });
  });

  it('shows a failed save as an alert', () => {
    render(
      <FeedbackControl
        feedback={null}
        pending={false}
        error="Message not found: m1"
        onSave={vi.fn()}
        onClear={vi.fn()}
      />,
    );
    expect(screen.getByRole('alert').textContent).toBe('Message not found: m1');
  });
});
