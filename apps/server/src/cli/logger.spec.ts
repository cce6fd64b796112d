import { effectiveLogFormat } from './logger';

describe('effectiveLogFormat', () => {
  it('auto is pretty on a terminal and JSON lines anywhere else; an explicit format wins', () => {
    expect(effectiveLogFormat('auto', true)).toBe('pretty');
    expect(effectiveLogFormat('auto', false)).toBe('json');
    expect(effectiveLogFormat('json', true)).toBe('json');
    expect(effectiveLogFormat('pretty', false)).toBe('pretty');
  });
});
