import { appRouter } from './routers/app';
import { createCallerFactory } from './trpc';

/**
 * Calls procedures in-process with a given context (REST adapters, tests):
 * `createCaller(createApiContext(services, caller, requestId)).sessions.get({ id })`.
 * Errors arrive as TRPCError; map them with `toHttpError`.
 */
export const createCaller = createCallerFactory(appRouter);
