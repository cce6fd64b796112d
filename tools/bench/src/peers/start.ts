import type { BenchContext } from '../harness/types';
import { ensurePeersInstalled } from './install';
import { startLangGraphPeer } from './langgraph';
import { startMastraPeer } from './mastra';
import type { PeerServer } from './peer';

/** The peers of benchmarks 1–4, by their storage. */
export type PeerName = 'langgraph' | 'mastra-libsql' | 'mastra-postgresql';

export const ALL_PEERS: readonly PeerName[] = ['langgraph', 'mastra-libsql', 'mastra-postgresql'];

/** Settings a benchmark may change from a peer's defaults. */
export interface PeerOptions {
  /** Runs the LangGraph dev server executes at once (default: `langgraph dev`'s 10). */
  langgraphWorkers?: number;
}

function startPeer(
  ctx: BenchContext,
  name: PeerName,
  modelUrl: string,
  options: PeerOptions,
): Promise<PeerServer> {
  switch (name) {
    case 'langgraph':
      return startLangGraphPeer(ctx, {
        modelUrl,
        ...(options.langgraphWorkers === undefined ? {} : { workers: options.langgraphWorkers }),
      });
    case 'mastra-libsql':
      return startMastraPeer(ctx, { modelUrl, storage: 'libsql' });
    case 'mastra-postgresql':
      return startMastraPeer(ctx, { modelUrl, storage: 'postgresql' });
  }
}

/**
 * Starts `names` one after another, each in its own process, calling the model at `modelUrl`;
 * stops those already started when one fails. Installs the peers' package first when it is not
 * installed yet (tools/bench/peers, `ensurePeersInstalled`).
 */
export async function startPeers(
  ctx: BenchContext,
  modelUrl: string,
  names: readonly PeerName[],
  options: PeerOptions = {},
): Promise<Map<PeerName, PeerServer>> {
  const started = new Map<PeerName, PeerServer>();
  if (names.length > 0) await ensurePeersInstalled(ctx.repoRoot, (line) => ctx.log(line));
  try {
    for (const name of names) {
      ctx.log(`starting peer ${name}`);
      started.set(name, await startPeer(ctx, name, modelUrl, options));
    }
    return started;
  } catch (error) {
    await stopPeers(started);
    throw error;
  }
}

export async function stopPeers(peers: Map<PeerName, PeerServer>): Promise<void> {
  for (const peer of peers.values()) await peer.stop();
}
