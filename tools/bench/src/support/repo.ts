import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The repository root: the nearest directory at or above `start` holding nx.json. Works from
 * the sources (jest) and from the bundle in dist/tools/bench alike.
 */
export function findRepoRoot(start: string): string {
  for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'nx.json'))) return dir;
    if (path.dirname(dir) === dir) {
      throw new Error(
        `no nx.json found at or above ${start}: run the benchmarks from the repository`,
      );
    }
  }
}
