import { describe, expect, it } from 'vitest';
import { fieldIssues } from './agent-form';

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
