import type { ResponseSpec } from './route';
import { ErrorBodySchema } from './schemas/common';

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

export const SESSION_NOT_FOUND = errorResponse("Session not found (or outside the caller's scope)");

/** What a JSON body that cannot be read answers. */
export const BODY_ERRORS = {
  400: errorResponse('Malformed JSON body'),
  413: errorResponse('Body larger than COGNITION_MAX_BODY_BYTES'),
};
