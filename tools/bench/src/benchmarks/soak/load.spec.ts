import { LoadGate } from './load';

describe('LoadGate (the soak holds its load for a quiesced reading)', () => {
  it('pause waits for the actions in flight and holds new ones until resume', async () => {
    const gate = new LoadGate();
    const order: string[] = [];
    await gate.enter();
    const paused = gate.pause().then(() => order.push('paused'));
    const next = gate.enter().then(() => order.push('next action'));
    await Promise.resolve();
    order.push('first action ends');
    gate.leave();
    await paused;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(order).toEqual(['first action ends', 'paused']);
    gate.resume();
    await next;
    expect(order).toEqual(['first action ends', 'paused', 'next action']);
    gate.leave();
    // Nothing in flight: a pause is quiesced at once.
    await gate.pause();
    gate.resume();
  });
});
