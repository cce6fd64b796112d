import type { AppRouter } from '@cognition/client';
import { createTRPCContext } from '@trpc/tanstack-react-query';

/** The one typed tRPC + TanStack Query binding of the dashboard. */
export const { TRPCProvider, useTRPC } = createTRPCContext<AppRouter>();

/** The tRPC error code of a failed query or mutation (`UNAUTHORIZED`, `CONFLICT`, ...), if any. */
export function errorCode(error: unknown): string | null {
  const data = (error as { data?: { code?: unknown } } | null)?.data;
  return typeof data?.code === 'string' ? data.code : null;
}

/** The message a person should read for a failed call. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
