import { toStorageError } from './errors';

describe('toStorageError', () => {
  // A PostgreSQL outage e2e answered one request 500 instead of 503: the driver's error while
  // the server stopped or started again was not recognised as unavailability.
  it('names every way PostgreSQL says it is not there UNAVAILABLE (a 503, never a 500)', () => {
    const cases: unknown[] = [
      Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
      Object.assign(new Error('the database system is shutting down'), { code: '57P03' }),
      Object.assign(new Error('terminating connection due to crash'), { code: '57P02' }),
      Object.assign(new Error('connection failure'), { code: '08006' }),
      Object.assign(new Error('could not connect'), { code: '08001' }),
      new Error('Connection terminated unexpectedly'),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    ];
    for (const error of cases) {
      expect(toStorageError(error, 'create session').code).toBe('UNAVAILABLE');
    }
  });

  it('keeps other failures STORAGE_ERROR', () => {
    const syntax = Object.assign(new Error('syntax error'), { code: '42601' });
    expect(toStorageError(syntax, 'list').code).toBe('STORAGE_ERROR');
  });
});
