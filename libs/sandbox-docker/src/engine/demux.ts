/** Size of the header Docker puts before every frame of a non-TTY attach stream. */
const HEADER_BYTES = 8;

/**
 * Splits Docker's multiplexed attach stream (frames of `[type, 0, 0, 0, size (uint32 BE)]` +
 * payload, type 1 = stdout, 2 = stderr) into payloads, in arrival order. Frames may be split
 * across chunks and chunks may hold several frames.
 */
export class DockerStreamDemuxer {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly onPayload: (payload: Buffer, stream: 'stdout' | 'stderr') => void) {}

  push(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= HEADER_BYTES) {
      const size = this.pending.readUInt32BE(4);
      if (this.pending.length < HEADER_BYTES + size) return;
      const type = this.pending[0];
      const payload = this.pending.subarray(HEADER_BYTES, HEADER_BYTES + size);
      this.pending = this.pending.subarray(HEADER_BYTES + size);
      if (size > 0) this.onPayload(payload, type === 2 ? 'stderr' : 'stdout');
    }
  }
}
