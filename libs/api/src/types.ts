import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from './routers/app';

/** Input type of every procedure, e.g. `RouterInputs['sessions']['create']`. */
export type RouterInputs = inferRouterInputs<AppRouter>;
/** Output type of every procedure, e.g. `RouterOutputs['sessions']['list']`. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;
