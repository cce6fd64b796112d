import express from 'express';
import request from 'supertest';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger } from '../cli/logger';
import { requestLog, requestLogging } from './request-log';

/** An app with `requestLogging` and a few routes, and the JSON lines it logged. */
function loggedApp() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  const app = express();
  app.use(requestLogging(createLogger('debug', sink)));
  app.get('/ok', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/missing', (_req, res) => {
    res.status(404).end();
  });
  app.get('/broken', (req, res) => {
    requestLog(req).error({ detail: 'spec' }, 'handler failed');
    res.status(500).end();
  });
  return { app, lines };
}

describe('requestLogging', () => {
  it('writes one line per request at its end: request, response, time, id; level by status (issue 32: debug unless 5xx, no headers)', async () => {
    const { app, lines } = loggedApp();
    const ok = await request(app).get('/ok?x=1').set('Authorization', 'Bearer sk-secret-value');
    await request(app).get('/missing');
    await request(app).get('/broken').set('X-Request-Id', 'trace-1');

    expect(ok.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const [completed, missing, handler, errored] = lines;
    expect(completed).toMatchObject({
      level: 20,
      msg: 'request completed',
      requestId: ok.headers['x-request-id'],
      req: { method: 'GET', url: '/ok?x=1' },
      res: { statusCode: 200 },
    });
    expect((completed?.['req'] as Record<string, unknown>)['headers']).toBeUndefined();
    expect(typeof completed?.['responseTime']).toBe('number');
    expect(missing).toMatchObject({
      level: 20,
      msg: 'request completed',
      res: { statusCode: 404 },
    });
    // A line logged while handling carries the request's id, as the request's own line does.
    expect(handler).toMatchObject({ level: 50, msg: 'handler failed', requestId: 'trace-1' });
    expect(errored).toMatchObject({
      level: 50,
      msg: 'request errored',
      requestId: 'trace-1',
      err: { message: 'failed with status code 500' },
    });
    expect(lines).toHaveLength(4);
    expect(JSON.stringify(lines)).not.toContain('sk-secret-value');
  });

  it('refuses to log for a request it did not see', () => {
    const unseen = new IncomingMessage(new Socket());
    expect(() => requestLog(unseen)).toThrow(/requestLogging is not mounted/);
  });
});
