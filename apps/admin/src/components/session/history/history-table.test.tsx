// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ThreadCheckpoint } from '@cognition/client';
import { HistoryTable, historyErrorText } from './history-table';

afterEach(cleanup);

const checkpoint = (step: number, preview: string | null): ThreadCheckpoint => ({
  checkpointId: `00000000-0000-4000-8000-00000000000${step}`,
  parentCheckpointId: null,
  step,
  createdAt: new Date('2026-11-25T10:00:00Z'),
  messageCount: step,
  lastMessagePreview: preview,
});

const CHECKPOINTS = [checkpoint(3, 'The answer'), checkpoint(1, 'The question')];

function renderTable(canRewind = true) {
  const onRewind = vi.fn();
  const onFork = vi.fn();
  render(
    <HistoryTable
      checkpoints={CHECKPOINTS}
      headId={CHECKPOINTS[0]?.checkpointId ?? null}
      canRewind={canRewind}
      pending={false}
      onRewind={onRewind}
      onFork={onFork}
    />,
  );
  return { onRewind, onFork };
}

describe('HistoryTable', () => {
  it('offers rewind to every checkpoint but the head, and fork from any', () => {
    const { onRewind, onFork } = renderTable();
    expect(screen.queryByRole('button', { name: 'Rewind to step 3' })).toBeNull();
    expect(screen.getByText('current')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Rewind to step 1' }));
    expect(onRewind).toHaveBeenCalledWith(CHECKPOINTS[1]);
    fireEvent.click(screen.getByRole('button', { name: 'Fork from step 3' }));
    expect(onFork).toHaveBeenCalledWith(CHECKPOINTS[0]);
  });

  it('offers no rewind on a session that takes no writes, but still a fork', () => {
    renderTable(false);
    expect(screen.queryByRole('button', { name: /^Rewind/ })).toBeNull();
    expect(screen.getAllByRole('button', { name: /^Fork/ })).toHaveLength(2);
  });

  it('explains a version conflict and a run in progress; other failures say what the API said', () => {
    expect(historyErrorText('VERSION_CONFLICT', 'x')).toMatch(/^Someone changed this session/);
    expect(historyErrorText('RUN_IN_PROGRESS', 'x')).toMatch(/^A run is in progress/);
    expect(historyErrorText('CONFLICT', 'Checkpoint was pruned')).toBe('Checkpoint was pruned');
  });
});
