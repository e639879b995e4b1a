/**
 * The embedded simulated LLM inference server. `startSim` serves a profile on loopback, in this
 * thread or (thread: true) in a worker thread with its own event loop.
 */

import { Worker } from 'node:worker_threads';
import { createSimServer } from './server.js';
import { resolveSimProfile, type SimPersonality, type SimProfile, type SimProfileOverrides } from './profiles.js';

export { SIM_PROFILES, checkSimOverrides, getSimProfile, resolveSimProfile } from './profiles.js';
export type { SimProfile, SimProfileParams, SimProfileOverrides, SimPersonality } from './profiles.js';
export { countTokens } from './tokenizer.js';
export { simTokenizerJson, simTokenizerJsonText } from './tokenizer-json.js';
export { renderChat } from './chat-template.js';

export interface SimOptions {
  /** profile name (default 'tiny') */
  profile?: string;
  /** default: the profile's */
  personality?: SimPersonality;
  /** default '127.0.0.1' */
  host?: string;
  /** default 0 (any free port) */
  port?: number;
  /** run the server in a worker thread with its own event loop (default false) */
  thread?: boolean;
  /** any profile parameter (Partial<SimProfileParams>), with faults merged field by field */
  overrides?: SimProfileOverrides;
}

export interface SimHandle {
  /** http://HOST:PORT */
  url: string;
  /** the resolved profile */
  profile: SimProfile;
  close(): Promise<void>;
}

/** Messages between startSim and the worker. */
export type WorkerReply = { kind: 'ready'; url: string } | { kind: 'error'; message: string } | { kind: 'closed' };

export async function startSim(options: SimOptions = {}): Promise<SimHandle> {
  const profile = resolveSimProfile(options.profile ?? 'tiny', options.overrides, options.personality);
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  if (!options.thread) {
    const sim = createSimServer(profile);
    const url = await sim.listen(host, port);
    return { url, profile, close: () => sim.close() };
  }
  return startInWorker(profile, host, port);
}

function startInWorker(profile: SimProfile, host: string, port: number): Promise<SimHandle> {
  const worker = new Worker(new URL('./worker.mjs', import.meta.url), {
    workerData: { profile, host, port },
    // a larger young generation: fewer scavenges interrupting the step loop at 1,000+ streams
    resourceLimits: { maxYoungGenerationSizeMb: 96 },
  });
  return new Promise((resolve, reject) => {
    const onExit = (code: number): void => reject(new Error(`sim worker exited (code ${code}) before it was ready`));
    worker.once('error', reject);
    worker.once('exit', onExit);
    worker.once('message', (m: WorkerReply) => {
      worker.off('error', reject);
      worker.off('exit', onExit);
      if (m.kind === 'error') {
        void worker.terminate();
        reject(new Error(m.message));
        return;
      }
      if (m.kind !== 'ready') return;
      let closing: Promise<void> | undefined;
      resolve({
        url: m.url,
        profile,
        close: () =>
          (closing ??= new Promise<void>((done) => {
            const timer = setTimeout(() => void worker.terminate().then(() => done()), 5000);
            worker.once('exit', () => {
              clearTimeout(timer);
              done();
            });
            worker.postMessage({ kind: 'close' });
          })),
      });
    });
  });
}
