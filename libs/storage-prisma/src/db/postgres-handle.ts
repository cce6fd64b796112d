import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient as PostgresClient } from '../generated/postgres/client';
import type { DatabaseHandle, OpenOptions } from './handle';
import { asOpenError, once, transactionOptions } from './handle';
import { migratePostgresPool, redactUrl } from './migrate';
import { guardPoolErrors } from './pool-errors';
import { registerRawConnection } from './raw-connections';

const DEFAULT_POSTGRES_POOL_SIZE = 10;

/**
 * A Postgres database behind a pool of `poolSize` connections (default
 * {@link DEFAULT_POSTGRES_POOL_SIZE}); `migrate()` runs under an advisory lock, so several
 * processes starting at once against one database are safe. The checkpointer's hot path queries
 * the same pool directly (see `raw-connections.ts`).
 */
export function createPostgresHandle(
  url: string,
  options: OpenOptions & { poolSize?: number } = {},
): DatabaseHandle {
  const what = `Cannot open PostgreSQL database ${redactUrl(url)}`;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? DEFAULT_POSTGRES_POOL_SIZE,
    // The raw checkpointer takes clients from this pool directly: without a bound, a full pool
    // would make a put wait forever instead of failing UNAVAILABLE like Prisma's `maxWait`.
    connectionTimeoutMillis: transactionOptions(options).maxWait,
  });
  guardPoolErrors(pool);
  const db = new PostgresClient({
    adapter: new PrismaPg(pool),
    transactionOptions: transactionOptions(options),
  });
  registerRawConnection(db, { provider: 'postgresql', pool });
  return {
    db,
    provider: 'postgresql',
    migrate: async () => {
      try {
        return await migratePostgresPool(pool, options);
      } catch (error) {
        throw asOpenError(error, what);
      }
    },
    connect: async () => {
      try {
        await db.$connect();
      } catch (error) {
        throw asOpenError(error, what);
      }
    },
    close: once(async () => {
      await db.$disconnect();
      await pool.end();
    }),
    poolStats: () => ({ size: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
}
