import type { CallbackAttempt } from '@cognition/contracts';
import { CallbackAttemptSchema } from '@cognition/contracts';
import type { PendingCallback, RunFence, RunStore } from '@cognition/storage';
import { parseInput, StorageError } from '@cognition/storage';
import type { PrismaDb, PrismaTx } from '../db/db';
import { guard, isForeignKeyViolation, isUniqueViolation } from '../db/errors';
import { CALLBACK_ATTEMPT_ORDER, parseJson, toCallbackAttempt } from '../mapping';

/** The methods of a run store that keep the completion-callback records of its runs. */
type RunCallbackMethods = Pick<
  RunStore,
  | 'recordCallbackAttempt'
  | 'listCallbackAttempts'
  | 'savePendingCallback'
  | 'claimCallbackAttempt'
  | 'settlePendingCallback'
  | 'listPendingCallbacks'
>;

/**
 * The callback records of runs (delivery attempts and pending deliveries, which go with their
 * run): the part of the run store that never touches a run row, kept apart so the run
 * lifecycle reads on its own. `PrismaRunStore` extends it.
 */
export class PrismaRunCallbacks implements RunCallbackMethods {
  constructor(protected readonly db: PrismaDb) {}

  async recordCallbackAttempt(input: CallbackAttempt): Promise<CallbackAttempt> {
    const data = parseInput(CallbackAttemptSchema, input, 'callback attempt');
    return guard('record callback attempt', async () => {
      try {
        return toCallbackAttempt(await this.db.callbackAttempt.create({ data }));
      } catch (error) {
        if (isForeignKeyViolation(error)) {
          throw new StorageError('RUN_NOT_FOUND', `Run not found: ${data.runId}`, { cause: error });
        }
        if (isUniqueViolation(error)) {
          throw new StorageError(
            'CONFLICT',
            `Callback attempt already recorded: delivery ${data.deliveryId}, attempt ${data.attempt}`,
            { cause: error },
          );
        }
        throw error;
      }
    });
  }

  async listCallbackAttempts(runId: string): Promise<CallbackAttempt[]> {
    return guard('list callback attempts', async () => {
      const rows = await this.db.callbackAttempt.findMany({
        where: { runId },
        orderBy: CALLBACK_ATTEMPT_ORDER,
      });
      return rows.map(toCallbackAttempt);
    });
  }

  savePendingCallback(input: PendingCallback, _fence?: RunFence): Promise<void> {
    return guard('save pending callback', () => this.createPending(this.db, input));
  }

  /** Inserts the delivery on `client` (the store's database, or a transaction of it). */
  protected async createPending(
    client: PrismaDb | PrismaTx,
    input: PendingCallback,
  ): Promise<void> {
    try {
      await client.pendingCallback.create({
        data: { ...input, headers: JSON.stringify(input.headers) },
      });
    } catch (error) {
      if (isForeignKeyViolation(error)) {
        throw new StorageError('RUN_NOT_FOUND', `Run not found: ${input.runId}`, {
          cause: error,
        });
      }
      if (isUniqueViolation(error)) {
        throw new StorageError(
          'CONFLICT',
          `Callback delivery already exists: ${input.deliveryId}`,
          {
            cause: error,
          },
        );
      }
      throw error;
    }
  }

  /** A conditional update: the database lets exactly one of concurrent claimants match. */
  claimCallbackAttempt(deliveryId: string, attempt: number): Promise<boolean> {
    return guard('claim callback attempt', async () => {
      const { count } = await this.db.pendingCallback.updateMany({
        where: { deliveryId, attempts: attempt - 1 },
        data: { attempts: attempt },
      });
      return count === 1;
    });
  }

  settlePendingCallback(deliveryId: string, nextAttemptAt: Date | null): Promise<void> {
    return guard('settle pending callback', async () => {
      if (nextAttemptAt === null) {
        await this.db.pendingCallback.deleteMany({ where: { deliveryId } });
      } else {
        await this.db.pendingCallback.updateMany({
          where: { deliveryId },
          data: { nextAttemptAt },
        });
      }
    });
  }

  listPendingCallbacks(): Promise<PendingCallback[]> {
    return guard('list pending callbacks', async () => {
      const rows = await this.db.pendingCallback.findMany({
        orderBy: [{ nextAttemptAt: 'asc' }, { deliveryId: 'asc' }],
        select: {
          deliveryId: true,
          runId: true,
          url: true,
          body: true,
          headers: true,
          attempts: true,
          nextAttemptAt: true,
        },
      });
      return rows.map((row) => ({
        ...row,
        headers: parseJson<Record<string, string>>(row.headers, {}),
      }));
    });
  }
}
