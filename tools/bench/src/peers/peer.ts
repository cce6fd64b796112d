import type { TurnShape } from '../support/agent-server';

/** What one peer turn produced and when, as its client saw it. */
export interface PeerTurn {
  shape: TurnShape;
  /** ms from the send to the first answer token (0 when none came). */
  ttftMs: number;
  /** ms from the send to the end of the run's stream. */
  totalMs: number;
}

/** An open stream of a client; `close` ends it from the client side. */
export interface OpenStream {
  close(): void;
}

/** A peer server in its own process, driven with the peer's own client. */
export interface PeerServer {
  /** e.g. `LangGraph API server (in-memory)`: names the peer and its storage in rows. */
  label: string;
  /** Its process, for /proc figures (CPU, RSS). */
  pid: number;
  /** A fresh conversation (untimed set-up); returns its id. */
  newThread(): Promise<string>;
  /** Sends `prompt` in `thread` and reads the run's stream to its end. */
  turn(thread: string, prompt: string): Promise<PeerTurn>;
  /**
   * Starts a run on `thread` whose model never answers (the fake model hangs) and returns an
   * opener of idle streams attached to it, each resolved once the peer has sent its first event
   * (so the stream is known to be set up on the server).
   */
  startIdleRun(thread: string): Promise<() => Promise<OpenStream>>;
  /** Stops the process and drops what it created (database). Idempotent. */
  stop(): Promise<void>;
}
