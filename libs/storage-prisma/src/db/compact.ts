import Database from 'better-sqlite3';

/**
 * Rewrites a SQLite file so the pages that held replaced values are gone: SQLite leaves replaced
 * rows in free pages until VACUUM, and the write-ahead log keeps them until a checkpoint. Used
 * after re-encrypting secrets (their values in clear, or under a retired key, must not survive
 * in the file). Needs no other connection writing meanwhile (VACUUM takes the whole file).
 */
export function compactSqliteFile(file: string): void {
  const db = new Database(file);
  try {
    db.exec('VACUUM');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}
