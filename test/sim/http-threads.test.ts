/**
 * The llama.cpp personality serves `slots + 2` connections at once, as llama.cpp's cpp-httplib
 * does (one thread per open connection, idle ones included): a connection beyond them is accepted
 * and left unread until one of those closes. Until 2026-12-06 the sim paused such a socket after
 * node:http had it, which held nothing back (node:http reads below the socket's stream).
 */
import { connect, type Socket } from 'node:net';
import { get } from 'node:http';
import { afterEach, describe, expect, test } from 'vitest';
import { resolveSimProfile } from '../../src/sim/profiles.js';
import { createSimServer, type SimServer } from '../../src/sim/server.js';

/** GET path on a connection of its own; resolves with the status, or 'open' while no answer came within ms */
function getWithin(port: number, path: string, ms: number): Promise<number | 'open'> {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    setTimeout(() => {
      req.destroy();
      resolve('open');
    }, ms).unref();
  });
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s));
    s.on('error', reject);
  });
}

let sim: SimServer | undefined;
const held: Socket[] = [];
afterEach(async () => {
  for (const s of held.splice(0)) s.destroy();
  await sim?.close();
  sim = undefined;
});

async function llamacpp(slots: number): Promise<number> {
  sim = createSimServer(resolveSimProfile('tiny', { maxRunningRequests: slots }, 'llamacpp'));
  return Number(new URL(await sim.listen('127.0.0.1', 0)).port);
}

describe('llama.cpp personality: one HTTP thread per open connection, slots + 2 of them', () => {
  test('with every thread on an idle connection a request waits, and is served when one closes', async () => {
    const port = await llamacpp(2);
    for (let i = 0; i < 4; i++) held.push(await open(port));
    expect(await getWithin(port, '/slots', 400)).toBe('open');
    const answer = getWithin(port, '/slots', 5_000);
    await new Promise((r) => setTimeout(r, 100));
    held.shift()!.destroy();
    expect(await answer).toBe(200);
  });

  test('below the limit a request is served at once', async () => {
    const port = await llamacpp(2);
    for (let i = 0; i < 3; i++) held.push(await open(port));
    expect(await getWithin(port, '/slots', 5_000)).toBe(200);
  });

  test('a personality without the limit serves every connection', async () => {
    sim = createSimServer(resolveSimProfile('tiny', { maxRunningRequests: 2 }, 'vllm'));
    const port = Number(new URL(await sim.listen('127.0.0.1', 0)).port);
    for (let i = 0; i < 8; i++) held.push(await open(port));
    expect(await getWithin(port, '/health', 5_000)).toBe(200);
  });
});
