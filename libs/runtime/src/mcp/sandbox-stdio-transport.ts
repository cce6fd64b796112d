import type { SandboxProcess } from '@cognition/sandbox';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** How long `close` waits for the process to exit after it was told to stop. */
const CLOSE_WAIT_MS = 3_000;

/**
 * The MCP stdio transport over a process the session's sandbox spawned (the SDK's own
 * `StdioClientTransport` spawns on the host with the server's environment, outside the sandbox's
 * confinement). Messages are newline-delimited JSON-RPC, framed by the SDK's `ReadBuffer`.
 */
export class SandboxStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Why the process ended on its own (its exit code and the end of its stderr), if it did. */
  exitReason: string | null = null;
  private readonly buffer = new ReadBuffer();
  private closed = false;

  constructor(private readonly process: SandboxProcess) {}

  /**
   * False once nothing can reach the process any more: the transport closed, or the process
   * exited. An exited process's stdin is closed at once (Node destroys a child's stdin when it
   * reaps it), while `exited` may resolve later: the local sandbox first removes its record of
   * the process, file I/O that a loaded machine can delay. In between, the connection looked
   * alive and was handed to the next turn, whose calls then failed (ERR_STREAM_DESTROYED).
   */
  get open(): boolean {
    return !this.closed && this.process.stdin.writable;
  }

  start(): Promise<void> {
    this.process.stdout.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    });
    this.process.stdin.on('error', (error: Error) => this.onerror?.(error));
    void this.process.exited.then((code) => {
      if (!this.closed) {
        const stderr = this.process.stderrTail().trim();
        this.exitReason = `the server process exited with code ${code}${stderr ? `: ${stderr.slice(-500)}` : ''}`;
        this.onerror?.(new Error(this.exitReason));
      }
      this.finish();
    });
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (!this.open) {
        reject(new Error('the server process is gone'));
        return;
      }
      this.process.stdin.write(serializeMessage(message), (error) =>
        error ? reject(error) : resolve(),
      );
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.process.stdin.end();
    this.process.kill();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.process.exited,
      new Promise((resolve) => {
        timer = setTimeout(resolve, CLOSE_WAIT_MS);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    this.finish();
  }

  private finish(): void {
    this.closed = true;
    const onclose = this.onclose;
    this.onclose = undefined;
    onclose?.();
  }
}
