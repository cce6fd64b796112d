import type { ApiServices } from '@cognition/api';
import type { Run, Session } from '@cognition/contracts';
import { StatelessThreads } from './stateless';
import { STATELESS_KEY } from './wire';

/**
 * The clean-up of stateless runs' threads (issue 28, stateless.ts) over a fake of the services
 * it reads: who deletes what, and when, including the sweep's grace (the e2e specs cover the
 * clean-up where a run ends; the sweep's fixed 30 s delays are checked here with a clock).
 */

const T0 = Date.parse('2026-11-28T00:00:00Z');

function session(id: string, mark?: string, createdAt = T0): Session {
  return {
    id,
    scopes: { user: 'ada' },
    metadata: mark ? { [STATELESS_KEY]: mark } : {},
    createdAt: new Date(createdAt),
  } as unknown as Session;
}

function run(status: Run['status'], finishedAt: number | null = T0): Run {
  return {
    status,
    finishedAt: finishedAt === null ? null : new Date(finishedAt),
    updatedAt: new Date(finishedAt ?? T0),
  } as unknown as Run;
}

function bed(sessions: Session[], runs: Record<string, Run[]>, now: number) {
  const deleted: string[] = [];
  const forgotten: string[] = [];
  const live = new Map(sessions.map((s) => [s.id, s]));
  const services = {
    storage: {
      sessions: {
        get: (id: string) => Promise.resolve(live.get(id) ?? null),
        list: (query: { metadata: Record<string, string> }) =>
          Promise.resolve({
            sessions: [...live.values()].filter((s) =>
              Object.entries(query.metadata).every(([k, v]) => s.metadata[k] === v),
            ),
          }),
        delete: (id: string, scope: Record<string, string>) => {
          expect(scope).toEqual({ user: 'ada' });
          deleted.push(id);
          live.delete(id);
          return Promise.resolve(true);
        },
      },
      runs: { list: (id: string) => Promise.resolve(runs[id] ?? []) },
    },
    runs: {
      forgetSession: (id: string) => {
        forgotten.push(id);
        return Promise.resolve();
      },
    },
  } as unknown as ApiServices;
  const warnings: string[] = [];
  const threads = new StatelessThreads(
    services,
    { warn: (_fields, message) => warnings.push(message) },
    () => now,
  );
  return { threads, deleted, forgotten, warnings };
}

describe('stateless run threads (issue 28)', () => {
  it("a background run's thread goes at once when its runs ended; not while one is open, nor unmarked, nor an answer's", async () => {
    const { threads, deleted, forgotten } = bed(
      [
        session('done', 'delete'),
        session('open', 'delete'),
        session('paused', 'delete'),
        session('kept'),
        session('answer', 'after_answer'),
        session('norun', 'delete'),
      ],
      {
        done: [run('completed')],
        open: [run('completed'), run('running', null)],
        paused: [run('requires_action', null)],
        kept: [run('completed')],
        answer: [run('completed')],
      },
      T0,
    );
    for (const id of ['done', 'open', 'paused', 'kept', 'answer', 'norun', 'missing']) {
      await threads.cleanUp(id, { sweep: false });
    }
    expect(deleted).toEqual(['done']);
    expect(forgotten).toEqual(['done']);
  });

  it('the sweep takes any marked thread whose runs all ended 30 s ago, or that got no run in 30 s', async () => {
    const now = T0 + 60_000;
    const { threads, deleted } = bed(
      [
        session('old-background', 'delete'),
        session('old-answer', 'after_answer'),
        session('recent-answer', 'after_answer'),
        session('old-norun', 'after_answer'),
        session('new-norun', 'delete', now - 1_000),
        session('old-open', 'delete'),
        session('unmarked'),
      ],
      {
        'old-background': [run('failed', T0)],
        'old-answer': [run('completed', T0 + 10_000)],
        'recent-answer': [run('completed', now - 5_000)],
        'old-open': [run('queued', null)],
        unmarked: [run('completed', T0)],
      },
      now,
    );
    expect(await threads.sweep()).toBe(3);
    expect(deleted.sort()).toEqual(['old-answer', 'old-background', 'old-norun']);
  });

  it('a failing delete is logged, not thrown, and the sweep tries again', async () => {
    const { threads, warnings } = bed([session('s', 'delete')], { s: [run('completed')] }, T0);
    const services = (threads as unknown as { services: ApiServices }).services;
    services.runs.forgetSession = () => Promise.reject(new Error('down'));
    expect(await threads.cleanUp('s', { sweep: false })).toBe(false);
    expect(warnings).toEqual(['deleting a stateless run thread failed']);
  });
});
