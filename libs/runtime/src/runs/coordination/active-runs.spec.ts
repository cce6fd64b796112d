import { InMemoryEventLog } from '../../events/event-log';
import { silentLogger } from '../../logger';
import { ActiveRuns } from './active-runs';
import { InProcessRunControl } from './in-process-run-control';

describe('ActiveRuns', () => {
  it('aborts a registered run on a cancel request, keeping the first reason', async () => {
    const control = new InProcessRunControl();
    const runs = new ActiveRuns(control, new InMemoryEventLog(), silentLogger);
    const run = runs.add('run_a', 's1', {});
    expect(runs.forSession('s1')).toBe(run);
    expect(await control.cancel('run_a', 'interrupted')).toBe(true);
    expect(await control.cancel('run_a', 'aborted')).toBe(true);
    expect(run.controller.signal.aborted).toBe(true);
    expect(run.cancelReason).toBe('interrupted');
  });

  it('stops listening once a run is removed', async () => {
    const control = new InProcessRunControl();
    const runs = new ActiveRuns(control, new InMemoryEventLog(), silentLogger);
    const run = runs.add('run_a', 's1', {});
    runs.add('run_b', 's2', {});
    runs.remove('run_a');
    runs.remove('run_a');
    expect(await control.cancel('run_a', 'aborted')).toBe(false);
    expect(run.controller.signal.aborted).toBe(false);
    expect(runs.has('run_a')).toBe(false);
    expect(runs.ids()).toEqual(['run_b']);
    expect(runs.forSession('s1')).toBeUndefined();
  });

  it('numbers the events of a run from its start sequence', () => {
    const runs = new ActiveRuns(new InProcessRunControl(), new InMemoryEventLog(), silentLogger);
    const run = runs.add('run_a', 's1', {}, 41);
    expect(run.emitter.emit({ type: 'status', status: 'thinking' })?.id).toBe('run_a:000000042');
  });
});
