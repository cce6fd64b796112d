import express, { Router } from 'express';
import request from 'supertest';
import { lazyRouter } from './lazy-router';

function appWith(load: () => Promise<Router>) {
  const app = express();
  app.use(lazyRouter(['/proto', '/.well-known/card.json'], load));
  app.get('/other', (_req, res) => res.send('other'));
  return app;
}

function protoRouter(): Router {
  const router = Router();
  router.get('/proto/:x', (req, res) => res.send(`proto ${String(req.params['x'])}`));
  router.get('/.well-known/card.json', (_req, res) => res.json({ card: true }));
  return router;
}

describe('lazyRouter', () => {
  it('loads nothing for requests elsewhere, then loads once and serves every prefix', async () => {
    const load = jest.fn(() => Promise.resolve(protoRouter()));
    const app = appWith(load);
    await request(app).get('/other').expect(200, 'other');
    // A path that only starts with the prefix's letters is elsewhere too.
    await request(app).get('/protocol').expect(404);
    expect(load).not.toHaveBeenCalled();
    await Promise.all([
      request(app).get('/proto/a').expect(200, 'proto a'),
      request(app).get('/proto/b').expect(200, 'proto b'),
    ]);
    await request(app).get('/.well-known/card.json').expect(200, { card: true });
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('answers a failed load as an error and loads again on the next request', async () => {
    const load = jest
      .fn<Promise<Router>, []>()
      .mockRejectedValueOnce(new Error('module missing'))
      .mockResolvedValue(protoRouter());
    const app = appWith(load);
    await request(app).get('/proto/a').expect(500);
    await request(app).get('/proto/a').expect(200, 'proto a');
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('passes a request the loaded router does not answer on to the next handler', async () => {
    const app = appWith(() => Promise.resolve(protoRouter()));
    app.get('/proto', (_req, res) => res.send('after'));
    await request(app).get('/proto').expect(200, 'after');
  });
});
