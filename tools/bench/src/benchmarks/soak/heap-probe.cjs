// Preloaded into the soak's servers (node --expose-gc --require): on SIGUSR2, a full garbage
// collection, then the heap used written to stderr as `soak-heap-after-gc <bytes>`. The heap
// used read from /metrics under load is mostly garbage waiting for the next major GC (one run's
// readings went from 61 to 246 MiB while its heap snapshots held 64-70 MiB), so its trend says
// where the readings fell in the GC cycle, not whether anything is retained; after a full GC
// what is left is what the process holds. Not bundled: loaded from the source tree.
'use strict';

process.on('SIGUSR2', () => {
  globalThis.gc();
  process.stderr.write(`soak-heap-after-gc ${process.memoryUsage().heapUsed}\n`);
});
