import type { AgentView, ProviderView } from '@cognition/contracts';

/** A registry write: the definition document and, optionally, the version it replaces. */
export interface RegistryWriteInput {
  definition: unknown;
  expectedVersion?: number;
}

/**
 * The configuration registry as the API needs it (the runtime's `RegistryService` satisfies it).
 * Global, not per tenant: agents and providers configure the server itself.
 * Errors carry a `code`: NOT_FOUND, CONFLICT (a built-in or file entry is read-only; a create of
 * an existing name), VERSION_CONFLICT (stale `expectedVersion`), VALIDATION_ERROR with `issues`
 * naming the definition's fields.
 */
export interface RegistryApi {
  listAgents(): Promise<AgentView[]>;
  getAgent(name: string): Promise<AgentView>;
  createAgent(definition: unknown): Promise<AgentView>;
  putAgent(name: string, write: RegistryWriteInput): Promise<AgentView>;
  deleteAgent(name: string, expectedVersion?: number): Promise<void>;
  listProviders(): Promise<ProviderView[]>;
  getProvider(id: string): Promise<ProviderView>;
  createProvider(definition: unknown): Promise<ProviderView>;
  putProvider(id: string, write: RegistryWriteInput): Promise<ProviderView>;
  deleteProvider(id: string, expectedVersion?: number): Promise<void>;
}
