import type { Run } from '@cognition/contracts';
import type { StorageBackend } from '@cognition/storage';
import type { Logger } from '../logger';
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

  /** Claims `runId` for this node (always true on a single node). */
  async claim(runId: string): Promise<boolean> {
    if (!this.cluster) return true;
    const now = new Date();
    return this.storage.runs.claim(
      runId,
      this.cluster.nodeId,
      now,
      new Date(now.getTime() + this.cluster.leaseMs),
    );
  }

  /**
   * Whether recovery may take `run` over: on a single node, always (no other process is
   * alive); in a cluster, when nobody holds a valid claim on it.
   */
  isClaimable(run: Run, now = new Date()): boolean {
    if (!this.cluster) return true;
    return (
      run.ownerNode === null ||
      run.ownerNode === this.cluster.nodeId ||
      run.leaseExpiresAt === null ||
      run.leaseExpiresAt < now
    );
  }

  /** Starts renewing the claims of the runs this node executes. */
  start(): void {
    if (!this.cluster || this.timer) return;
    this.timer = setInterval(() => void this.renew(), Math.max(50, this.cluster.leaseMs / 3));
    this.timer.unref();
  }

  /**
   * Stops renewing; with `release`, lets the leases of the runs still here expire at once so
   * another node takes them over without waiting (graceful shutdown).
   */
  async stop(release: boolean): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (!this.cluster || !release) return;
    for (const runId of this.active.ids()) {
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
      const until = new Date(Date.now() + cluster.leaseMs);
      for (const runId of this.active.ids()) {
        let held: boolean;
        try {
          held = await this.storage.runs.renewLease(runId, cluster.nodeId, until);
        } catch (error) {
          // Storage unreachable: keep executing; the lease may still hold when it is back.
          this.logger.warn({ err: error, runId }, 'could not renew a run lease');
          continue;
        }
        if (!held && this.active.has(runId)) {
          this.logger.warn({ runId }, 'lost the lease of a run: another node executes it now');
          this.active.cancelLocal(runId, 'lost');
        }
      }
    } finally {
      this.renewing = false;
    }
  }
}
