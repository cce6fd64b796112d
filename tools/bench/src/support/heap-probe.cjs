// Preloaded (`node --require`) into a process benchmark 4 measures (tools/bench/src/support/
// heap-probe.ts starts and reads it). On SIGUSR2 it runs a full garbage collection and writes
// the V8 heap's used size, which is then the live heap, with the count of readings, to
// $HEAP_PROBE_DIR/heap-<pid>.json. A heap snapshot would say the same and which objects make it
// up, but writing one of a server with 1,000 open streams takes minutes on a loaded machine.
'use strict';
const { writeFileSync, renameSync } = require('node:fs');
const path = require('node:path');
const v8 = require('node:v8');
const vm = require('node:vm');

const dir = process.env.HEAP_PROBE_DIR;
if (dir) {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  let readings = 0;
  process.on('SIGUSR2', () => {
    // A second pass collects what the first one's finalizers (weak references) released.
    gc();
    gc();
    readings += 1;
    const file = path.join(dir, `heap-${process.pid}.json`);
    const usedHeapBytes = v8.getHeapStatistics().used_heap_size;
    writeFileSync(`${file}.tmp`, JSON.stringify({ readings, usedHeapBytes }));
    renameSync(`${file}.tmp`, file);
  });
}
