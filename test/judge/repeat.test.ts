import { describe, expect, test } from 'vitest';
import { combineStatuses } from '../../src/judge/repeat.js';

describe('the status of a repeated cell', () => {
  test('statuses: every status any repeat showed, in rule order, evidence from the first that showed it', () => {
    const c = combineStatuses([
      { status: 'valid', statuses: ['valid'], evidence: {} },
      { status: 'requests-queued', statuses: ['requests-queued'], evidence: { queued: { concurrency: 4, maxWaiting: 1 } } },
      { status: 'errors', statuses: ['errors'], evidence: { errors: { count: 2, byCode: { stall: 2 } } } },
    ]);
    expect(c.status).toBe('errors');
    expect(c.statuses).toEqual(['errors', 'requests-queued']);
    expect(c.evidence).toEqual({ queued: { concurrency: 4, maxWaiting: 1 }, errors: { count: 2, byCode: { stall: 2 } } });
    expect(combineStatuses([{ status: 'valid', statuses: ['valid'], evidence: {} }, { status: 'valid', statuses: ['valid'], evidence: {} }]).statuses).toEqual(['valid']);
  });
});
