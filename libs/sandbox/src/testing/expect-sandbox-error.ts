import { SandboxError } from '../errors';
import type { SandboxErrorCode } from '../errors';

/** Expects `promise` to reject with a SandboxError of `code`; returns the error. */
export async function expectSandboxError(
  promise: Promise<unknown>,
  code: SandboxErrorCode,
): Promise<SandboxError> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  if (!(caught instanceof SandboxError)) {
    throw new Error(
      `expected a SandboxError ${code}, got ${caught === undefined ? 'success' : describeValue(caught)}`,
    );
  }
  expect(caught.code).toBe(code);
  return caught;
}

function describeValue(value: unknown): string {
  return value instanceof Error ? `${value.name}: ${value.message}` : JSON.stringify(value);
}
