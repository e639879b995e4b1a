import { test, expect } from 'vitest';
import { monoMs } from '../../src/clock.js';
test('monotonic clock advances', () => { const a = monoMs(); const b = monoMs(); expect(b).toBeGreaterThanOrEqual(a); });
