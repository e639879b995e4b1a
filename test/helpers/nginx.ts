/**
 * Debian's nginx as a real reverse proxy in tests: started with a config of the test's own on
 * loopback ports, in a temporary prefix (its own pid file, logs and temp folders), never the
 * system's. `.ci/run` installs it; where it is not installed, `nginxMissing` says why and the
 * tests that need it are skipped with that reason in the output.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const NGINX_CANDIDATES = ['/usr/sbin/nginx', 'nginx'];

function findNginx(): string | undefined {
  for (const bin of NGINX_CANDIDATES) {
    const r = spawnSync(bin, ['-v'], { encoding: 'utf8' });
    if (r.status === 0) return bin;
  }
  return undefined;
}

export const NGINX_BIN = findNginx();

/** why nginx tests cannot run here, or undefined when they can */
export const nginxMissing: string | undefined =
  NGINX_BIN === undefined ? "nginx is not installed (Debian package nginx-light or nginx; .ci/run installs it)" : undefined;

export interface NginxHandle {
  port: number;
  /** the access log so far (format: method, path, status) */
  accessLog(): string;
  stop(): Promise<void>;
}

/** a free loopback port (opened, then closed) */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function waitForPort(port: number, limitMs: number): Promise<void> {
  const until = Date.now() + limitMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nginx did not listen on 127.0.0.1:${port} within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Start nginx with `serverBlock` (the inside of one `server { … }`, without `listen`) on a free
 * loopback port. `upstreams` are written into the http block as given; `listenFlags` go on the
 * listen line (`ssl`).
 */
export async function startNginx(serverBlock: string, upstreams = '', listenFlags = ''): Promise<NginxHandle> {
  if (NGINX_BIN === undefined) throw new Error(nginxMissing);
  const dir = mkdtempSync(join(tmpdir(), 'lsm-nginx-'));
  for (const d of ['logs', 'client', 'proxy']) mkdirSync(join(dir, d));
  const port = await freePort();
  const conf = `
daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log ${dir}/logs/access.log lsm;
  log_format lsm '$request_method $request_uri $status';
  client_body_temp_path ${dir}/client;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/proxy;
  uwsgi_temp_path ${dir}/proxy;
  scgi_temp_path ${dir}/proxy;
  ${upstreams}
  server {
    listen 127.0.0.1:${port}${listenFlags ? ` ${listenFlags}` : ''};
    ${serverBlock}
  }
}
`;
  // log_format must come before access_log uses it
  const fixed = conf.replace(/(  access_log [^\n]+\n)(  log_format [^\n]+\n)/, '$2$1');
  writeFileSync(join(dir, 'nginx.conf'), fixed);
  const child: ChildProcess = spawn(NGINX_BIN, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'logs', 'error.log')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    await waitForPort(port, 10_000);
  } catch (error) {
    child.kill('SIGKILL');
    let log = '';
    try {
      log = readFileSync(join(dir, 'logs', 'error.log'), 'utf8');
    } catch {
      // no log
    }
    throw new Error(`${(error as Error).message}\n${stderr}\n${log}`);
  }
  return {
    port,
    accessLog: () => {
      try {
        return readFileSync(join(dir, 'logs', 'access.log'), 'utf8');
      } catch {
        return '';
      }
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3_000).unref();
      }),
  };
}
