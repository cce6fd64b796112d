import { router } from '../trpc';
import { agentsRouter } from './agents/agents.router';
import { artifactsRouter } from './artifacts/artifacts.router';
import { providersRouter } from './providers/providers.router';
import { healthRouter } from './health/health.router';
import { messagesRouter } from './messages/messages.router';
import { runsRouter } from './runs/runs.router';
import { schedulesRouter } from './schedules/schedules.router';
import { sessionsRouter } from './sessions/sessions.router';
import { skillsRouter } from './skills/skills.router';

/** The whole tRPC API: one router per domain. */
export const appRouter = router({
  sessions: sessionsRouter,
  messages: messagesRouter,
  runs: runsRouter,
  health: healthRouter,
  artifacts: artifactsRouter,
  skills: skillsRouter,
  agents: agentsRouter,
  providers: providersRouter,
  schedules: schedulesRouter,
});

/** The router's type: all a client needs (`import type` only). */
export type AppRouter = typeof appRouter;
