import { describe, expect, test } from 'vitest';
import { cellPrompts, requestTail, streamLead, TAIL_DIGITS } from '../../src/prompts/cell-prompts.js';

describe('cellPrompts', () => {
  const shared = 'RUN-42 context 4096\nSome calibrated filler text.';

  test('shared: every request starts with the byte-identical shared text', () => {
    const c = cellPrompts({ sharedText: shared, concurrency: 4, mode: 'shared' });
    const prompts = [c.prompt(0, 0), c.prompt(1, 1), c.prompt(3, 17)];
    for (const p of prompts) expect(p.startsWith(shared)).toBe(true);
    expect(new Set(prompts).size).toBe(3);
    expect(c.prompt(3, 17)).toBe(shared + requestTail(17));
    expect(c.scoutPrompts()).toHaveLength(1);
    expect(c.scoutPrompts()[0]!.startsWith(shared)).toBe(true);
    expect(c.calibrationSamples).toEqual({ lead: '', tail: requestTail(0) });
  });

  test('distinct: streams differ from the first characters; fixed widths', () => {
    const c = cellPrompts({ sharedText: shared, concurrency: 3, mode: 'distinct' });
    expect(c.prompt(0, 5).slice(0, 14)).not.toBe(c.prompt(1, 5).slice(0, 14));
    expect(c.prompt(2, 9)).toBe(streamLead(2) + shared + requestTail(9));
    expect(c.scoutPrompts()).toHaveLength(3);
    expect(c.calibrationSamples.lead).toBe(streamLead(0));
    expect(requestTail(0).length).toBe(requestTail(123_456).length);
    expect(streamLead(0).length).toBe(streamLead(127).length);
    expect(requestTail(7)).toContain('7'.padStart(TAIL_DIGITS, '0'));
  });

  test('bad concurrency is a setup error', () => {
    expect(() => cellPrompts({ sharedText: 'x', concurrency: 0, mode: 'shared' })).toThrow(/concurrency must be an integer/);
  });
});
