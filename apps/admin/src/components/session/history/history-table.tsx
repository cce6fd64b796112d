import type { ThreadCheckpoint } from '@cognition/client';
import { TableHead } from '../../common/states';

/** What a person reads when a rewind or fork fails, by the API's error code. */
export function historyErrorText(code: string | null, message: string): string {
  if (code === 'VERSION_CONFLICT') {
    return 'Someone changed this session meanwhile: reload it before rewinding it.';
  }
  if (code === 'RUN_IN_PROGRESS') {
    return 'A run is in progress: wait for it to end (or abort it) before rewinding.';
  }
  return message;
}

export interface HistoryTableProps {
  checkpoints: ThreadCheckpoint[];
  /** The thread's head (newest checkpoint): rewinding there would change nothing. */
  headId: string | null;
  /** false when the session takes no writes (completed or failed): no rewind offered. */
  canRewind: boolean;
  pending: boolean;
  onRewind: (checkpoint: ThreadCheckpoint) => void;
  onFork: (checkpoint: ThreadCheckpoint) => void;
}

/**
 * A thread's checkpoints, newest first, each with the two ways back to it: rewind (this session
 * continues from there) and fork (a new session starts from there; this one is untouched).
 */
export function HistoryTable(props: HistoryTableProps) {
  return (
    <div className="table-wrap">
      <table>
        <TableHead columns={['Step', 'Saved', 'Messages', 'Last message', 'Go back']} />
        <tbody>
          {props.checkpoints.map((checkpoint) => {
            const head = checkpoint.checkpointId === props.headId;
            return (
              <tr key={checkpoint.checkpointId}>
                <td>{checkpoint.step}</td>
                <td>
                  <time dateTime={checkpoint.createdAt.toISOString()}>
                    {checkpoint.createdAt.toLocaleTimeString()}
                  </time>
                </td>
                <td>{checkpoint.messageCount}</td>
                <td className="preview">{checkpoint.lastMessagePreview ?? '—'}</td>
                <td className="actions">
                  {head ? (
                    <span>current</span>
                  ) : (
                    props.canRewind && (
                      <button
                        type="button"
                        disabled={props.pending}
                        onClick={() => props.onRewind(checkpoint)}
                      >
                        Rewind to step {checkpoint.step}
                      </button>
                    )
                  )}
                  <button
                    type="button"
                    disabled={props.pending}
                    onClick={() => props.onFork(checkpoint)}
                  >
                    Fork from step {checkpoint.step}
                  </button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
