import type { Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/** How long the rest of a refused request is read before the connection is cut. */
const LINGER_MS = 5_000;

/** Node's default limit of the request line and headers together (`--max-http-header-size`). */
const HEADER_LIMIT_KB = 16;

function answer(error: NodeJS.ErrnoException): { status: number; path: string; message: string } {
  switch (error.code ?? 'none') {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        path: '(headers)',
        message: `the request line and headers together exceed ${HEADER_LIMIT_KB} KB (a long URL counts)`,
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, path: '(request)', message: 'the request was not received in time' };
    default:
      return { status: 400, path: '(request)', message: 'the request is not valid HTTP/1.1' };
  }
}

/**
 * Requests Node's HTTP parser refuses before the app sees them (headers over the limit, bytes
 * that are not HTTP) get the API's error body, naming the part at fault, instead of Node's bare
 * status line: every 4xx says what is wrong.
 */
export function answerClientErrors(server: Server): void {
  const answered = new WeakSet<Duplex>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // Node's parser reports each later chunk of the refused request again: it was answered.
    if (answered.has(socket)) return;
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, path, message } = answer(error);
    answered.add(socket);
    const body = JSON.stringify({
      detail: `Bad request: ${message}`,
      code: 'VALIDATION_ERROR',
      errors: [{ path, message }],
    });
    // The client may still be sending (the rest of a long URL or header): closing with its bytes
    // unread makes the kernel reset the connection, and the client can lose the answer. So the
    // rest is read and dropped until the client closes, for a few seconds at most (a lingering
    // close, RFC 9112 section 9.6). The answer is written, and our side ended once the client
    // ended its own: a socket ended at once was closed by Node as soon as more of the refused
    // request arrived, so a client still writing got EPIPE and could lose the answer (the
    // bench's fuzz saw such a dropped connection for a long URL).
    socket.on('data', () => undefined);
    socket.on('error', () => socket.destroy());
    socket.once('end', () => socket.end());
    socket.resume();
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
    const linger = setTimeout(() => socket.destroy(), LINGER_MS);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
  });
}
