import type { ResponseSpec } from './route';
import { ErrorBodySchema } from './schemas';

/** An error response of the REST surface, as documented in the OpenAPI document. */
export function errorResponse(description: string): ResponseSpec {
  return { description, schema: ErrorBodySchema };
}

/** Failures every caller-identified route can answer with. */
export const CALLER_ERRORS = {
  401: errorResponse('Missing or invalid API key (when API keys are configured)'),
  403: errorResponse('A required X-Cognition-Scope-* header is missing (when scoping is enabled)'),
};

export const INVALID = errorResponse('Invalid input; `errors` lists the offending fields');
