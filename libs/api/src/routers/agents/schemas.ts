import { AgentNameSchema } from '@cognition/contracts';
import { z } from 'zod';

/*
 * An agent definition is one document in the agent files' snake_case form; its fields are
 * validated by the runtime's one agent parser (the same as for files), so these inputs only
 * pick out the entry's name and version and pass the rest through.
 */

const ExpectedVersionSchema = z.number().int().min(1);

export const AgentNameInputSchema = z.strictObject({ name: AgentNameSchema });

/** `agents.create`: the definition document, `name` included. */
export const CreateAgentInputSchema = z.record(z.string(), z.unknown());

/** `agents.update`: the definition document plus its `name` and optional `expected_version`. */
export const UpdateAgentInputSchema = z.looseObject({
  name: AgentNameSchema,
  expected_version: ExpectedVersionSchema.optional(),
});

export const DeleteAgentInputSchema = z.strictObject({
  name: AgentNameSchema,
  expected_version: ExpectedVersionSchema.optional(),
});
