import { publicProcedure, router } from '../../trpc';
import { healthHandler, readyHandler } from './health.handler';

export const healthRouter = router({
  get: publicProcedure.query(healthHandler),
  ready: publicProcedure.query(readyHandler),
});
