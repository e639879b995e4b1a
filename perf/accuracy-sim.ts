/**
 * The simulator for perf/accuracy.ts, in its own process so the client's process.cpuUsage() counts
 * the client alone. Starts the tiny profile with the overrides given as JSON in argv[2] (default:
 * none), prints one JSON line `{"url": "..."}` on stdout, and serves until stdin closes or a
 * SIGTERM/SIGINT arrives.
 *
 *   npx tsx perf/accuracy-sim.ts '{"stepBaseMs":20}'
 */
import { startSim, type SimProfileParams } from '../src/sim/index.js';

const overrides = JSON.parse(process.argv[2] ?? '{}') as Partial<SimProfileParams>;
const sim = await startSim({ profile: 'tiny', overrides });
process.stdout.write(`${JSON.stringify({ url: sim.url })}\n`);

let closing = false;
const stop = (): void => {
  if (closing) return;
  closing = true;
  void sim.close().then(() => process.exit(0));
};
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
