import { adminProcedure, publicProcedure, router } from '../../trpc';
import {
  CreateProviderInputSchema,
  DeleteProviderInputSchema,
  ProviderIdInputSchema,
  UpdateProviderInputSchema,
} from './schemas';

/**
 * The LLM providers in force (configured and registry ones) and the registry's writes. API keys
 * are write-only: answers say `apiKeySet`, and an update without `apiKey` keeps the stored key.
 */
export const providersRouter = router({
  list: publicProcedure.query(({ ctx }) => ctx.services.registry.listProviders()),
  get: publicProcedure
    .input(ProviderIdInputSchema)
    .query(({ ctx, input }) => ctx.services.registry.getProvider(input.id)),
  create: adminProcedure
    .input(CreateProviderInputSchema)
    .mutation(({ ctx, input }) => ctx.services.registry.createProvider(input)),
  update: adminProcedure.input(UpdateProviderInputSchema).mutation(({ ctx, input }) => {
    const { expectedVersion, ...definition } = input;
    return ctx.services.registry.putProvider(input.id, {
      definition,
      ...(expectedVersion !== undefined ? { expectedVersion } : {}),
    });
  }),
  delete: adminProcedure.input(DeleteProviderInputSchema).mutation(async ({ ctx, input }) => {
    await ctx.services.registry.deleteProvider(input.id, input.expectedVersion);
    return { deleted: true as const };
  }),
});
