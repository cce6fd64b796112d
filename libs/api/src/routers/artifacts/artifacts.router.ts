import { publicProcedure, router } from '../../trpc';
import {
  artifactVersionsHandler,
  createArtifactHandler,
  deleteArtifactHandler,
  getArtifactHandler,
  listArtifactsHandler,
  updateArtifactHandler,
} from './artifacts.handlers';
import {
  ArtifactIdInputSchema,
  CreateArtifactApiInputSchema,
  GetArtifactApiInputSchema,
  ListArtifactsApiInputSchema,
  UpdateArtifactApiInputSchema,
} from './schemas';

/** Durable, versioned, scope-aware files (docs/artifacts.md). */
export const artifactsRouter = router({
  create: publicProcedure.input(CreateArtifactApiInputSchema).mutation(createArtifactHandler),
  list: publicProcedure.input(ListArtifactsApiInputSchema).query(listArtifactsHandler),
  get: publicProcedure.input(GetArtifactApiInputSchema).query(getArtifactHandler),
  update: publicProcedure.input(UpdateArtifactApiInputSchema).mutation(updateArtifactHandler),
  delete: publicProcedure.input(ArtifactIdInputSchema).mutation(deleteArtifactHandler),
  versions: publicProcedure.input(ArtifactIdInputSchema).query(artifactVersionsHandler),
});
