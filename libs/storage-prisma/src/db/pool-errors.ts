import type pg from 'pg';

/**
 * Keeps a dropped PostgreSQL connection from crashing the process. node-postgres emits 'error'
 * on a client whose connection ends unexpectedly (a database restart, `pg_ctl -m immediate`, a
 * lost host) even when a query of it is in flight; the pool listens only while the client is
 * idle (and re-emits that on the pool), and nothing listens while a caller holds it
 * (`pool.connect()` in `inPostgresTransaction`, the migrator's lock): an unhandled 'error' event
 * there killed the node in the middle of requests (issue 31). Every client gets a listener for
 * its whole life; the failure still reaches whoever uses the connection, as the rejection of its
 * query ("not queryable"), which is a storage error UNAVAILABLE (503) like any other.
 */
export function guardPoolErrors(pool: pg.Pool): void {
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
}
