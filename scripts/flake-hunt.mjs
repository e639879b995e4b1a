#!/usr/bin/env node
/**
 * The flake hunt (issue 58): runs a test tier N times while other processes keep CPU cores busy,
 * as another job does on a shared CI runner, and prints each run's time and the failures by test.
 *
 *   node scripts/flake-hunt.mjs                     # the fast tier (npm test), 5 runs, 1 busy core
 *   node scripts/flake-hunt.mjs --tier slow --runs 2
 *   node scripts/flake-hunt.mjs --tier fast --runs 3 --hogs 0 --out /tmp/hunt
 *
 * --tier fast|slow   which command: `npm test` (fast) or `npm run test:slow` (slow)
 * --runs N           runs, one after another (1 to 50; default 5)
 * --hogs N           processes that spin for the whole of every run, each taking a core (default 1)
 * --out DIR          where each run's JSON results and log go (default: a new folder in the temp dir)
 * --                 anything after it is passed to Vitest (e.g. `-- test/load` for some files)
 *
 * Exit code: 0 when every run passed, 1 when any test failed, 2 on a bad argument.
 * The table it prints is what docs/ci.md records.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const TIERS = { fast: ['test'], slow: ['run', 'test:slow'] };

function usage(problem) {
  const head = readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(2, 17).map((l) => l.replace(/^ \*( |$)/, '')).join('\n');
  if (problem) {
    console.error(`flake-hunt: ${problem}\n\n${head}`);
    process.exit(2);
  }
  console.log(head);
  process.exit(0);
}

function parseArgs(argv) {
  const o = { tier: 'fast', runs: 5, hogs: 1, out: undefined, vitestArgs: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      o.vitestArgs = argv.slice(i + 1);
      break;
    }
    if (a === '--help' || a === '-h') usage();
    const value = argv[i + 1];
    if (!['--tier', '--runs', '--hogs', '--out'].includes(a)) usage(`unknown argument ${a}`);
    if (value === undefined || value.startsWith('--')) usage(`${a} needs a value`);
    i++;
    if (a === '--tier') {
      if (!Object.hasOwn(TIERS, value)) usage(`--tier is fast or slow, not ${value}`);
      o.tier = value;
    } else if (a === '--out') {
      o.out = resolve(value);
    } else {
      const n = Number(value);
      const [lo, hi] = a === '--runs' ? [1, 50] : [0, 16];
      if (!Number.isInteger(n) || n < lo || n > hi) usage(`${a} is a whole number from ${lo} to ${hi}, not ${value}`);
      o[a.slice(2)] = n;
    }
  }
  return o;
}

/** the spinning processes alive now: killed when a run ends, and whenever this script ends */
const hogs = new Set();
const killHogs = () => {
  for (const h of hogs) h.kill('SIGKILL');
  hogs.clear();
};
process.on('exit', killHogs);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    killHogs();
    process.exit(130);
  });
}

/** processes that spin until they are killed: each one core's worth of another job */
function startHogs(n) {
  for (let i = 0; i < n; i++) hogs.add(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  return killHogs;
}

function runOnce(o, dir, index) {
  const json = join(dir, `run-${index}.json`);
  const log = join(dir, `run-${index}.log`);
  const args = [...TIERS[o.tier], '--', '--reporter=dot', '--reporter=json', `--outputFile.json=${json}`, ...o.vitestArgs];
  // a report left by an earlier hunt in the same folder must not stand in for this run's
  rmSync(json, { force: true });
  const stopHogs = startHogs(o.hogs);
  const started = Date.now();
  const load = [];
  const sampler = setInterval(() => load.push(loadavg()[0]), 10_000);
  return new Promise((done) => {
    const child = spawn('npm', args, { cwd: root, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (b) => chunks.push(b));
    child.stderr.on('data', (b) => chunks.push(b));
    child.on('error', (err) => chunks.push(Buffer.from(`\nflake-hunt: could not start npm: ${err.message}\n`)));
    child.on('close', (code) => {
      clearInterval(sampler);
      stopHogs();
      writeFileSync(log, Buffer.concat(chunks));
      const meanLoad = load.length ? load.reduce((a, b) => a + b, 0) / load.length : loadavg()[0];
      done({ index, code, wallS: (Date.now() - started) / 1000, json, log, meanLoad });
    });
  });
}

/** the failed tests of one run's JSON report, or the reason it has none */
function readRun(run) {
  if (!existsSync(run.json)) return { error: `no JSON report (exit ${run.code}); see ${run.log}` };
  const r = JSON.parse(readFileSync(run.json, 'utf8'));
  const failures = [];
  for (const file of r.testResults) {
    const name = relative(root, file.name);
    const failedTests = file.assertionResults.filter((t) => t.status === 'failed');
    for (const t of failedTests) failures.push({ key: `${name} > ${t.fullName}`, message: firstLine(t.failureMessages?.[0]) });
    // a file that failed outside its tests (a hook, an import)
    if (file.status === 'failed' && failedTests.length === 0) failures.push({ key: `${name} (the file)`, message: firstLine(file.message) });
  }
  // a run that failed with no failed test (an unhandled error, a crash after the tests) is a failure too
  if (run.code !== 0 && failures.length === 0) failures.push({ key: `run (exit ${run.code}, no failed test)`, message: `see ${run.log}` });
  return {
    tests: { passed: r.numPassedTests, failed: r.numFailedTests, skipped: r.numPendingTests + (r.numTodoTests ?? 0) },
    failures,
  };
}

const firstLine = (s) => (s ?? '').split('\n').find((l) => l.trim() !== '')?.trim().slice(0, 200) ?? '';

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const dir = o.out ?? mkdtempSync(join(tmpdir(), `flake-hunt-${o.tier}-`));
  mkdirSync(dir, { recursive: true });
  const command = o.tier === 'fast' ? 'npm test' : 'npm run test:slow';
  console.log(`flake hunt: ${command}, ${o.runs} run(s), ${o.hogs} spinning process(es) on ${availableParallelism()} cores; results in ${dir}`);
  const rows = [];
  const byTest = new Map();
  for (let i = 1; i <= o.runs; i++) {
    const run = await runOnce(o, dir, i);
    const read = readRun(run);
    const failed = read.error ? 1 : read.failures.length;
    const line = read.error
      ? `run ${i}: exit ${run.code} in ${run.wallS.toFixed(0)} s: ${read.error}`
      : `run ${i}: exit ${run.code} in ${run.wallS.toFixed(0)} s · ${read.tests.passed} passed, ${read.tests.failed} failed, ${read.tests.skipped} skipped · load ${run.meanLoad.toFixed(1)}`;
    console.log(line);
    rows.push({ run: i, exit: run.code, wallS: run.wallS, load: run.meanLoad, failed, read });
    for (const f of read.failures ?? []) {
      const seen = byTest.get(f.key) ?? { runs: [], message: f.message };
      seen.runs.push(i);
      byTest.set(f.key, seen);
      console.log(`  ✗ ${f.key}: ${f.message}`);
    }
    if (read.error) byTest.set(`run ${i} (no report)`, { runs: [i], message: read.error });
  }
  const date = new Date().toISOString().slice(0, 10);
  const out = [
    '',
    `| run | tier | spinning | exit | wall (s) | load (1 min, mean) | passed | failed | skipped |`,
    `|---|---|---|---|---|---|---|---|---|`,
    ...rows.map(
      (r) =>
        `| ${r.run} | ${o.tier} | ${o.hogs} | ${r.exit} | ${r.wallS.toFixed(0)} | ${r.load.toFixed(1)} | ${r.read.tests?.passed ?? '—'} | ${r.read.tests?.failed ?? '—'} | ${r.read.tests?.skipped ?? '—'} |`,
    ),
    '',
    byTest.size === 0 ? `No failures in ${o.runs} run(s) (${date}).` : `Failures by test (${date}):`,
    ...[...byTest].map(([k, v]) => `- ${k}: failed in run(s) ${v.runs.join(', ')} of ${o.runs}: ${v.message}`),
  ];
  console.log(out.join('\n'));
  writeFileSync(join(dir, 'summary.md'), out.join('\n') + '\n');
  process.exit(rows.every((r) => r.exit === 0 && r.failed === 0) ? 0 : 1);
}

await main();
