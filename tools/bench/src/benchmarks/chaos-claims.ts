import pg from 'pg';
import type { ClaimRecord } from '@cognition/api/testing';

/**
 * The database's own log of run claims for the chaos run (benchmark 16): a trigger on `runs`
 * records every claim (each one increments `lease_attempt`) in the claim's own transaction,
 * with the database's clock, so the check of model calls can tell a call made under a stale
 * claim from a legitimate hand-back (A → B → A under a newer claim). Only in the run's private
 * database; nothing of the server changes.
 */

const INSTALL = `
CREATE TABLE IF NOT EXISTS chaos_claims (
  run_id text NOT NULL,
  idempotency_key text,
  claim integer NOT NULL,
  owner_node text,
  at timestamptz NOT NULL
);
CREATE OR REPLACE FUNCTION chaos_log_claim() RETURNS trigger AS $$
BEGIN
  INSERT INTO chaos_claims VALUES
    (NEW.id, NEW.idempotency_key, NEW.lease_attempt, NEW.owner_node, clock_timestamp());
  RETURN NEW;
END $$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS chaos_claims ON runs;
CREATE TRIGGER chaos_claims AFTER UPDATE OF lease_attempt ON runs FOR EACH ROW
  WHEN (NEW.lease_attempt IS DISTINCT FROM OLD.lease_attempt) EXECUTE FUNCTION chaos_log_claim();
`;

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Installs the claim log (after the nodes' migrations created `runs`). */
export function installClaimLog(url: string): Promise<void> {
  return withClient(url, async (client) => {
    await client.query(INSTALL);
  });
}

/** Every claim recorded so far, of runs with an idempotency key (the chaos turns'). */
export function readClaims(url: string): Promise<ClaimRecord[]> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{
      idempotency_key: string;
      claim: number;
      owner_node: string | null;
      at_ms: string;
    }>(
      `SELECT idempotency_key, claim, owner_node, (extract(epoch FROM at) * 1000)::float8 AS at_ms
         FROM chaos_claims WHERE idempotency_key IS NOT NULL ORDER BY at, claim`,
    );
    return rows.map((row) => ({
      turn: row.idempotency_key,
      claim: Number(row.claim),
      ownerNode: row.owner_node ?? '?',
      at: Number(row.at_ms),
    }));
  });
}
