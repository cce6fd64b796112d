/** Mutable process state the HTTP layer reads: flipped by graceful shutdown. */
export interface ServerState {
  shuttingDown: boolean;
}
