/**
 * What the test environment (`environment.ts`) tells the spec about the test running, in the
 * spec's global {@link STATE_KEY}: `afterEach` cannot see by itself whether its test failed.
 */
export interface E2eTestState {
  /** The test body, one of its beforeEach/afterEach hooks, or an uncaught error failed it. */
  currentTestFailed: boolean;
  /** A beforeAll/afterAll hook failed (the tests it guards may not have run at all). */
  hookFailed: boolean;
}

export const STATE_KEY = '__cognitionE2e';
