import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { LOCK_FILE, lockResultsDir } from '../../src/results/lock.js';
import { WriteError, writeFileAtomic, writeFilesTogether } from '../../src/results/write.js';

const dir = (): string => mkdtempSync(join(tmpdir(), 'lsm-lock-'));

/** a pid that is not running: a child that has exited */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

describe('one run owns its results folder', () => {
  test('a second process is refused at once, naming the holder; released, the folder is free again', () => {
    const d = dir();
    const lock = lockResultsDir(d, new Date('2026-12-01T10:00:00Z'));
    expect(JSON.parse(readFileSync(join(d, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid, startedAt: '2026-12-01T10:00:00.000Z' });
    const url = new URL('../../src/results/lock.ts', import.meta.url).href;
    const other = spawnSync('npx', ['tsx', '-e', `import(${JSON.stringify(url)}).then((m) => m.lockResultsDir(${JSON.stringify(d)}))`], { encoding: 'utf8' });
    expect(other.status).not.toBe(0);
    expect(other.stderr).toContain(`another run is writing into ${d}: pid ${process.pid} on ${hostname()}, started 2026-12-01T10:00:00.000Z`);
    expect(other.stderr).toContain('LLM_BENCH_OUT=');
    lock.release();
    expect(existsSync(join(d, LOCK_FILE))).toBe(false);
    const again = spawnSync('npx', ['tsx', '-e', `import(${JSON.stringify(url)}).then((m) => m.lockResultsDir(${JSON.stringify(d)}).release())`], { encoding: 'utf8' });
    expect(again.status, again.stderr).toBe(0);
  });

  test('a stale lock (its process is gone) is taken over and named; an unreadable one too', () => {
    const d = dir();
    const pid = deadPid();
    writeFileSync(join(d, LOCK_FILE), JSON.stringify({ pid, host: hostname(), startedAt: '2026-11-30T09:00:00.000Z' }));
    const lock = lockResultsDir(d);
    expect(lock.tookOverFrom).toEqual({ pid, host: hostname(), startedAt: '2026-11-30T09:00:00.000Z' });
    expect(JSON.parse(readFileSync(join(d, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    lock.release();
    writeFileSync(join(d, LOCK_FILE), '{"pid": 12');
    const second = lockResultsDir(d);
    expect(JSON.parse(readFileSync(join(d, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    second.release();
  });

  test('release never removes a lock another run has taken since', () => {
    const d = dir();
    const lock = lockResultsDir(d);
    const theirs = JSON.stringify({ pid: 1, host: 'elsewhere', startedAt: '2026-12-01T11:00:00.000Z' });
    writeFileSync(join(d, LOCK_FILE), theirs);
    lock.release();
    expect(readFileSync(join(d, LOCK_FILE), 'utf8')).toBe(theirs);
  });
});

describe('a failed write', () => {
  test('names the file and the cause, and leaves the previous file as it was', () => {
    const d = dir();
    const path = join(d, 'speed-matrix.json');
    writeFileAtomic(path, 'old');
    // a folder where the temp file should go: the write fails (ENOENT), the old file stays
    const bad = join(d, 'missing-folder', 'speed-matrix.json');
    expect(() => writeFileAtomic(bad, 'new')).toThrow(WriteError);
    expect(() => writeFileAtomic(bad, 'new')).toThrow(`could not write ${bad} (`);
    expect(readFileSync(path, 'utf8')).toBe('old');
  });

  test('files written together: when one cannot be written, none is replaced', () => {
    const d = dir();
    const a = join(d, 'speed-matrix.json');
    writeFileAtomic(a, 'old json');
    const bad = join(d, 'missing-folder', 'speed-matrix.md');
    expect(() => writeFilesTogether([{ path: a, text: 'new json' }, { path: bad, text: 'new md' }])).toThrow(`could not write ${bad} (`);
    expect(readFileSync(a, 'utf8')).toBe('old json');
    expect(readdirSync(d).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});
