import type { Run } from '@cognition/contracts';
import type { RunFence, StorageBackend } from '@cognition/storage';
import type { Logger } from '../../logger';
import type { ActiveRun } from '../run-context';
import type { ActiveRuns } from './active-runs';

/** Several server nodes on one database: who this node is and how long its claims hold. */
export interface ClusterOptions {
  /** This node's id (unique among the nodes sharing the database). */
  nodeId: string;
  /** How long a claim on a run holds without renewal; renewed every third of it. */
  leaseMs: number;
}

/**
 * Run ownership by lease. A node executes a run only after claiming it in storage (a
 * conditional update, so exactly one node wins); it renews the claims of the runs it executes
 * every third of the lease, and stops executing a run whose claim it lost (another node took
 * it over after the lease expired, e.g. while this node was partitioned). Without cluster
 * options (one node) every claim succeeds and nothing is renewed.
 */
export class RunLeases {
  private timer: NodeJS.Timeout | null = null;
  private renewing = false;
  /**
   * Per execution here (a run resumed here again is a new one): until when the last renewal
   * stored holds (ms).
   */
  private readonly heldUntil = new WeakMap<ActiveRun, number>();
  /** When the previous renewal round began: every claim made since holds past it + a lease. */
  private previousRound = Date.now();

  constructor(
    private readonly storage: StorageBackend,
    private readonly cluster: ClusterOptions | null,
    private readonly active: ActiveRuns,
    private readonly logger: Logger,
    /** Whether this node has a free execution slot (its `RunQueue`). */
    private readonly hasFreeSlot: () => boolean = () => true,
  ) {}

  /**
   * In a cluster, a node without a free slot leaves a run it accepted `queued` and unclaimed,
   * for whichever node has a slot first (their sweeps adopt it); one node queues it itself.
   */
  deferStart(): boolean {
    return this.cluster !== null && !this.hasFreeSlot();
  }

  /** Whether recovery may take one more run here (a cluster node: only into a free slot). */
  mayTakeMore(): boolean {
    return this.cluster === null || this.hasFreeSlot();
  }

  get nodeId(): string | null {
    return this.cluster?.nodeId ?? null;
  }

  /**
   * The claim a run this node creates and executes carries from its first write, so no other
   * node's sweep can take it between its creation and its start; none on a single node or when
   * the run is left to a node with a free slot.
   */
  initialClaim(): { ownerNode: string; leaseExpiresAt: Date } | Record<string, never> {
    if (!this.cluster || this.deferStart()) return {};
    return {
      ownerNode: this.cluster.nodeId,
      leaseExpiresAt: new Date(Date.now() + this.cluster.leaseMs),
    };
  }

  /**
   * The claim a paused run this node resumes carries from the write that resumes it: it runs
   * here even when every slot is taken (it waits for one `queued`), since a node adopting it
   * unclaimed would start it without the decisions it was resumed with.
   */
  resumeClaim(): { ownerNode: string; leaseExpiresAt: Date } | Record<string, never> {
    if (!this.cluster) return {};
    return {
      ownerNode: this.cluster.nodeId,
      leaseExpiresAt: new Date(Date.now() + this.cluster.leaseMs),
    };
  }

  /**
   * Claims `runId` for this node: null when another node holds it; else the fence every write
   * of the execution that follows carries (null on a single node, where nothing is fenced: no
   * other process writes the run).
   */
  async claim(runId: string): Promise<{ fence: RunFence | null } | null> {
    if (!this.cluster) return { fence: null };
    const now = new Date();
    const ownerNode = this.cluster.nodeId;
    const claim = await this.storage.runs.claim(
      runId,
      ownerNode,
      now,
      new Date(now.getTime() + this.cluster.leaseMs),
    );
    return claim === null ? null : { fence: { runId, ownerNode, claim } };
  }

  /**
   * Whether recovery may take `run` over: on a single node, always (no other process is
   * alive); in a cluster, when nobody holds a valid claim on it. A valid claim of this node's
   * id is this process's own once its cluster duties started: the run is executing here, or
   * being started here between its creation (which carries the claim) and its execution —
   * taking it then would execute it twice on this node (issue 31, the chaos run: under load
   * that window met a sweep, and two executions wrote one run's events and answer). Only the
   * startup recovery, before any run starts here, takes what an earlier process of this node
   * left without waiting for its lease to expire.
   */
  isClaimable(run: Run, now = new Date()): boolean {
    if (!this.cluster) return true;
    return (
      run.ownerNode === null ||
      (run.ownerNode === this.cluster.nodeId && this.timer === null) ||
      run.leaseExpiresAt === null ||
      run.leaseExpiresAt < now
    );
  }

  /**
   * Whether this node surely still holds `run`'s claim: its last stored renewal (or, for a run
   * claimed since the previous round, that round plus a lease) holds at least a third of a
   * lease more. Renewals come every third of a lease, so a node whose renewals are on time
   * always passes; one stalled past that (under load, partitioned, its database restarting)
   * stops before another node can take the run over, instead of calling the model for a run
   * that may be executing elsewhere. Always true on a single node.
   */
  surelyHeld(run: ActiveRun): boolean {
    if (!this.cluster) return true;
    const heldUntil = this.heldUntil.get(run) ?? this.previousRound + this.cluster.leaseMs;
    return Date.now() + this.cluster.leaseMs / 3 < heldUntil;
  }

  /** Starts renewing the claims of the runs this node executes. */
  start(): void {
    if (!this.cluster || this.timer) return;
    this.previousRound = Date.now();
    this.timer = setInterval(() => void this.renew(), Math.max(50, this.cluster.leaseMs / 3));
    this.timer.unref();
  }

  /**
   * Stops renewing, and lets the leases of the runs named in `release` expire at once so another
   * node takes them over without waiting (graceful shutdown).
   */
  async stop(release: readonly string[]): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (!this.cluster) return;
    for (const runId of release) {
      await this.storage.runs
        .renewLease(runId, this.cluster.nodeId, new Date(0))
        .catch((error: unknown) =>
          this.logger.warn({ err: error, runId }, 'could not release a run lease'),
        );
    }
  }

  private async renew(): Promise<void> {
    const cluster = this.cluster;
    if (!cluster || this.renewing) return;
    this.renewing = true;
    try {
      const roundStarted = Date.now();
      const interval = cluster.leaseMs / 3;
      const until = new Date(roundStarted + cluster.leaseMs);
      for (const run of this.active.all()) {
        const { runId } = run;
        // A run claimed since the previous round holds at least a lease past that round.
        const heldUntil = this.heldUntil.get(run) ?? this.previousRound + cluster.leaseMs;
        let held: boolean;
        try {
          held = await this.storage.runs.renewLease(runId, cluster.nodeId, until);
        } catch (error) {
          this.logger.warn({ err: error, runId }, 'could not renew a run lease');
          // Storage unreachable: keep executing while the lease surely holds; stop before it
          // can expire (the next round would come too late), or a node taking the run over
          // once storage is back would execute it while this one still does (issue 31, the
          // chaos run: a PostgreSQL restart longer than the lease had two nodes streaming one
          // answer). Whoever claims it next resumes it from its last checkpoint.
          if (Date.now() + interval >= heldUntil && this.active.has(runId)) {
            this.logger.warn(
              { runId },
              'stopped executing a run whose lease could not be renewed before it expires',
            );
            this.active.cancelLocal(runId, 'lost');
          } else {
            this.heldUntil.set(run, heldUntil);
          }
          continue;
        }
        if (held) {
          this.heldUntil.set(run, until.getTime());
        } else if (this.active.has(runId)) {
          this.logger.warn({ runId }, 'lost the lease of a run: another node executes it now');
          this.active.cancelLocal(runId, 'lost');
        }
      }
      this.previousRound = roundStarted;
    } finally {
      this.renewing = false;
    }
  }
}
