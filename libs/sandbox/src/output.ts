import { StringDecoder } from 'node:string_decoder';
import { MAX_OUTPUT_BYTES } from './port';

/**
 * Collects a command's output in arrival order, keeping at most `limit` bytes. Chunks past the
 * limit are dropped (the producer keeps being drained, so it never blocks on a full pipe).
 */
export class OutputCollector {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly limit = MAX_OUTPUT_BYTES) {}

  push(chunk: Buffer): void {
    if (this.truncated) return;
    const room = this.limit - this.size;
    if (chunk.length > room) {
      this.truncated = true;
      if (room > 0) this.chunks.push(chunk.subarray(0, room));
      this.size = this.limit;
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  /** The text; a multi-byte character cut by the limit is dropped rather than mangled. */
  text(): string {
    const decoder = new StringDecoder('utf8');
    const body = decoder.write(Buffer.concat(this.chunks));
    return this.truncated ? body : body + decoder.end();
  }
}
