import { isCircuitOpenError } from '@cognition/circuit-breaker';
import { RuntimeError, errorMessage } from '../../errors';
import { providerErrorStatus } from '../../providers/chat-model';
import type { ResolvedModel } from '../../providers/registry';

/** A model call the conversation did not fit (the run's error event code CONTEXT_OVERFLOW). */
export function contextOverflow(
  resolved: ResolvedModel,
  error: unknown,
  why: string,
): RuntimeError {
  return new RuntimeError(
    'CONTEXT_OVERFLOW',
    `The conversation exceeds the context window of ${resolved.provider.id}/${resolved.model} (${why}): ${errorMessage(error)}`,
    { cause: error },
  );
}

/** Maps a failed model call to the runtime's typed error (the run's `error` event code). */
export function toProviderError(error: unknown, resolved: ResolvedModel): RuntimeError {
  if (error instanceof RuntimeError) return error;
  if (isCircuitOpenError(error)) {
    return new RuntimeError(
      'CIRCUIT_OPEN',
      `Provider "${resolved.provider.id}" is failing; its circuit breaker is open (${error.message})`,
      { cause: error },
    );
  }
  const status = providerErrorStatus(error);
  const where = `provider "${resolved.provider.id}" (model ${resolved.model})`;
  return new RuntimeError(
    'PROVIDER_ERROR',
    status === undefined
      ? `The call to ${where} failed: ${errorMessage(error)}`
      : `The call to ${where} failed with HTTP ${status}: ${errorMessage(error)}`,
    { cause: error },
  );
}
