import { SseHeartbeat } from './sse-heartbeat';

class FakeStream {
  destroyed = false;
  readonly written: string[] = [];
  write(chunk: string): boolean {
    this.written.push(chunk);
    return true;
  }
}

describe('SseHeartbeat', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('pings every open stream with its own frame on one timer, and stops with the last stream', () => {
    const heartbeat = new SseHeartbeat(1000);
    const rest = new FakeStream();
    const trpc = new FakeStream();
    const removeRest = heartbeat.add(rest, ': ping\n\n');
    const removeTrpc = heartbeat.add(trpc, 'event: ping\ndata: \n\n\n');
    expect(jest.getTimerCount()).toBe(1);

    jest.advanceTimersByTime(2000);
    expect(rest.written).toEqual([': ping\n\n', ': ping\n\n']);
    expect(trpc.written).toEqual(['event: ping\ndata: \n\n\n', 'event: ping\ndata: \n\n\n']);

    removeRest();
    jest.advanceTimersByTime(1000);
    expect(rest.written).toHaveLength(2);
    expect(trpc.written).toHaveLength(3);
    expect(heartbeat.running).toBe(true);

    removeTrpc();
    removeTrpc();
    expect(heartbeat.size).toBe(0);
    expect(heartbeat.running).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('skips a destroyed stream and starts its timer again for a stream opened later', () => {
    const heartbeat = new SseHeartbeat(1000);
    const gone = new FakeStream();
    gone.destroyed = true;
    heartbeat.add(gone, ': ping\n\n')();
    expect(heartbeat.running).toBe(false);

    const later = new FakeStream();
    const destroyed = new FakeStream();
    destroyed.destroyed = true;
    heartbeat.add(later, ': ping\n\n');
    heartbeat.add(destroyed, ': ping\n\n');
    jest.advanceTimersByTime(1000);
    expect(later.written).toEqual([': ping\n\n']);
    expect(destroyed.written).toEqual([]);
  });

  it('with an interval of 0 never pings (heartbeats off)', () => {
    const heartbeat = new SseHeartbeat(0);
    const stream = new FakeStream();
    heartbeat.add(stream, ': ping\n\n');
    expect(heartbeat.running).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
  });
});
