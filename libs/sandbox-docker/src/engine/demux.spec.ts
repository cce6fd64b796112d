import { DockerStreamDemuxer } from './demux';

function frame(type: 1 | 2, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = type;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

describe('DockerStreamDemuxer', () => {
  const collect = (): { demuxer: DockerStreamDemuxer; seen: string[] } => {
    const seen: string[] = [];
    const demuxer = new DockerStreamDemuxer((payload, stream) =>
      seen.push(`${stream}:${payload.toString()}`),
    );
    return { demuxer, seen };
  };

  test('several frames in one chunk, in order', () => {
    const { demuxer, seen } = collect();
    demuxer.push(Buffer.concat([frame(1, 'out'), frame(2, 'err'), frame(1, 'more')]));
    expect(seen).toEqual(['stdout:out', 'stderr:err', 'stdout:more']);
  });

  test('a frame split anywhere, even inside its header, is reassembled', () => {
    const bytes = Buffer.concat([frame(1, 'hello'), frame(2, 'world')]);
    for (let cut = 1; cut < bytes.length; cut += 1) {
      const { demuxer, seen } = collect();
      demuxer.push(bytes.subarray(0, cut));
      demuxer.push(bytes.subarray(cut));
      expect(seen).toEqual(['stdout:hello', 'stderr:world']);
    }
  });

  test('byte by byte', () => {
    const { demuxer, seen } = collect();
    for (const byte of frame(2, 'slow')) demuxer.push(Buffer.from([byte]));
    expect(seen).toEqual(['stderr:slow']);
  });
});
