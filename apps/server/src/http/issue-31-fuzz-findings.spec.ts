import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import request from 'supertest';
import { answerClientErrors } from './client-error';
import type { TestApp } from '../testing/test-app';
import { createTestApp } from '../testing/test-app';

/**
 * What the issue 31 fuzz (apps/server-e2e/src/issue-31-fuzz.int.spec.ts) found at the HTTP
 * edge: each answered 500 or a 4xx that named nothing. Each case is the smallest request that
 * showed it.
 */
type Json = Record<string, unknown>;

describe('issue 31 fuzz findings at the HTTP edge', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(async () => {
    await t.close();
  });

  it('a path parameter that is not valid percent-encoded UTF-8 is a 400 naming the path, not a 500', async () => {
    for (const id of ['%ED%A0%80', '%zz', '%E0%A4%A']) {
      const res = await request(t.app).get(`/sessions/${id}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        code: 'VALIDATION_ERROR',
        errors: [{ path: '(path)' }],
      });
      // The undecodable value is not echoed back.
      expect(JSON.stringify(res.body)).not.toContain(id);
    }
  });

  it('a body that does not inflate under its Content-Encoding is a 400 naming the body, not a 500', async () => {
    const res = await request(t.app)
      .post('/sessions')
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .send('{"title":"not gzip"}');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: '(body)' }] });
    expect((res.body as Json)['detail']).toMatch(/^Request body could not be read/);
  });

  it('an unsupported charset or Content-Encoding names the header', async () => {
    const charset = await request(t.app)
      .post('/sessions')
      .set('Content-Type', 'application/json; charset=klingon')
      .send('{}');
    expect(charset.status).toBe(415);
    expect(charset.body).toMatchObject({ errors: [{ path: 'Content-Type' }] });
    expect((charset.body as Json)['detail']).toContain('Content-Type');
    const encoding = await request(t.app)
      .post('/sessions')
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'zstd-nope')
      .send('{}');
    expect(encoding.status).toBe(415);
    expect(encoding.body).toMatchObject({ errors: [{ path: 'Content-Encoding' }] });
  });

  it('request headers over the limit get 431 with the error body naming the headers', async () => {
    const server = createServer(t.app);
    answerClientErrors(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(
            `GET /health HTTP/1.1\r\nHost: localhost\r\nX-Junk: ${'h'.repeat(20_000)}\r\n\r\n`,
          );
        });
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      expect(raw.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
      const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as Json;
      expect(body).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: '(headers)' }] });

      // A client still sending when it is refused gets the answer, not a reset connection:
      // the server reads the rest and drops it (a lingering close, RFC 9112 section 9.6). The
      // bench's one dropped connection in 10,000 was such a request (a 3 MB URL under load);
      // on an idle loopback this passes with or without the lingering, so it guards the
      // behaviour, not that race.
      const late = await new Promise<{ text: string; error?: string }>((resolve) => {
        let text = '';
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(`GET /health HTTP/1.1\r\nHost: localhost\r\nX-Junk: ${'h'.repeat(20_000)}`);
          setTimeout(() => {
            socket.write('h'.repeat(8 * 1024 * 1024));
            socket.end('\r\n\r\n');
          }, 50);
        });
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        socket.on('close', () => resolve({ text }));
        socket.on('error', (error) => resolve({ text, error: error.message }));
      });
      expect(late.error).toBeUndefined();
      expect(late.text.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');

      // The rest arriving in pieces after the answer: the connection stays open and every piece
      // is taken until the client ends (it was closed at once, the next write failing EPIPE).
      const slow = await new Promise<{ text: string; errors: string[]; written: number }>(
        (resolve) => {
          let text = '';
          let written = 0;
          const errors: string[] = [];
          const socket = connect(port, '127.0.0.1', () => {
            void (async () => {
              socket.write(`GET /health?q=${'x'.repeat(20_000)}`);
              for (let i = 0; i < 3; i += 1) {
                await new Promise((r) => setTimeout(r, 200));
                await new Promise<void>((r) =>
                  socket.write('x'.repeat(20_000), (e) => {
                    if (e) errors.push(e.message);
                    else written += 1;
                    r();
                  }),
                );
              }
              socket.end(' HTTP/1.1\r\nHost: localhost\r\n\r\n');
            })();
          });
          socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
          socket.on('error', (e) => errors.push(e.message));
          socket.on('close', () => setTimeout(() => resolve({ text, errors, written }), 700));
        },
      );
      expect({ errors: slow.errors, written: slow.written }).toEqual({ errors: [], written: 3 });
      expect(slow.text.match(/HTTP\/1\.1 431/g)).toHaveLength(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
