import type { BenchContext } from '../harness/types';
import { startLangGraphPeer } from './langgraph';
import { startMastraPeer } from './mastra';
import type { PeerServer } from './peer';

/** The peers of benchmarks 1–4, by their storage. */
export type PeerName = 'langgraph' | 'mastra-libsql' | 'mastra-postgresql';

export const ALL_PEERS: readonly PeerName[] = ['langgraph', 'mastra-libsql', 'mastra-postgresql'];

function startPeer(ctx: BenchContext, name: PeerName, modelUrl: string): Promise<PeerServer> {
  switch (name) {
    case 'langgraph':
      return startLangGraphPeer(ctx, { modelUrl });
    case 'mastra-libsql':
      return startMastraPeer(ctx, { modelUrl, storage: 'libsql' });
    case 'mastra-postgresql':
      return startMastraPeer(ctx, { modelUrl, storage: 'postgresql' });
  }
}

/**
 * Starts `names` one after another, each in its own process, calling the model at `modelUrl`;
 * stops those already started when one fails.
 */
export async function startPeers(
  ctx: BenchContext,
  modelUrl: string,
  names: readonly PeerName[],
): Promise<Map<PeerName, PeerServer>> {
  const started = new Map<PeerName, PeerServer>();
  try {
    for (const name of names) {
      ctx.log(`starting peer ${name}`);
      started.set(name, await startPeer(ctx, name, modelUrl));
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
