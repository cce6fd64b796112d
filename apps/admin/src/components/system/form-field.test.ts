import { describe, expect, it } from 'vitest';
import { fieldIssues, placeIssues } from './form-field';

describe('fieldIssues', () => {
  it('takes the {path, message} issues of a refused call and nothing else', () => {
    const refused = {
      data: { errors: [{ path: 'tools.1', message: 'unknown' }, { path: 3 }, null] },
    };
    expect(fieldIssues(refused)).toEqual([{ path: 'tools.1', message: 'unknown' }]);
    expect(fieldIssues(new Error('network down'))).toEqual([]);
    expect(fieldIssues(null)).toEqual([]);
  });
});

describe('placeIssues', () => {
  it('puts an issue on the field its path starts with, the others under the form', () => {
    const refused = {
      data: {
        errors: [
          { path: 'tools.1', message: 'unknown tool' },
          { path: 'interrupt_on.exec', message: 'not a tool' },
          { path: 'mode', message: 'bad mode' },
        ],
      },
    };
    const placed = placeIssues(refused, ['tools', 'interrupt_on'] as const);
    expect(placed.of('tools')).toEqual(['unknown tool']);
    expect(placed.of('interrupt_on')).toEqual(['not a tool']);
    expect(placed.unplaced).toEqual([{ path: 'mode', message: 'bad mode' }]);
    expect(placed.any).toBe(true);
  });
});
