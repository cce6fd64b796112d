import { OutputCollector } from './output';

describe('OutputCollector', () => {
  test('keeps chunks in order below the limit', () => {
    const collector = new OutputCollector(10);
    collector.push(Buffer.from('abc'));
    collector.push(Buffer.from('def'));
    expect(collector.text()).toBe('abcdef');
    expect(collector.truncated).toBe(false);
  });

  test('an exact fit is not truncated', () => {
    const collector = new OutputCollector(6);
    collector.push(Buffer.from('abcdef'));
    expect(collector.text()).toBe('abcdef');
    expect(collector.truncated).toBe(false);
  });

  test('stops at the limit and flags truncation', () => {
    const collector = new OutputCollector(5);
    collector.push(Buffer.from('abc'));
    collector.push(Buffer.from('defgh'));
    collector.push(Buffer.from('ijk'));
    expect(collector.text()).toBe('abcde');
    expect(collector.truncated).toBe(true);
  });

  test('a multi-byte character cut by the limit is dropped, not mangled', () => {
    const collector = new OutputCollector(4);
    collector.push(Buffer.from('ab€'));
    expect(collector.text()).toBe('ab');
    expect(collector.truncated).toBe(true);
  });

  test('a multi-byte character split across chunks is decoded', () => {
    const collector = new OutputCollector(100);
    const euro = Buffer.from('€');
    collector.push(euro.subarray(0, 1));
    collector.push(euro.subarray(1));
    expect(collector.text()).toBe('€');
  });
});
