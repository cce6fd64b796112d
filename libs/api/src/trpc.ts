import { initTRPC } from '@trpc/server';
import superjson from 'superjson';
import type { ApiContext } from './context';
import { describeError, toTRPCError } from './errors';

/**
 * tRPC is initialised here and only here. Every error shape carries our `code` and, for
 * validation failures, the offending fields (`errors`), so tRPC clients can branch like REST
 * clients do; 500-class messages are generic and stacks are never sent.
 */
const t = initTRPC.context<ApiContext>().create({
  transformer: superjson,
  errorFormatter({ shape, error }) {
    const described = describeError(error);
    // Stacks name files and internals; callers get our code and message instead.
    const { stack: _stack, ...data } = shape.data;
    return {
      ...shape,
      message: described.message,
      data: { ...data, code: described.code, errors: described.issues ?? [] },
    };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * The one error-mapping middleware: whatever a procedure (or its input parser, which runs after
 * this middleware) failed with becomes a TRPCError whose code follows `errorCodeToStatus`, with
 * the original error kept as `cause`.
 */
const mapErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) throw toTRPCError(result.error);
  return result;
});

/** Base procedure of every route; callers are already authenticated/scoped by the context. */
export const publicProcedure = t.procedure.use(mapErrors);
