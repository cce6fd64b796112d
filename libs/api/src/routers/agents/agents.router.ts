import { adminProcedure, publicProcedure, router } from '../../trpc';
import {
  AgentNameInputSchema,
  CreateAgentInputSchema,
  DeleteAgentInputSchema,
  UpdateAgentInputSchema,
} from './schemas';

/**
 * The agents in force (built-in, file and registry ones) and the registry's writes. Reads are
 * for every authenticated caller; writes need an admin key. Global: not scoped by tenant.
 */
export const agentsRouter = router({
  list: publicProcedure.query(({ ctx }) => ctx.services.registry.listAgents()),
  get: publicProcedure
    .input(AgentNameInputSchema)
    .query(({ ctx, input }) => ctx.services.registry.getAgent(input.name)),
  create: adminProcedure
    .input(CreateAgentInputSchema)
    .mutation(({ ctx, input }) => ctx.services.registry.createAgent(input)),
  update: adminProcedure.input(UpdateAgentInputSchema).mutation(({ ctx, input }) => {
    const { expected_version, ...definition } = input;
    return ctx.services.registry.putAgent(input.name, {
      definition,
      ...(expected_version !== undefined ? { expectedVersion: expected_version } : {}),
    });
  }),
  delete: adminProcedure.input(DeleteAgentInputSchema).mutation(async ({ ctx, input }) => {
    await ctx.services.registry.deleteAgent(input.name, input.expected_version);
    return { deleted: true as const };
  }),
});
