import type { SandboxProcess } from '@cognition/sandbox';
import type { Duplex } from 'node:stream';
import { PassThrough, Writable } from 'node:stream';
import { DockerStreamDemuxer } from '../engine/demux';

/** How much of a spawned process's stderr is kept for error messages. */
const STDERR_TAIL_CHARS = 4096;

/**
 * A process spawned in the session's container, seen through the hijacked connection of its
 * `docker exec`: what is written to `stdin` goes to the connection (ending it half-closes the
 * connection, which the engine passes on as the end of the process's stdin); the connection's
 * multiplexed output is split into `stdout` and a bounded stderr tail. `exitCode` asks the
 * engine once the connection ended; `stop` is the backend's TERM → KILL → restart sequence.
 */
export function dockerProcess(
  stream: Duplex,
  exitCode: () => Promise<number>,
  stop: () => void,
): SandboxProcess {
  const stdout = new PassThrough();
  let stderr = '';
  const demuxer = new DockerStreamDemuxer((payload, kind) => {
    if (kind === 'stdout') stdout.write(payload);
    else stderr = (stderr + payload.toString('utf8')).slice(-STDERR_TAIL_CHARS);
  });
  const stdin = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      stream.write(chunk, (error) => callback(error ?? null));
    },
    final(callback) {
      stream.end();
      callback();
    },
  });
  const exited = new Promise<number>((resolve) => {
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      stdout.end();
      // Nothing reaches the process any more: `stdin.writable` turns false at once.
      stdin.destroy();
      stream.destroy();
      exitCode()
        .catch(() => -1)
        .then(resolve, () => resolve(-1));
    };
    stream.on('data', (chunk: Buffer) => demuxer.push(chunk));
    stream.on('end', end);
    stream.on('close', end);
    stream.on('error', end);
  });
  return { stdin, stdout, stderrTail: () => stderr, exited, kill: stop };
}
