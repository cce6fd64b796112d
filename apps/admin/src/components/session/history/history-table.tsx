import { Badge, Button, Flex, Table } from '@radix-ui/themes';
import type { ThreadCheckpoint } from '@cognition/client';
import { DataTable } from '../../common/ui';

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
    <DataTable columns={['Step', 'Saved', 'Messages', 'Last message', 'Go back']}>
      {props.checkpoints.map((checkpoint) => {
        const head = checkpoint.checkpointId === props.headId;
        return (
          <Table.Row key={checkpoint.checkpointId}>
            <Table.Cell>{checkpoint.step}</Table.Cell>
            <Table.Cell>
              <time dateTime={checkpoint.createdAt.toISOString()}>
                {checkpoint.createdAt.toLocaleTimeString()}
              </time>
            </Table.Cell>
            <Table.Cell>{checkpoint.messageCount}</Table.Cell>
            <Table.Cell className="preview">{checkpoint.lastMessagePreview ?? '—'}</Table.Cell>
            <Table.Cell>
              <Flex gap="2" wrap="wrap" align="center">
                {head ? (
                  <Badge highContrast color="green">
                    current
                  </Badge>
                ) : (
                  props.canRewind && (
                    <Button
                      type="button"
                      size="1"
                      variant="soft"
                      disabled={props.pending}
                      onClick={() => props.onRewind(checkpoint)}
                    >
                      Rewind to step {checkpoint.step}
                    </Button>
                  )
                )}
                <Button
                  type="button"
                  size="1"
                  variant="soft"
                  color="gray"
                  disabled={props.pending}
                  onClick={() => props.onFork(checkpoint)}
                >
                  Fork from step {checkpoint.step}
                </Button>
              </Flex>
            </Table.Cell>
          </Table.Row>
        );
      })}
    </DataTable>
  );
}
