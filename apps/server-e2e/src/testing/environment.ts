import type { Circus } from '@jest/types';
import { TestEnvironment } from 'jest-environment-node';
import type { E2eTestState } from './test-state';
import { STATE_KEY } from './test-state';

/**
 * The test environment of the e2e specs: jest's node environment that also tells the spec
 * whether the current test has failed (test-state.ts). `print-logs-on-failure.ts` reads it to
 * print the logs of the processes the failed test ran against (see apps/server-e2e/README.md).
 */
export default class E2eEnvironment extends TestEnvironment {
  private readonly state: E2eTestState = { currentTestFailed: false, hookFailed: false };

  override async setup(): Promise<void> {
    await super.setup();
    this.global[STATE_KEY] = this.state;
  }

  handleTestEvent(event: Circus.Event): void {
    if (event.name === 'test_start') this.state.currentTestFailed = false;
    if (event.name === 'test_fn_failure' || event.name === 'error') {
      this.state.currentTestFailed = true;
    }
    if (event.name === 'hook_failure') {
      if (event.test) this.state.currentTestFailed = true;
      else this.state.hookFailed = true;
    }
  }
}
