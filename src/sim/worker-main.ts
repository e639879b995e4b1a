/** The sim's worker thread: serves one profile until the parent says close. */

import { parentPort, workerData } from 'node:worker_threads';
import { createSimServer } from './server.js';
import type { SimProfile } from './profiles.js';

interface Data {
  profile: SimProfile;
  host: string;
  port: number;
}

const port = parentPort;
if (!port) throw new Error('sim worker-main.ts must run in a worker thread');
const data = workerData as Data;
const sim = createSimServer(data.profile);
try {
  const url = await sim.listen(data.host, data.port);
  port.postMessage({ kind: 'ready', url });
} catch (e) {
  port.postMessage({ kind: 'error', message: (e as Error).message });
  process.exit(1);
}
port.on('message', (m: { kind: string }) => {
  if (m.kind === 'close') {
    void sim.close().then(() => {
      port.close();
      process.exit(0);
    });
  }
});
