import express from 'express';
import request from 'supertest';
import { Writable } from 'node:stream';
import { createLogger } from '../cli/logger';
import type { LogLevel } from '../config';
import { requestLogging } from './request-log';

/**
 * Issue 32: a short session logged one info line per request with every header (63 of 67
 * lines). Request lines are debug now; at the default level only errors and slow requests are
 * written, and headers never are.
 */

function loggedApp(level: LogLevel, slowMs?: number) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  const app = express();
  app.use(requestLogging(createLogger(level, sink), slowMs === undefined ? {} : { slowMs }));
  app.get('/ok', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/missing', (_req, res) => {
    res.status(404).end();
  });
  app.get('/broken', (_req, res) => {
    res.status(500).end();
  });
  // Takes clearly longer than the 5 ms threshold these apps use.
  app.get('/slow', (_req, res) => {
    setTimeout(() => res.json({ ok: true }), 40);
  });
  app.get('/stream', (_req, res) => {
    res.setHeader('Content-Type', 'text/event-stream');
    setTimeout(() => res.end('data: {}\n\n'), 40);
  });
  return { app, lines };
}

describe('issue 32: request logging at the default level', () => {
  it('writes nothing for ordinary requests, one line for an error, no headers', async () => {
    const { app, lines } = loggedApp('info');
    await request(app).get('/ok').set('Authorization', 'Bearer sk-secret').set('Cookie', 'a=b');
    await request(app).get('/missing');
    await request(app).get('/broken').set('X-Cognition-Scope-User', 'alice');
    expect(lines.map((l) => [l['level'], l['msg']])).toEqual([[50, 'request errored']]);
    expect(lines[0]).toMatchObject({
      req: { method: 'GET', url: '/broken' },
      res: { statusCode: 500 },
    });
    const text = JSON.stringify(lines);
    expect(text).not.toContain('headers');
    expect(text).not.toContain('alice');
  });

  it('writes a slow request at info (not an event stream); 0 turns that off', async () => {
    const { app, lines } = loggedApp('info', 5);
    await request(app).get('/slow');
    await request(app).get('/stream');
    expect(lines.map((l) => [l['level'], l['msg'], (l['req'] as { url: string }).url])).toEqual([
      [30, 'slow request', '/slow'],
    ]);
    expect(lines[0]?.['responseTime']).toBeGreaterThanOrEqual(5);
    const off = loggedApp('info', 0);
    await request(off.app).get('/slow');
    expect(off.lines).toEqual([]);
  });

  it('writes every request at debug', async () => {
    const { app, lines } = loggedApp('debug');
    await request(app).get('/ok');
    await request(app).get('/missing');
    expect(lines.map((l) => [l['level'], l['msg']])).toEqual([
      [20, 'request completed'],
      [20, 'request completed'],
    ]);
  });
});
