/**
 * Hardware for the page's Hardware section. Detected only when the server runs on this machine
 * (the target URL's host is loopback or one of this machine's addresses): GPUs from nvidia-smi,
 * Intel xpu-smi or AMD rocm-smi where present (each run with a short timeout), CPU, RAM and OS from
 * the OS. The config's `hardware` block wins field by field; nothing is guessed, and `source` says
 * where each value came from.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import type { HardwareInfo } from '../shapes/result.js';

/** Runs a tool; resolves its stdout, or undefined when it is missing, fails or times out. */
export type ExecTool = (command: string, args: readonly string[]) => Promise<string | undefined>;

/** Limit for one hardware tool. */
export const TOOL_TIMEOUT_MS = 3000;

export const defaultExecTool: ExecTool = (command, args) =>
  new Promise((resolve) => {
    execFile(command, [...args], { timeout: TOOL_TIMEOUT_MS, maxBuffer: 1 << 20, windowsHide: true }, (error, stdout) => {
      resolve(error ? undefined : String(stdout));
    });
  });

type HardwareField = Exclude<keyof HardwareInfo, 'source'>;

export interface DetectedHardware {
  values: Partial<Omit<HardwareInfo, 'source'>>;
  /** per field: the tool or call it came from */
  from: Partial<Record<HardwareField, string>>;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '0.0.0.0', '::']);

/** True when `url`'s host is this machine (loopback, localhost, this host name or one of its addresses). */
export function isLocalTarget(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return false;
  }
  if (LOOPBACK.has(host) || host.startsWith('127.') || host.endsWith('.localhost')) return true;
  if (host === os.hostname().toLowerCase()) return true;
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.address.toLowerCase() === host) return true;
  }
  return false;
}

function gib(bytes: number): string {
  return `${Math.round(bytes / 2 ** 30)} GB`;
}

/** `141 GB` for one GPU, `128 GB (4 × 32 GB)` for several alike. */
function vramText(perGpuBytes: number[]): string | undefined {
  if (perGpuBytes.length === 0 || perGpuBytes.some((b) => !(b > 0))) return undefined;
  const total = perGpuBytes.reduce((a, b) => a + b, 0);
  if (perGpuBytes.length === 1) return gib(total);
  const same = perGpuBytes.every((b) => Math.abs(b - perGpuBytes[0]!) < 2 ** 28);
  return same ? `${gib(total)} (${perGpuBytes.length} × ${gib(perGpuBytes[0]!)})` : gib(total);
}

function gpuName(names: string[]): string | undefined {
  const unique = [...new Set(names.filter((n) => n !== ''))];
  return unique.length === 0 ? undefined : unique.join(' + ');
}

/** `nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits` (MiB). */
export function parseNvidiaSmi(text: string): Pick<HardwareInfo, 'gpu' | 'gpuCount' | 'vram'> | undefined {
  const rows = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .map((l) => {
      const i = l.lastIndexOf(',');
      return i < 0 ? { name: l, mib: NaN } : { name: l.slice(0, i).trim(), mib: Number(l.slice(i + 1).trim()) };
    });
  if (rows.length === 0) return undefined;
  return gpuSummary(rows.map((r) => r.name), rows.map((r) => r.mib * 2 ** 20));
}

/** GPU count, name and VRAM text from one name and one byte size per device. */
function gpuSummary(names: string[], bytes: number[]): Pick<HardwareInfo, 'gpu' | 'gpuCount' | 'vram'> {
  const out: Pick<HardwareInfo, 'gpu' | 'gpuCount' | 'vram'> = { gpuCount: names.length };
  const name = gpuName(names);
  if (name) out.gpu = name;
  const vram = vramText(bytes);
  if (vram) out.vram = vram;
  return out;
}

function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `xpu-smi discovery -j`: `{device_list: [{device_name, memory_physical_size_byte}]}`. */
export function parseXpuSmi(text: string): Pick<HardwareInfo, 'gpu' | 'gpuCount' | 'vram'> | undefined {
  const json = parseJsonOrUndefined(text);
  const list = (json as { device_list?: unknown } | undefined)?.device_list;
  if (!Array.isArray(list) || list.length === 0) return undefined;
  const devices = list.filter((d): d is Record<string, unknown> => d !== null && typeof d === 'object');
  return gpuSummary(
    devices.map((d) => String(d.device_name ?? '').trim()),
    devices.map((d) => Number(d.memory_physical_size_byte)),
  );
}

/** `rocm-smi --showproductname --showmeminfo vram --json`: `{card0: {"Card Series", "VRAM Total Memory (B)"}}`. */
export function parseRocmSmi(text: string): Pick<HardwareInfo, 'gpu' | 'gpuCount' | 'vram'> | undefined {
  const json = parseJsonOrUndefined(text);
  if (json === null || typeof json !== 'object') return undefined;
  const cards = Object.entries(json as Record<string, unknown>)
    .filter(([k, v]) => /^card\d+$/i.test(k) && v !== null && typeof v === 'object')
    .map(([, v]) => v as Record<string, unknown>);
  if (cards.length === 0) return undefined;
  const field = (card: Record<string, unknown>, names: string[]) => {
    for (const [k, v] of Object.entries(card)) if (names.includes(k.toLowerCase())) return String(v).trim();
    return '';
  };
  return gpuSummary(
    cards.map((c) => field(c, ['card series', 'card model', 'card sku'])),
    cards.map((c) => Number(field(c, ['vram total memory (b)']))),
  );
}

async function osName(): Promise<string> {
  const kernel = `${os.type()} ${os.release()}`;
  try {
    const text = await readFile('/etc/os-release', 'utf8');
    const m = /^PRETTY_NAME="?([^"\n]+)"?/m.exec(text);
    if (m?.[1]) return `${m[1]} (${kernel})`;
  } catch {
    // not Linux, or no os-release
  }
  return kernel;
}

/** This machine's hardware: GPUs from the first vendor tool that answers, then CPU, RAM, OS. */
export async function detectLocalHardware(exec: ExecTool = defaultExecTool): Promise<DetectedHardware> {
  const out: DetectedHardware = { values: {}, from: {} };
  const tools: Array<[string, string[], (t: string) => ReturnType<typeof parseNvidiaSmi>]> = [
    ['nvidia-smi', ['--query-gpu=name,memory.total', '--format=csv,noheader,nounits'], parseNvidiaSmi],
    ['xpu-smi', ['discovery', '-j'], parseXpuSmi],
    ['rocm-smi', ['--showproductname', '--showmeminfo', 'vram', '--json'], parseRocmSmi],
  ];
  const answers = await Promise.all(tools.map(([cmd, args]) => exec(cmd, args)));
  for (const [i, [cmd, , parse]] of tools.entries()) {
    const text = answers[i];
    const gpus = text === undefined ? undefined : parse(text);
    if (!gpus) continue;
    for (const [k, v] of Object.entries(gpus) as Array<[HardwareField, string | number]>) {
      (out.values as Record<string, unknown>)[k] = v;
      out.from[k] = cmd;
    }
    break;
  }
  const cpus = os.cpus();
  if (cpus[0]?.model) {
    out.values.cpu = `${cpus[0].model.trim()} (${cpus.length} threads)`;
    out.from.cpu = 'os';
  }
  out.values.ram = gib(os.totalmem());
  out.from.ram = 'os';
  out.values.os = await osName();
  out.from.os = 'os';
  return out;
}

/** Where a run's hardware comes from. */
export interface HardwareSources {
  /** the config's `hardware` block */
  config?: Partial<Omit<HardwareInfo, 'source'>>;
  /** detected on this machine (only when the server runs here) */
  detected?: DetectedHardware;
}

/** Config fields win one by one; detected ones fill the rest; `source` names both. Never guesses. */
export function mergeHardware({ config, detected }: HardwareSources): HardwareInfo {
  const fields: HardwareField[] = ['type', 'gpu', 'gpuCount', 'vram', 'cpu', 'ram', 'os'];
  const out: Record<string, unknown> = {};
  const fromConfig: string[] = [];
  const byTool = new Map<string, string[]>();
  for (const f of fields) {
    const c = config?.[f];
    if (c !== undefined && c !== '') {
      out[f] = c;
      fromConfig.push(f);
      continue;
    }
    const d = detected?.values[f];
    if (d !== undefined && d !== '') {
      out[f] = d;
      const tool = detected!.from[f] ?? 'detected';
      byTool.set(tool, [...(byTool.get(tool) ?? []), f]);
    }
  }
  const parts: string[] = [];
  if (fromConfig.length > 0) parts.push(`config (${fromConfig.join(', ')})`);
  if (byTool.size > 0) {
    parts.push(`detected on this machine (${[...byTool].map(([tool, fs]) => `${tool}: ${fs.join(', ')}`).join('; ')})`);
  }
  const source =
    parts.length > 0
      ? parts.join('; ')
      : 'not given: the server is not on this machine and the config has no hardware block (set target.hardware)';
  return { ...(out as Omit<HardwareInfo, 'source'>), source };
}
