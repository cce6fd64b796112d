import { InProcessRunControl } from './in-process-run-control';

describe('InProcessRunControl', () => {
  it('delivers cancel requests to the listeners of the run until they stop listening', async () => {
    const control = new InProcessRunControl();
    const got: string[] = [];
    const stop = control.listen('run_a', (reason) => got.push(`a:${reason}`));
    control.listen('run_b', (reason) => got.push(`b:${reason}`));
    expect(await control.cancel('run_a', 'aborted')).toBe(true);
    stop();
    stop();
    expect(await control.cancel('run_a', 'interrupted')).toBe(false);
    expect(await control.cancel('run_b', 'interrupted')).toBe(true);
    expect(got).toEqual(['a:aborted', 'b:interrupted']);
  });

  it('answers false for a run nobody executes', async () => {
    expect(await new InProcessRunControl().cancel('run_x', 'aborted')).toBe(false);
  });
});
